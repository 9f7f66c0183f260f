"""Index-time enrichment: an LLM describes each distinct entry text once, in users' words.

`prompt` is the pure part (items, batches, the prompt); the rest of the package runs the
calls, validates the answers and keeps the store (see docs/enrich.md).
"""
