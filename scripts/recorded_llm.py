"""An `llm.Client` that replays recorded answers, so the LLM path can be scored without an LLM.

An answers file is JSONL: ``{"key", "purpose", "id", "answer"}`` per prompt, where ``key``
is `prompt_key(system, user)` (sha256 of both texts), ``purpose`` is "expand" or
"rerank", ``id`` the query it was asked for (for people reading the file) and ``answer``
the model's reply text. A prompt with no recorded answer fails like an unreachable model
(the pipeline degrades as it would) and, when a ``pending`` file is given, is written
there — ``{"key", "purpose", "id", "system", "user"}`` — for a person or an agent to
answer from the prompt alone.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from boost_cli.core.llm import LLMFailure

NOT_RECORDED = "no recorded answer for this prompt"


def prompt_key(system: str, user: str) -> str:
    return hashlib.sha256(f"{system}\0{user}".encode()).hexdigest()


def load_answers(paths: List[Path]) -> Dict[str, str]:
    answers: Dict[str, str] = {}
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                answers[row["key"]] = row["answer"]
    return answers


class RecordedClient:
    """Answers from a recording; ``query_id`` names the query being run (set per query)."""

    backend = "recorded"
    model = "recorded"
    endpoint = "recorded answers"
    local = True  # nothing leaves the machine

    def __init__(self, answers: Dict[str, str], pending: Optional[Path] = None) -> None:
        self.answers = answers
        self.pending = pending
        self.query_id = ""
        self.asked: List[Dict[str, Any]] = []
        self.missing = 0

    def complete(
        self, system: str, user: str, *, max_tokens: int, deadline: float
    ) -> Union[str, LLMFailure]:
        key = prompt_key(system, user)
        purpose = "expand" if '{"keywords": [' in system else "rerank"
        self.asked.append({"key": key, "purpose": purpose, "id": self.query_id})
        if key in self.answers:
            return self.answers[key]
        self.missing += 1
        if self.pending is not None:
            row = {"key": key, "purpose": purpose, "id": self.query_id, "system": system}
            row["user"] = user
            with open(self.pending, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        return LLMFailure(NOT_RECORDED, self.backend)
