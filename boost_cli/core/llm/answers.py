"""Finding the JSON in a model's answer: what the expansion and rerank parsers share.

Small models (a 3B model under Ollama, a CLI agent that chats) rarely answer with JSON
alone: they wrap it in prose or a code fence, leave a trailing comma, or quote an id with
spaces around it. These helpers find every JSON value in such an answer; what counts as
a valid pick or keyword stays the parsers' own rule.
"""

from __future__ import annotations

import json
from typing import Any, Iterator, List


def strip_trailing_commas(text: str) -> str:
    """Drop commas that directly precede ``]`` or ``}`` (outside strings), a common LLM slip."""
    out: List[str] = []
    in_string = False
    escaped = False
    i = 0
    while i < len(text):
        ch = text[i]
        if in_string:
            out.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
            out.append(ch)
        elif ch == ",":
            j = i + 1
            while j < len(text) and text[j] in " \t\r\n":
                j += 1
            if j >= len(text) or text[j] not in "]}":
                out.append(ch)
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def json_values(text: str) -> Iterator[Any]:
    """Every JSON object or array that starts somewhere in ``text``, outermost first.

    Prose, code fences and garbage around the JSON are skipped; values nested in an
    earlier one are yielded too (a wrapper object may hold the picks).
    """
    decoder = json.JSONDecoder()
    pos = 0
    while True:
        starts = [i for i in (text.find("{", pos), text.find("[", pos)) if i >= 0]
        if not starts:
            return
        start = min(starts)
        pos = start + 1
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        yield value
