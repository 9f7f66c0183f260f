"""`boost mcp --http`: the real server as a subprocess on 127.0.0.1, spoken to as HTTP clients
do (raw `http.client`, and the official MCP SDK client where it is installed).

Each test starts ``python -m boost_cli mcp --http 127.0.0.1:0`` against a home with the
example registry tapped and indexed, reads the bound port from its ready line on stderr,
and checks the transport's rules: stateless JSON answers for both eras, header/body
validation, Host/Origin/token refusals with their status codes, caps and deadlines, a
reindex under load with no failed request, and SIGTERM finishing requests in flight.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

from boost_cli.core import mcp_http
from tests.helpers import ROOT, indexed_example, run_boost

TOKEN = "s3cret-token-for-tests-0123456789"
LEGACY = "2025-11-25"
MODERN = "2026-07-28"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": LEGACY,
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def _search(rid: int = 2, query: str = "test my React app") -> Dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": "boost_search", "arguments": {"query": query, "limit": 3}},
    }


class HttpMcp:
    """`boost mcp --http` as a child process."""

    def __init__(
        self, home: Path, *extra: str, env: Optional[Dict[str, str]] = None, host: str = "127.0.0.1"
    ) -> None:
        full = {**os.environ, "BOOST_HOME": str(home), **(env or {})}
        full["PATH"] = full.get("TEST_PATH", full["PATH"])
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "boost_cli", "mcp", "--http", f"{host}:0", *extra],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=full,
            cwd=str(ROOT),
            text=True,
        )
        self.log: List[str] = []
        assert self.proc.stderr is not None
        first = self.proc.stderr.readline()
        self.log.append(first)
        found = re.search(r"http://[^ ]+:(\d+)/mcp", first)
        if not found:
            self.proc.kill()
            raise AssertionError(f"no ready line: {first!r} {self.proc.stderr.read()!r}")
        self.port = int(found.group(1))
        self._drain = threading.Thread(target=self._read_log, daemon=True)
        self._drain.start()

    def _read_log(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)

    def post(
        self,
        body: Any,
        headers: Optional[Dict[str, str]] = None,
        *,
        raw: Optional[bytes] = None,
        timeout: float = 30,
    ) -> Tuple[int, Dict[str, str], Any]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        data = raw if raw is not None else json.dumps(body).encode()
        h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if isinstance(body, dict) and body.get("method") not in (None, "initialize"):
            h["MCP-Protocol-Version"] = LEGACY
        h.update(headers or {})
        try:
            conn.request("POST", "/mcp", body=data, headers=h)
            resp = conn.getresponse()
            text = resp.read()
            parsed = json.loads(text) if text else None
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, parsed
        finally:
            conn.close()

    def request(
        self, method: str, path: str = "/mcp", headers: Optional[Dict[str, str]] = None
    ) -> int:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request(method, path, headers=headers or {})
            resp = conn.getresponse()
            resp.read()
            return resp.status
        finally:
            conn.close()

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        finally:
            self._drain.join(timeout=5)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_example(tmp_path_factory.mktemp("http"))


@contextlib.contextmanager
def server(home: Path, *extra: str, env: Optional[Dict[str, str]] = None) -> Iterator[HttpMcp]:
    s = HttpMcp(home, *extra, env=env)
    try:
        yield s
    finally:
        s.stop()


def _modern(method: str, params: Optional[Dict[str, Any]] = None, rid: int = 7) -> Dict[str, Any]:
    p = dict(params or {})
    p["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": p}


def test_a_legacy_client_is_served_statelessly(home: Path) -> None:
    with server(home) as s:
        status, headers, body = s.post(INIT)
        assert status == 200 and body["result"]["protocolVersion"] == LEGACY
        assert "mcp-session-id" not in headers  # no session: any replica answers any request
        status, _, body = s.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert (status, body) == (202, None)
        # Without any initialize on this connection (another replica could have had it).
        status, _, body = s.post(_search())
        assert status == 200, body
        text = body["result"]["content"][0]["text"]
        assert text.startswith("1. example:jest-runner")
        status, _, body = s.post({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
        assert status == 200 and any(t["name"] == "boost_search" for t in body["result"]["tools"])
        assert s.request("GET") == 405
        assert s.request("DELETE") == 405
        assert s.request("GET", "/healthz") == 200
        assert s.request("GET", "/elsewhere") == 404
        # Same answer as the stdio transport gives for the same request.
        stdio = run_boost(
            ["mcp"], home, stdin="\n".join(json.dumps(m) for m in (INIT, _search())) + "\n"
        )
        replies = [json.loads(line) for line in stdio.stdout.splitlines()]
        assert replies[1]["result"] == body_of(s.post(_search())[2])


def body_of(reply: Dict[str, Any]) -> Dict[str, Any]:
    return reply["result"]


def test_versions_and_headers_are_checked(home: Path) -> None:
    with server(home) as s:
        status, _, body = s.post(_search(), {"MCP-Protocol-Version": "1999-01-01"})
        assert status == 400 and "unsupported MCP-Protocol-Version" in body["error"]["message"]
        status, _, body = s.post(_search(), {"MCP-Protocol-Version": ""})
        assert status == 400
        # A 2026-07-28 request: its headers must mirror its body.
        msg = _modern(
            "tools/call", {"name": "boost_search", "arguments": {"query": "pdf", "limit": 1}}
        )
        good = {
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": "tools/call",
            "Mcp-Name": "boost_search",
        }
        for bad, why in (
            ({**good, "Mcp-Method": "tools/list"}, "Mcp-Method"),
            ({**good, "Mcp-Name": "boost_list_taps"}, "Mcp-Name"),
            ({k: v for k, v in good.items() if k != "Mcp-Name"}, "Mcp-Name header is missing"),
            ({**good, "MCP-Protocol-Version": LEGACY}, "MCP-Protocol-Version"),
        ):
            status, _, body = s.post(msg, bad)
            assert status == 400, (bad, body)
            assert body["error"]["code"] == -32020 and why in body["error"]["message"]
        encoded = "=?base64?Ym9vc3Rfc2VhcmNo?="  # boost_search, in the spec's sentinel form
        status, _, body = s.post(msg, {**good, "Mcp-Name": encoded})
        assert status == 200, body


def test_batches_bad_bodies_and_caps(home: Path) -> None:
    with server(home) as s:
        status, _, body = s.post([INIT])
        assert status == 400 and "batches" in body["error"]["message"]
        status, _, body = s.post(None, raw=b"{not json")
        assert status == 400 and body["error"]["code"] == -32700
        status, _, _ = s.post(INIT, {"Content-Type": "text/plain"})
        assert status == 415
        status, _, _ = s.post(INIT, {"Accept": "text/html"})
        assert status == 406
        # A body over the cap is refused from its Content-Length, before it is read.
        sock = socket.create_connection(("127.0.0.1", s.port), timeout=10)
        sock.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {2 << 20}\r\n\r\n".encode()
        )
        assert sock.recv(4096).startswith(b"HTTP/1.1 413")
        sock.close()
        # A header line over the 8 KiB cap.
        status = s.request("POST", headers={"X-Big": "y" * 70000})
        assert status == 431
        # The server is still fine after all that.
        assert s.post(_search())[0] == 200


def test_dns_rebinding_is_refused(home: Path) -> None:
    with server(home) as s:
        for headers in (
            {"Origin": "http://evil.example"},
            {"Host": "evil.example"},
            {"Host": f"attacker.test:{s.port}"},
        ):
            status, _, body = s.post(_search(), headers)
            assert status == 403, headers
            assert "error" in body and "Traceback" not in json.dumps(body)
        assert s.post(_search(), {"Origin": f"http://localhost:{s.port}"})[0] == 200
        assert s.post(_search(), {"Host": f"localhost:{s.port}"})[0] == 200


def test_an_allowed_origin_and_host_can_be_added(home: Path) -> None:
    with server(
        home, "--allow-origin", "https://app.example", "--allow-host", "mcp.team.example"
    ) as s:
        assert s.post(_search(), {"Origin": "https://app.example"})[0] == 200
        assert s.post(_search(), {"Host": "mcp.team.example"})[0] == 200
        assert s.post(_search(), {"Origin": "https://other.example"})[0] == 403


def test_the_token_is_required_when_set(home: Path) -> None:
    with server(home, env={"BOOST_MCP_TOKEN": TOKEN}) as s:
        status, headers, _ = s.post(_search())
        assert status == 401 and headers["www-authenticate"].startswith("Bearer")
        assert s.post(_search(), {"Authorization": "Bearer wrong"})[0] == 401
        assert s.post(_search(), {"Authorization": f"Bearer {TOKEN}"})[0] == 200
        log = "".join(s.log)
    assert TOKEN not in log and "Authorization" not in log


def test_a_public_bind_without_a_token_is_refused(home: Path) -> None:
    r = run_boost(["mcp", "--http", "0.0.0.0:0"], home, timeout=30)
    assert r.returncode == 2
    assert "without a token" in r.stderr and "BOOST_MCP_TOKEN" in r.stderr
    r = run_boost(
        ["mcp", "--http", "0.0.0.0:0"], home, env={"BOOST_MCP_TOKEN": "short"}, timeout=30
    )
    assert r.returncode == 2 and "shorter than 16" in r.stderr
    r = run_boost(["mcp", "--http", "localhost:notaport"], home, timeout=30)
    assert r.returncode == 2 and "invalid --http address" in r.stderr


def test_a_slow_client_is_cut_off_and_others_are_served(home: Path) -> None:
    with server(home, "--read-timeout", "1") as s:
        sock = socket.create_connection(("127.0.0.1", s.port), timeout=10)
        sock.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"
        )
        assert s.post(_search())[0] == 200  # served while the slow one dawdles
        t0 = time.monotonic()
        data = sock.recv(4096)
        assert time.monotonic() - t0 < 8
        assert data == b"" or data.startswith(b"HTTP/1.1 408")
        sock.close()


def test_a_request_past_its_deadline_gets_an_error(home: Path, tmp_path: Path) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    gh = fake / "gh"
    gh.write_text("#!/bin/sh\nsleep 6\necho '[]'\n")
    gh.chmod(0o755)
    env = {"TEST_PATH": f"{fake}{os.pathsep}{os.environ['PATH']}"}
    with server(home, "--deadline", "1", env=env) as s:
        call = {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "tools/call",
            "params": {"name": "boost_discover_github", "arguments": {"query": "pdf"}},
        }
        t0 = time.monotonic()
        status, _, body = s.post(call)
        assert time.monotonic() - t0 < 10
        assert "longer than 1 s" in body["error"]["message"]
        assert "Traceback" not in json.dumps(body)


def _hammer(s: HttpMcp, stop: threading.Event, results: List[Tuple[int, str]]) -> None:
    while not stop.is_set():
        try:
            status, _, body = s.post(_search(), timeout=60)
            text = (
                body["result"]["content"][0]["text"]
                if status == 200 and "result" in body
                else json.dumps(body)
            )
            results.append((status, text.split("\n", 1)[0]))
        except (OSError, http.client.HTTPException) as exc:
            results.append((0, repr(exc)))


def test_a_reindex_under_load_drops_no_request(home: Path) -> None:
    with server(home) as s:
        want = s.post(_search())[2]["result"]["content"][0]["text"].split("\n", 1)[0]
        stop = threading.Event()
        results: List[Tuple[int, str]] = []
        threads = [threading.Thread(target=_hammer, args=(s, stop, results)) for _ in range(4)]
        for t in threads:
            t.start()
        try:
            for _ in range(3):
                r = run_boost(["reindex", "--force"], home)
                assert r.returncode == 0, r.stderr
        finally:
            stop.set()
            for t in threads:
                t.join(timeout=60)
    assert len(results) > 10
    bad = [r for r in results if r != (200, want)]
    assert bad == []


def test_sigterm_finishes_requests_in_flight(home: Path, tmp_path: Path) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    gh = fake / "gh"
    gh.write_text("#!/bin/sh\nsleep 1.5\necho '[]'\n")
    gh.chmod(0o755)
    s = HttpMcp(home, env={"TEST_PATH": f"{fake}{os.pathsep}{os.environ['PATH']}"})
    call = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tools/call",
        "params": {"name": "boost_discover_github", "arguments": {"query": "pdf"}},
    }
    out: List[Any] = []
    worker = threading.Thread(target=lambda: out.append(s.post(call)))
    worker.start()
    time.sleep(0.5)  # the request is in flight, its gh sleeping
    s.proc.send_signal(signal.SIGTERM)
    worker.join(timeout=30)
    code = s.proc.wait(timeout=30)  # one SIGTERM: it stops by itself once the request is done
    assert code == 0
    status, _, body = out[0]
    assert status == 200 and "result" in body, body
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", s.port), timeout=2).close()


def test_the_official_sdk_client_over_http(home: Path) -> None:
    pytest.importorskip("mcp")
    import asyncio

    from mcp import Client

    async def run(url: str, mode: str) -> Tuple[str, List[str], str]:
        async with Client(url, mode=mode) as c:  # type: ignore[arg-type]
            tools = await c.list_tools()
            r = await c.call_tool("boost_search", {"query": "test my React app", "limit": 2})
            return str(c.protocol_version), [t.name for t in tools.tools], r.content[0].text  # type: ignore[union-attr]

    with server(home) as s:
        url = f"http://127.0.0.1:{s.port}/mcp"
        version, tools, text = asyncio.run(run(url, "legacy"))
        assert version == LEGACY and "boost_search" in tools
        assert text.startswith("1. example:jest-runner")
        version, tools, text = asyncio.run(run(url, "auto"))
        assert version == MODERN  # probed with a modern request, no fallback
        assert text.startswith("1. example:jest-runner")


def test_modern_requests_over_http(home: Path) -> None:
    """2026-07-28 on HTTP: discover, an unknown version (-32022, 400), an unknown method
    (404), a skill read through resources/read with its URI mirrored in Mcp-Name."""
    with server(home) as s:

        def post(msg: Dict[str, Any], name: Optional[str] = None) -> Tuple[int, Any]:
            h = {
                "MCP-Protocol-Version": msg["params"]["_meta"][
                    "io.modelcontextprotocol/protocolVersion"
                ],
                "Mcp-Method": msg["method"],
            }
            if name is not None:
                h["Mcp-Name"] = name
            status, _, body = s.post(msg, h)
            return status, body

        status, body = post(_modern("server/discover"))
        assert status == 200 and MODERN in body["result"]["supportedVersions"]
        odd = _modern("tools/list")
        odd["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "2099-01-01"
        status, body = post(odd)
        assert status == 400 and body["error"]["code"] == -32022
        assert MODERN in body["error"]["data"]["supported"]
        status, body = post(_modern("no/such/method"))
        assert status == 404 and body["error"]["code"] == -32601
        status, body = post(
            _modern(
                "tools/call",
                {"name": "boost_search", "arguments": {"query": "test my React app", "limit": 3}},
            ),
            "boost_search",
        )
        assert status == 200, body
        uri = next(h["uri"] for h in body["result"]["structuredContent"]["results"] if h.get("uri"))
        status, body = post(_modern("resources/read", {"uri": uri}), uri)
        assert status == 200, body
        assert body["result"]["contents"][0]["text"].startswith("---")
        status, body = post(_modern("resources/read", {"uri": uri}), "skill://other/x/SKILL.md")
        assert status == 400 and body["error"]["code"] == -32020


def test_route_is_pure_and_keeps_no_state() -> None:
    seen: List[Any] = []

    def respond(message: Any, legacy: Optional[str]) -> Optional[Dict[str, Any]]:
        seen.append(legacy)
        return (
            None if "id" not in message else {"jsonrpc": "2.0", "id": message["id"], "result": {}}
        )

    settings = mcp_http.HttpSettings()
    r = mcp_http.route(_search(), {}, respond, settings)
    assert r.status == 200 and seen[-1] == mcp_http.DEFAULT_LEGACY_VERSION
    r = mcp_http.route(_search(), {"mcp-protocol-version": "2025-06-18"}, respond, settings)
    assert seen[-1] == "2025-06-18"
    r = mcp_http.route(INIT, {}, respond, settings)
    assert seen[-1] is None
    assert mcp_http.route({"jsonrpc": "2.0", "method": "x"}, {}, respond, settings).status == 202
    assert mcp_http.decode_header_value("=?base64?aGk=?=") == "hi"
    assert mcp_http.decode_header_value("=?base64?***?=") is None
    assert mcp_http.parse_listen("8080") == ("127.0.0.1", 8080)
    assert mcp_http.parse_listen("[::1]:9") == ("::1", 9)
    assert mcp_http.is_loopback("127.0.0.5") and not mcp_http.is_loopback("10.0.0.1")
