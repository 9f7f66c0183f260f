#!/usr/bin/env python3
"""Serve recorded enrichment answers over the Messages API wire format on 127.0.0.1.

    python scripts/enrich_replay.py --answers scripts/fixtures/enrich-corpus.jsonl \
        [--port 0] [--port-file FILE] [--report FILE]

Then, in another shell (any key; the model name labels the stored rows):

    ANTHROPIC_BASE_URL=http://127.0.0.1:PORT ANTHROPIC_API_KEY=recorded \
    BOOST_ENRICH_MODEL=recorded boost reindex --enrich --yes

A request is answered with the recording for `prompt_key(system, user)`
(scripts/recorded_llm.py); a prompt with no recording gets HTTP 404 (not retried, so the
batch is skipped and counted by boost) and is counted here. On SIGINT or SIGTERM (or when
stdin closes with --until-eof) the server stops and prints, and writes to --report, JSON
``{"requests", "answered", "unrecorded"}`` (distinct prompts with no recording): a faithful
replay has 0 unrecorded prompts.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from recorded_llm import load_answers, prompt_key  # noqa: E402


class Replay(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, answers: Dict[str, str]) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.answers = answers
        self.counts = {"requests": 0, "answered": 0, "unrecorded": 0}
        self.missing: set = set()  # distinct prompts with no recording
        self.lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    server: Replay
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        pass

    def _send(self, status: int, payload: Dict[str, Any]) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        try:
            body = json.loads(self.rfile.read(length).decode("utf-8"))
            system = body.get("system", "")
            user = body["messages"][0]["content"]
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            self._send(
                400,
                {
                    "type": "error",
                    "error": {"type": "invalid_request_error", "message": "bad body"},
                },
            )
            return
        key = prompt_key(system if isinstance(system, str) else "", str(user))
        with self.server.lock:
            self.server.counts["requests"] += 1
            answer = self.server.answers.get(key)
            if answer is None:
                self.server.missing.add(key)
                self.server.counts["unrecorded"] = len(self.server.missing)
            else:
                self.server.counts["answered"] += 1
        if answer is None:
            self._send(
                404,
                {
                    "type": "error",
                    "error": {
                        "type": "not_found_error",
                        "message": "no recorded answer for this prompt",
                    },
                },
            )
            return
        self._send(
            200,
            {
                "id": "msg_recorded",
                "type": "message",
                "role": "assistant",
                "model": str(body.get("model", "recorded")),
                "content": [{"type": "text", "text": answer}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": len(str(user)) // 4, "output_tokens": len(answer) // 4},
            },
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--answers", type=Path, nargs="+", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", type=Path, help="write the port here once listening")
    ap.add_argument("--report", type=Path, help="write the counts here on exit")
    ap.add_argument("--until-eof", action="store_true", help="stop when stdin closes")
    args = ap.parse_args()
    server = Replay(args.port, load_answers(list(args.answers)))
    port = server.server_address[1]
    if args.port_file:
        args.port_file.write_text(str(port), encoding="utf-8")
    print(
        f"replaying {len(server.answers)} recorded answers on http://127.0.0.1:{port}",
        file=sys.stderr,
        flush=True,
    )

    def stop(*_: Any) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if args.until_eof:
        threading.Thread(target=lambda: (sys.stdin.read(), stop()), daemon=True).start()
    server.serve_forever()
    server.server_close()
    report = json.dumps(server.counts)
    print(report, flush=True)
    if args.report:
        args.report.write_text(report + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
