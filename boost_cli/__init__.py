"""boost: find the right AI-agent skill for a task written in plain language."""

__version__ = "0.1.0"
