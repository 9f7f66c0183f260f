"""Enrichment answers for the Messages API stub: what a model might say of each item of a
batch prompt (`prompt.build_prompt`), so `boost reindex --enrich` runs end to end."""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Mapping, Optional

from tests.anthropic_stub import RecordedRequest, StubReply

# Plain-language requests for a few example-registry skills, in words their text lacks.
TASKS: Dict[str, List[str]] = {
    "a11y-audit": [
        "make my page usable for blind people",
        "check my site works with a screen reader",
        "people who cannot use a mouse cannot use my site",
        "is the text readable for people with poor eyesight",
        "audit the page for accessibility",
        "a blind customer says she cannot buy anything on the site",
    ],
    "gh-actions-ci": [
        "the build is red and I do not know why",
        "my ci build keeps failing",
        "fix my failing ci pipeline",
        "github actions workflow keeps failing",
        "set up a pipeline that runs the tests on every push",
        "make the ci faster",
        "continuous integration broke after a merge",
    ],
}


def batch_items(request: RecordedRequest) -> List[Dict[str, Any]]:
    """The items of the enrichment prompt ``request`` carries ([] for another prompt)."""
    body = request.body if isinstance(request.body, dict) else {}
    if "describe AI-agent skills" not in str(body.get("system", "")):
        return []
    user = body["messages"][0]["content"]
    return [json.loads(line) for line in user.splitlines()[1:] if line.strip()]


def answer_for(item: Mapping[str, Any]) -> Dict[str, Any]:
    name = str(item["name"])
    words = name.replace("-", " ")
    tasks = TASKS.get(name) or [
        f"help me with {words}",
        f"I need {words} for my project",
        f"how do I do {words}",
        f"{words} step by step",
        f"set up {words}",
        f"automate {words}",
    ]
    return {"id": item["id"], "about": f"Helps with {words} tasks.", "tasks": tasks}


def enrich_reply(
    edit: Optional[Callable[[Dict[str, Any]], Dict[str, Any]]] = None,
) -> Callable[[RecordedRequest], StubReply]:
    """A responder answering every item of each batch (``edit`` may change each answer)."""

    def respond(request: RecordedRequest) -> StubReply:
        items = batch_items(request)
        answers = [answer_for(it) for it in items]
        if edit is not None:
            answers = [edit(a) for a in answers]
        return StubReply(text=json.dumps({"items": answers}))

    return respond
