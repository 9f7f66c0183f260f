"""`boost mcp` end to end: the real server as a subprocess, spoken to over its stdio pipes.

Each test starts `python -m boost_cli mcp` against a BOOST_HOME where the example registry
is tapped (as ``example``) and indexed, and talks newline-delimited JSON-RPC to it like an
MCP client does: every reply is read with a timeout, every stdout line must be a JSON-RPC
message, and closing stdin must end the server with exit status 0.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pytest

from boost_cli.core.discover import INSTALL_HINT
from tests.helpers import EXAMPLES, ROOT, commit_all, make_repo, run_boost, skill

FAKEBIN = ROOT / "tests" / "fakebin"
TOOLS = [
    "boost_search",
    "boost_get_skill",
    "boost_list_taps",
    "boost_discover_github",
    "boost_install",
]
HIT_KEYS = {"id", "name", "tap", "kind", "description", "score", "file", "url"}
REPLY_TIMEOUT = 20.0
#: A pdf-forms of its own in a second tap, so the bare name 'pdf-forms' is ambiguous.
OTHER_PDF_FORMS = skill("pdf-forms", "Print a stack of paper forms", "Feed the printer.")


def _path_without_llm() -> str:
    """PATH for the server: the interpreter's folder and the system's, never a `claude`."""
    return os.pathsep.join([os.path.dirname(sys.executable), "/usr/bin", "/bin"])


class McpProcess:
    """`boost mcp` as a child process with a line-oriented JSON-RPC client around it."""

    def __init__(self, home: Path, env: Optional[Dict[str, str]] = None) -> None:
        full_env = {**os.environ, "BOOST_HOME": str(home), "PATH": _path_without_llm()}
        full_env.update(env or {})
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "boost_cli", "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=full_env,
            cwd=str(ROOT),
        )
        self.lines: List[bytes] = []  # every stdout line, for the hygiene checks
        self._replies: queue.Queue[Optional[bytes]] = queue.Queue()
        self._next_id = 0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)
            self._replies.put(line)
        self._replies.put(None)  # EOF

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        self.send_raw(json.dumps(message).encode("utf-8") + b"\n")

    def receive(self, timeout: float = REPLY_TIMEOUT) -> Dict[str, Any]:
        try:
            line = self._replies.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no reply within {timeout} s") from None
        assert line is not None, f"the server closed stdout; stderr: {self.stderr_text()}"
        reply = json.loads(line)
        assert isinstance(reply, dict) and reply.get("jsonrpc") == "2.0", line
        return reply

    def nothing_pending(self) -> bool:
        return self._replies.empty()

    def request(self, method: str, params: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        self._next_id += 1
        message: Dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        reply = self.receive()
        assert reply["id"] == self._next_id, reply
        return reply

    def initialize(self, version: str = "2025-11-25") -> Dict[str, Any]:
        reply = self.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "test_mcp_server", "version": "1"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def call(self, tool: str, arguments: Any) -> Dict[str, Any]:
        return self.request("tools/call", {"name": tool, "arguments": arguments})

    def call_result(self, tool: str, arguments: Any) -> Dict[str, Any]:
        reply = self.call(tool, arguments)
        assert "result" in reply, reply
        result: Dict[str, Any] = reply["result"]
        return result

    def close(self, timeout: float = 20) -> int:
        """Close stdin (EOF) and wait for the exit status."""
        assert self.proc.stdin is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        rc = self.proc.wait(timeout=timeout)
        self._reader.join(timeout=5)
        return rc

    def stderr_text(self) -> str:
        if self.proc.poll() is None or self.proc.stderr is None:
            return "(still running)"
        return self.proc.stderr.read().decode("utf-8", errors="replace")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def _text(result: Dict[str, Any]) -> str:
    content = result["content"]
    # the text, then a resource_link per hit that is a served skill (boost_search)
    assert [c["type"] for c in content[:1]] == ["text"], content
    assert all(c["type"] == "resource_link" and c["uri"] for c in content[1:]), content
    text: str = content[0]["text"]
    return text


def _tap_and_index(home: Path, source: Path, name: str) -> None:
    r = run_boost(["tap", str(source), "--name", name], home)
    assert r.returncode == 0, r.stderr
    r = run_boost(["reindex"], home)
    assert r.returncode == 0, r.stderr


@pytest.fixture(scope="module")
def indexed_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with the example registry (``example``) and a small ``other`` tap, indexed."""
    base = tmp_path_factory.mktemp("mcp-server")
    example = base / "example-registry"
    shutil.copytree(EXAMPLES, example)
    make_repo(example)
    other = make_repo(base / "other-registry", {"skills/pdf-forms/SKILL.md": OTHER_PDF_FORMS})
    home = base / "home"
    r = run_boost(["tap", str(other), "--name", "other"], home)
    assert r.returncode == 0, r.stderr
    _tap_and_index(home, example, "example")
    return home


@pytest.fixture
def server(indexed_home: Path) -> Iterator[McpProcess]:
    proc = McpProcess(indexed_home)
    yield proc
    proc.kill()


def _assert_clean_exit(proc: McpProcess) -> None:
    assert proc.close() == 0
    err = proc.stderr_text()
    assert "Traceback" not in err, err
    for line in proc.lines:  # stdout carries JSON-RPC messages only, one per line
        assert line.endswith(b"\n")
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0" and ("result" in message or "error" in message)


# --------------------------------------------------------------------------- lifecycle


@pytest.mark.parametrize(
    "asked, agreed",
    [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2024-11-05", "2024-11-05"),
        ("1999-01-01", "2025-11-25"),
    ],
)
def test_initialize_negotiates_the_protocol_version(
    indexed_home: Path, asked: str, agreed: str
) -> None:
    proc = McpProcess(indexed_home)
    try:
        result = proc.initialize(asked)["result"]
        assert result["protocolVersion"] == agreed
        assert result["serverInfo"]["name"] == "boost"
        assert result["capabilities"] == {
            "tools": {"listChanged": False},
            "resources": {"listChanged": False, "subscribe": False},
        }
        assert "boost_search" in result["instructions"]
        _assert_clean_exit(proc)
    finally:
        proc.kill()


def test_initialized_notification_gets_no_reply_and_tools_are_listed(server: McpProcess) -> None:
    server.initialize()
    reply = server.request("ping")  # the first line after the notification is the ping's
    assert reply["result"] == {}
    tools = server.request("tools/list")["result"]["tools"]
    assert [t["name"] for t in tools] == TOOLS
    by_name = {t["name"]: t for t in tools}
    for t in tools:
        assert t["description"].strip()
        assert t["inputSchema"]["type"] == "object"
        assert t["inputSchema"]["additionalProperties"] is False
    search = by_name["boost_search"]
    assert search["inputSchema"]["required"] == ["query"]
    assert set(search["inputSchema"]["properties"]) == {
        "query",
        "limit",
        "kind",
        "keywords",
        "tap",
        "rerank",
    }
    out = search["outputSchema"]
    assert out["type"] == "object" and set(out["required"]) == {"query", "engine", "results"}
    assert set(out["properties"]["results"]["items"]["required"]) == HIT_KEYS | {"tap", "name"}
    assert by_name["boost_get_skill"]["inputSchema"]["required"] == ["name"]
    assert by_name["boost_list_taps"]["inputSchema"]["properties"] == {}
    assert by_name["boost_discover_github"]["inputSchema"]["required"] == ["query"]
    _assert_clean_exit(server)


# --------------------------------------------------------------------------- tools


def test_search_ranks_jest_runner_first_with_a_full_record(server: McpProcess) -> None:
    server.initialize()
    result = server.call_result("boost_search", {"query": "test my React app"})
    assert result["isError"] is False
    data = result["structuredContent"]
    assert data["query"] == "test my React app"
    assert data["engine"] == "bm25"
    results = data["results"]
    assert results[0]["id"] == "example:jest-runner"
    assert 1 <= len(results) <= 8
    for r in results:
        assert set(r) >= HIT_KEYS, r
        assert r["kind"] in ("skill", "rule", "workflow")
        assert isinstance(r["score"], float)
        assert r.get("why", "x") and r.get("why") != r["description"]  # no echo of it
        assert Path(r["file"]).is_file() and r["url"].startswith("file://")
    assert _text(result).splitlines()[0].startswith("1. example:jest-runner [skill] — ")
    # filters and limit reach the pipeline
    only = server.call_result(
        "boost_search", {"query": "testing", "kind": "workflow", "limit": 2, "tap": "example"}
    )
    rows = only["structuredContent"]["results"]
    assert 1 <= len(rows) <= 2 and {r["kind"] for r in rows} == {"workflow"}
    _assert_clean_exit(server)


def test_get_skill_returns_the_file_text(server: McpProcess, indexed_home: Path) -> None:
    server.initialize()
    result = server.call_result("boost_get_skill", {"name": "example:jest-runner"})
    assert result["isError"] is False
    text = _text(result)
    path = indexed_home / "repos" / "example" / "skills" / "jest-runner" / "SKILL.md"
    head = f"# example:jest-runner [skill] — file: {path}\n\n"
    assert text == head + path.read_text(encoding="utf-8")
    by_path = server.call_result("boost_get_skill", {"name": "example:skills/jest-runner/SKILL.md"})
    assert _text(by_path) == text
    _assert_clean_exit(server)


@pytest.mark.parametrize(
    "name, fragment",
    [
        ("pdf-forms", "'pdf-forms' matches 2 entries: example:pdf-forms, other:pdf-forms"),
        ("no-such-skill", "no skill, rule or workflow named 'no-such-skill'"),
        ("nowhere:jest-runner", "no tap named 'nowhere'"),
    ],
)
def test_get_skill_unknown_or_ambiguous_is_a_one_line_tool_error(
    server: McpProcess, name: str, fragment: str
) -> None:
    server.initialize()
    result = server.call_result("boost_get_skill", {"name": name})
    assert result["isError"] is True
    text = _text(result)
    assert "\n" not in text and fragment in text and " — " in text
    _assert_clean_exit(server)


def test_list_taps_shows_both_taps_indexed(server: McpProcess) -> None:
    server.initialize()
    result = server.call_result("boost_list_taps", {})
    taps = result["structuredContent"]["taps"]
    assert [t["name"] for t in taps] == ["example", "other"]
    assert {t["index"] for t in taps} == {"indexed"}
    assert taps[0]["counts"] == {"skill": 17, "rule": 7, "workflow": 5}
    lines = _text(result).splitlines()
    assert lines[0].startswith("example @ ")
    assert lines[0].endswith(": 17 skills, 7 rules, 5 workflows (indexed)")
    _assert_clean_exit(server)


def test_discover_github_through_a_fake_gh(indexed_home: Path, tmp_path: Path) -> None:
    argv_file = tmp_path / "gh-argv.json"
    path = os.pathsep.join([str(FAKEBIN), _path_without_llm()])
    proc = McpProcess(indexed_home, {"PATH": path, "FAKE_GH_ARGV": str(argv_file)})
    try:
        proc.initialize()
        result = proc.call_result("boost_discover_github", {"query": "react testing", "limit": 2})
        assert result["isError"] is False
        repos = result["structuredContent"]["repositories"]
        assert [r["repo"] for r in repos] == ["acme/agent-skills", "jdoe/claude-skills"]
        assert repos[0]["hits"] == 4 and repos[0]["url"] == "https://github.com/acme/agent-skills"
        lines = _text(result).splitlines()
        assert lines[0] == "acme/agent-skills (4 SKILL.md) https://github.com/acme/agent-skills"
        assert lines[-1] == "Tap one with: boost tap OWNER/REPO"
        argv = json.loads(argv_file.read_text())
        assert argv[:2] == ["search", "code"] and argv[-2:] == ["react", "testing"]
        _assert_clean_exit(proc)
    finally:
        proc.kill()


def test_discover_github_without_gh_is_a_tool_error_with_the_install_hint(
    indexed_home: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    proc = McpProcess(indexed_home, {"PATH": str(empty)})
    try:
        proc.initialize()
        result = proc.call_result("boost_discover_github", {"query": "react testing"})
        assert result["isError"] is True
        assert _text(result) == f"the GitHub CLI (gh) is not on PATH — {INSTALL_HINT}"
        _assert_clean_exit(proc)
    finally:
        proc.kill()


# --------------------------------------------------------------------------- bad input


BAD_SEARCH_ARGS = [
    ({"query": 5}, "query: expected string, got integer"),
    ({}, "query: required property is missing"),
    ({"query": "tests", "limit": 0}, "limit:"),
    ({"query": "tests", "colour": "red"}, "colour"),
]


@pytest.mark.parametrize("arguments, fragment", BAD_SEARCH_ARGS)
def test_invalid_arguments_are_a_tool_error_from_2025_11_25(
    server: McpProcess, arguments: Dict[str, Any], fragment: str
) -> None:
    server.initialize("2025-11-25")
    result = server.call_result("boost_search", arguments)
    assert result["isError"] is True and "structuredContent" not in result
    text = _text(result)
    assert text.startswith("invalid arguments for tool 'boost_search': ") and fragment in text
    assert server.request("ping")["result"] == {}
    _assert_clean_exit(server)


@pytest.mark.parametrize("arguments, fragment", BAD_SEARCH_ARGS)
def test_invalid_arguments_are_invalid_params_before_2025_11_25(
    server: McpProcess, arguments: Dict[str, Any], fragment: str
) -> None:
    server.initialize("2025-06-18")
    reply = server.call("boost_search", arguments)
    assert reply["error"]["code"] == -32602
    assert fragment in reply["error"]["message"]
    _assert_clean_exit(server)


def test_a_malformed_line_then_a_valid_request_are_both_answered(server: McpProcess) -> None:
    server.initialize()
    server.send_raw(b'{"jsonrpc": "2.0", "id": 99, "method": \n')
    error = server.receive()
    assert error["id"] is None and error["error"]["code"] == -32700
    server.send_raw(b"\n   \n")  # blank lines are skipped, not answered
    result = server.call_result("boost_list_taps", {})
    assert result["isError"] is False
    unknown = server.call("no_such_tool", {})
    assert unknown["error"]["code"] == -32602 and "boost_search" in unknown["error"]["message"]
    assert server.proc.poll() is None
    _assert_clean_exit(server)


# --------------------------------------------------------------------------- homes


def test_search_without_taps_is_a_tool_error_with_the_defaults_hint(tmp_path: Path) -> None:
    proc = McpProcess(tmp_path / "empty-home")
    try:
        proc.initialize()
        result = proc.call_result("boost_search", {"query": "test my React app"})
        assert result["isError"] is True
        assert "'boost tap --defaults'" in _text(result)
        listed = proc.call_result("boost_list_taps", {})
        assert listed["isError"] is False and listed["structuredContent"] == {"taps": []}
        assert "boost tap --defaults" in _text(listed)
        got = proc.call_result("boost_get_skill", {"name": "jest-runner"})
        assert got["isError"] is True and "'boost tap --defaults'" in _text(got)
        _assert_clean_exit(proc)
    finally:
        proc.kill()


def test_a_warm_server_sees_a_replaced_index_without_restart(tmp_path: Path) -> None:
    origin = tmp_path / "origin"
    shutil.copytree(EXAMPLES, origin)
    make_repo(origin)
    home = tmp_path / "home"
    _tap_and_index(home, origin, "example")
    query = {"query": "knit a woollen scarf with cable stitches", "limit": 3}
    proc = McpProcess(home)
    try:
        proc.initialize()
        before = proc.call_result("boost_search", query)["structuredContent"]["results"]
        assert "example:scarf-knitting" not in [r["id"] for r in before]
        new = skill(
            "scarf-knitting",
            "Knit a woollen scarf: cast on, cable stitches, blocking.",
            "Cable stitches cross groups of loops; knit the scarf in wool.",
        )
        (origin / "skills" / "scarf-knitting").mkdir()
        (origin / "skills" / "scarf-knitting" / "SKILL.md").write_text(new, encoding="utf-8")
        commit_all(origin, "add scarf-knitting")
        for args in (["update"], ["reindex", "--force"]):  # from outside the server
            r = run_boost(args, home)
            assert r.returncode == 0, r.stderr
        after = proc.call_result("boost_search", query)["structuredContent"]
        assert after["results"][0]["id"] == "example:scarf-knitting"
        assert after["notes"] == []  # the fresh index was read, not refreshed in the server
        text = _text(proc.call_result("boost_get_skill", {"name": "scarf-knitting"}))
        assert new in text
        # "Knit a woollen scarf: cast on" is no YAML value: readable, but no MCP skill
        assert text.endswith("a plain value holds ': ' (quote it)).")
        _assert_clean_exit(proc)
    finally:
        proc.kill()


def test_agent_keywords_find_the_skill_the_task_words_miss(tmp_path: Path) -> None:
    """A gap-style task: its words match a decoy; the caller's keywords find the skill."""
    repo = make_repo(
        tmp_path / "gap-registry",
        {
            "skills/blind-spot/SKILL.md": skill(
                "blind-spot-camera",
                "Watch a car's blind spot camera so people can see who is beside them",
                "Make the camera feed usable: people see the blind spot on the website dashboard.",
            ),
            "skills/wcag/SKILL.md": skill(
                "wcag-audit",
                "Accessibility audit against WCAG: screen reader labels, aria roles, contrast",
                "Run axe and a screen reader over each page; fix aria roles and focus order.",
            ),
        },
    )
    home = tmp_path / "home"
    _tap_and_index(home, repo, "gap")
    server = McpProcess(home)
    try:
        server.initialize()
        task = "make my website usable by blind people"
        plain = server.call_result("boost_search", {"query": task})["structuredContent"]
        assert [r["id"] for r in plain["results"]][:1] == ["gap:blind-spot-camera"]
        assert plain["keywords"] == []
        # Keyword terms weigh 0.7 each (the task's own 1): five of them outweigh the decoy.
        keywords = ["accessibility", "screen reader", "WCAG", "aria", "contrast"]
        result = server.call_result("boost_search", {"query": task, "keywords": keywords})
        data = result["structuredContent"]
        assert [r["id"] for r in data["results"]][0] == "gap:wcag-audit"
        assert data["keywords"] == keywords
        assert "keywords used: accessibility, screen reader, WCAG, aria, contrast" in _text(result)
        bad = server.call("boost_search", {"query": task, "keywords": ["x"] * 13})
        assert bad["result"]["isError"] is True
        assert "at most 12 items" in _text(bad["result"])
        _assert_clean_exit(server)
    finally:
        server.kill()


def test_tool_description_and_instructions_teach_keywords(server: McpProcess) -> None:
    init = server.initialize()
    assert "keywords" in init["result"]["instructions"]
    tools = {t["name"]: t for t in server.request("tools/list")["result"]["tools"]}
    search = tools["boost_search"]
    assert "keywords" in search["description"] and "Example" in search["description"]
    prop = search["inputSchema"]["properties"]["keywords"]
    assert prop["type"] == "array" and prop["maxItems"] == 12 and "e.g." in prop["description"]
    _assert_clean_exit(server)


def test_a_rerank_asked_for_and_impossible_is_a_note(server: McpProcess) -> None:
    server.initialize()
    result = server.call_result("boost_search", {"query": "test my React app", "rerank": True})
    data = result["structuredContent"]
    assert data["results"][0]["id"] == "example:jest-runner"  # BM25 order stands
    assert any(n.startswith("rerank skipped: no LLM available") for n in data["notes"])
    plain = server.call_result("boost_search", {"query": "test my React app"})
    assert plain["structuredContent"]["notes"] == []  # not asked: nothing to say
    _assert_clean_exit(server)


def test_a_client_that_never_reads_stderr_still_gets_every_answer(tmp_path: Path) -> None:
    """Issue 10 item 13: tools that keep failing write diagnostics to stderr; a client that
    never reads it (the pipe fills at 64 KB) must still get every answer."""
    hook = tmp_path / "hook"
    hook.mkdir()
    # A bug stand-in: every boost_get_skill raises with a 2 KB message, so each failure
    # logs a 2 KB+ traceback; 300 of them are ten times what the pipe holds.
    (hook / "sitecustomize.py").write_text(
        "from boost_cli.core import lookup\n\n\n"
        "def _broken(name):\n"
        "    raise RuntimeError('a bug ' + 'x' * 2000)\n\n\n"
        "lookup.read = _broken\n"
    )
    # sitecustomize runs before `python -m` puts the working folder on sys.path: the hook
    # can import boost_cli only when ROOT is on PYTHONPATH too (boost need not be installed).
    server = McpProcess(
        tmp_path / "home", env={"PYTHONPATH": os.pathsep.join([str(hook), str(ROOT)])}
    )
    try:
        server.initialize()
        calls = 300
        for i in range(calls):
            server.send(
                {
                    "jsonrpc": "2.0",
                    "id": 1000 + i,
                    "method": "tools/call",
                    "params": {"name": "boost_get_skill", "arguments": {"name": "x"}},
                }
            )
        server.send({"jsonrpc": "2.0", "id": "last", "method": "ping"})
        for i in range(calls):
            reply = server.receive(timeout=10)
            assert reply["id"] == 1000 + i
            assert reply["result"]["isError"] is True
            assert "failed unexpectedly" in _text(reply["result"])
        assert server.receive(timeout=10) == {"jsonrpc": "2.0", "id": "last", "result": {}}
        # Once the client reads stderr, what was dropped is counted there.
        assert server.proc.stderr is not None
        chunks: List[bytes] = []
        reader = threading.Thread(target=lambda: chunks.append(server.proc.stderr.read()))
        reader.start()
        time.sleep(0.5)
        assert server.call("boost_get_skill", {"name": "x"})["result"]["isError"] is True
        time.sleep(0.5)
        assert server.close() == 0
        reader.join(timeout=10)
        log = b"".join(chunks).decode("utf-8", "replace")
        assert "RuntimeError: a bug" in log  # the diagnostics that fit were kept
        assert "log lines dropped: nobody read stderr" in log
    finally:
        server.kill()


def test_the_stderr_log_drops_rather_than_blocks() -> None:
    """Item 13, the handler alone: a pipe nobody reads never blocks `emit`."""
    import logging

    from boost_cli.core.mcp_log import StderrLog

    read_fd, write_fd = os.pipe()
    handler = StderrLog(write_fd, capacity=4)
    logger = logging.getLogger("boost.test.stderrlog")
    logger.propagate = False
    logger.addHandler(handler)
    try:
        start = time.monotonic()
        for i in range(5000):
            logger.error("line %d %s", i, "y" * 200)  # ~1 MB: 16 times a pipe's buffer
        assert time.monotonic() - start < 5
        assert handler.dropped > 0
        with os.fdopen(read_fd, "rb") as reader:
            os.set_blocking(read_fd, False)
            seen = b""
            deadline = time.monotonic() + 10
            while b"log lines dropped" not in seen and time.monotonic() < deadline:
                with contextlib.suppress(BlockingIOError):
                    seen += reader.read() or b""
                time.sleep(0.01)
        assert b"line 0 " in seen and b"log lines dropped: nobody read stderr" in seen
    finally:
        logger.removeHandler(handler)


def test_the_numpy_ranking_answers_as_the_python_one(indexed_home: Path) -> None:
    # `boost mcp` imports numpy at start when it is installed and ranks with it
    # (`index/vectorized.py`); every answer must be the one the pure-Python ranking gives.
    pytest.importorskip("numpy")
    queries = [
        {"query": "test my React app"},
        {"query": "fill in pdf forms", "keywords": ["pdf", "form fields", "acroform"]},
        {"query": "testing", "kind": "workflow", "limit": 2},
        {"query": "write release notes and a changelog for the next version", "limit": 20},
    ]
    answers = {}
    for mode in ("1", "0"):
        proc = McpProcess(indexed_home, env={"BOOST_NUMPY_RANKING": mode})
        try:
            proc.initialize()
            answers[mode] = [
                proc.call_result("boost_search", q)["structuredContent"] for q in queries
            ]
            _assert_clean_exit(proc)
        finally:
            proc.kill()
    assert all(a["results"] for a in answers["1"])
    assert answers["1"] == answers["0"]
