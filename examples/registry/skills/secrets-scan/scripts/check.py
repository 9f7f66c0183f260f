"""Flag likely secrets in a directory tree: prints file:line: kind, exits 1 on findings."""

from __future__ import annotations

import re
import sys
from pathlib import Path

PATTERNS = {
    "aws-access-key-id": re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"),
    "github-token": re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
    "slack-token": re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b"),
    "private-key": re.compile(r"-----BEGIN (?:RSA |EC |OPENSSH |DSA )?PRIVATE KEY-----"),
    "password-assignment": re.compile(
        r"""(?i)\b(password|passwd|secret|api_?key)\s*[:=]\s*["'][^"'\s]{8,}["']"""
    ),
}
SKIP_DIRS = {".git", "node_modules", ".venv", "venv", "dist", "build", "__pycache__"}
MAX_BYTES = 1_000_000


def scan(root: Path) -> list[tuple[Path, int, str]]:
    findings = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or SKIP_DIRS.intersection(path.parts):
            continue
        if path.stat().st_size > MAX_BYTES:
            continue
        text = path.read_text(encoding="utf-8", errors="ignore")
        for lineno, line in enumerate(text.splitlines(), start=1):
            for kind, pattern in PATTERNS.items():
                if pattern.search(line):
                    findings.append((path, lineno, kind))
    return findings


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(".")
    findings = scan(root)
    for path, lineno, kind in findings:
        print(f"{path}:{lineno}: {kind}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
