"""`boost mcp --http`'s connections, spoken to through raw sockets (issue 32, items 14-18).

The real server runs as a subprocess (`HttpMcp` from test_mcp_http). Each test holds a
connection the way a proxy or a hostile client does: a refused request with a body and
then a good one on the same kept-alive socket; clients that drip header bytes; pings on a
kept-alive connection; SIGTERM while kept-alive clients keep sending; Content-Length
values and header lines at the edge of the rules. The framing itself (`http_wire`) is
tested with literals at the end.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

from boost_cli.core import http_wire
from tests.helpers import indexed_example
from tests.test_mcp_http import LEGACY, TOKEN, HttpMcp, _search, server

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_example(tmp_path_factory.mktemp("conn"))


def _post(
    body: Any,
    extra: Optional[Dict[str, str]] = None,
    *,
    path: str = "/mcp",
    raw: Optional[bytes] = None,
    close: bool = False,
) -> bytes:
    data = raw if raw is not None else json.dumps(body).encode()
    fields = {
        "Host": "127.0.0.1",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": LEGACY,
        "Content-Length": str(len(data)),
        **(extra or {}),
    }
    if close:
        fields["Connection"] = "close"
    head = f"POST {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields.items())
    return head.encode() + b"\r\n" + data


class Reader:
    """HTTP/1.1 responses read one by one from a kept-alive socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = b""

    def _fill(self) -> None:
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError(f"closed by the server; unread: {self.buf!r}")
        self.buf += data

    def response(self) -> Tuple[int, Dict[str, str], Any]:
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        fields = {k.lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
        length = int(fields.get("content-length", "0"))
        while len(self.buf) < length:
            self._fill()
        body, self.buf = self.buf[:length], self.buf[length:]
        return status, fields, json.loads(body) if body else None

    def closed(self) -> bool:
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True


def _connect(port: int, timeout: float = 15) -> Tuple[socket.socket, Reader]:
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    return sock, Reader(sock)


def _is_search_answer(reply: Tuple[int, Dict[str, str], Any]) -> bool:
    status, _, body = reply
    return status == 200 and body["id"] == 2 and body["result"]["isError"] is False


# ------------------------------------------------------------------ 14: refused bodies


def test_a_refused_requests_body_is_never_read_as_the_next_request(home: Path) -> None:
    """Each refusal comes with a body; the good request after it on the same kept-alive
    socket gets its own answer (before: the body was parsed as a request)."""
    # A body that is itself a request line: left unread, it would be answered as one.
    sneaky = b'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n{"jsonrpc":"2.0"}'
    refusals = [
        (401, {"Authorization": "Bearer wrong-token-wrong-token"}, "/mcp"),
        (403, {"Origin": "http://evil.example"}, "/mcp"),
        (404, {}, "/elsewhere"),
        (406, {"Accept": "text/html"}, "/mcp"),
        (415, {"Content-Type": "text/plain"}, "/mcp"),
    ]
    good = {"Authorization": f"Bearer {TOKEN}"}
    with server(home, env={"BOOST_MCP_TOKEN": TOKEN}) as s:
        sock, reader = _connect(s.port)
        with sock:
            for status, extra, path in refusals:
                fields = {**good, **extra}
                sock.sendall(_post(None, fields, path=path, raw=sneaky))
                got = reader.response()
                assert got[0] == status, (status, got)
                sock.sendall(_post(_search(), good))
                assert _is_search_answer(reader.response()), status
            # A GET with a body (framed by its Content-Length) is read whole too.
            sock.sendall(
                b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello"
            )
            assert reader.response()[0] == 200
            sock.sendall(_post(_search(), good))
            assert _is_search_answer(reader.response())


def test_a_body_that_cannot_be_framed_closes_the_connection(home: Path) -> None:
    with server(home) as s:
        for fields, status in (
            ({"Transfer-Encoding": "chunked"}, 411),
            ({"Content-Length": str(2 << 20)}, 413),
        ):
            sock, reader = _connect(s.port)
            with sock:
                head = _post(_search(), fields).split(b"\r\n\r\n")[0] + b"\r\n\r\n"
                if "Transfer-Encoding" in fields:
                    head = head.replace(b"Content-Length: ", b"X-Was-Length: ")
                sock.sendall(head)
                got = reader.response()
                assert got[0] == status and got[1]["connection"] == "close", got
                assert reader.closed()


def test_pipelined_requests_are_answered_in_order(home: Path) -> None:
    with server(home) as s:
        sock, reader = _connect(s.port)
        with sock:
            sock.sendall(
                _post(None, {"Content-Type": "text/plain"}, raw=b"x" * 100)
                + _post(_search())
                + _post(PING, close=True)
            )
            assert reader.response()[0] == 415
            assert _is_search_answer(reader.response())
            status, fields, body = reader.response()
            assert (status, body["id"], fields["connection"]) == (200, 1, "close")
            assert reader.closed()


def test_expect_100_continue_gets_its_interim_answer(home: Path) -> None:
    with server(home) as s:
        sock, reader = _connect(s.port)
        with sock:
            request = _post(_search(), {"Expect": "100-continue"})
            head, body = request.split(b"\r\n\r\n", 1)
            sock.sendall(head + b"\r\n\r\n")
            while b"\r\n\r\n" not in reader.buf:
                reader._fill()
            assert reader.buf.startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
            reader.buf = reader.buf[len(b"HTTP/1.1 100 Continue\r\n\r\n") :]
            sock.sendall(body)
            assert _is_search_answer(reader.response())


@pytest.mark.slow
def test_a_refusal_behind_nginx_leaves_the_next_users_served(home: Path, tmp_path: Path) -> None:
    """The documented front (`keepalive 32` to boost): one refused request with a body,
    then six users' requests through the same upstream connection (before: 6 of 6 hung
    and got 408)."""
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.path.exists(nginx):
        if os.geteuid() != 0 or not shutil.which("apt-get"):
            pytest.skip("nginx is not installed")
        subprocess.run(["apt-get", "install", "-y", "nginx"], capture_output=True, timeout=600)
        if not os.path.exists(nginx):
            pytest.skip("nginx could not be installed")
    with server(home) as s:
        front = _free_port()
        prefix = tmp_path / "nginx"
        prefix.mkdir()
        conf = prefix / "nginx.conf"
        conf.write_text(_NGINX.format(prefix=prefix, port=front, upstream=s.port))
        subprocess.run([nginx, "-c", str(conf), "-p", str(prefix)], check=True, timeout=30)
        try:
            sock, reader = _connect(front)
            with sock:
                # nginx keeps the upstream connection; the refused request's body follows.
                sneaky = b'{"jsonrpc":"2.0","id":5,"method":"ping"}' * 20
                sock.sendall(_post(None, {"Content-Type": "text/plain"}, raw=sneaky))
                assert reader.response()[0] == 415
            for _ in range(6):
                t0 = time.monotonic()
                sock, reader = _connect(front)
                with sock:
                    sock.sendall(_post(_search()))
                    assert _is_search_answer(reader.response())
                assert time.monotonic() - t0 < 5
        finally:
            subprocess.run(
                [nginx, "-c", str(conf), "-p", str(prefix), "-s", "stop"], timeout=30, check=False
            )


_NGINX = """
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 64; }}
http {{
  access_log off;
  client_body_temp_path {prefix}/body;
  proxy_temp_path {prefix}/proxy;
  fastcgi_temp_path {prefix}/fastcgi;
  uwsgi_temp_path {prefix}/uwsgi;
  scgi_temp_path {prefix}/scgi;
  upstream boost {{ server 127.0.0.1:{upstream}; keepalive 32; }}
  server {{
    listen 127.0.0.1:{port};
    location /mcp {{
      proxy_pass http://boost;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host 127.0.0.1;
      proxy_buffering off;
      proxy_read_timeout 20s;
    }}
  }}
}}
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# ------------------------------------------------------------------ 15: slowloris


def test_clients_dripping_headers_hold_no_worker(home: Path) -> None:
    """48 connections that send a header byte every 0.4 s: a real request is answered
    at once, and each dripping one gets 408 once its request is past --read-timeout,
    however often it sends (before: every worker held, nobody answered)."""
    with server(home, "--read-timeout", "3") as s:
        drips = [socket.create_connection(("127.0.0.1", s.port), timeout=10) for _ in range(48)]
        text = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 400
        stop = threading.Event()
        cut: List[bytes] = []

        def drip() -> None:
            for i in range(len(text)):
                for sock in list(drips):
                    try:
                        sock.sendall(text[i : i + 1])
                    except OSError:
                        drips.remove(sock)
                if stop.wait(0.4) or not drips:
                    return

        dripper = threading.Thread(target=drip)
        dripper.start()
        try:
            time.sleep(1.0)  # every dripping connection is open and mid-header
            for _ in range(3):
                t0 = time.monotonic()
                status, _, body = s.post(_search(), timeout=10)
                assert status == 200 and body["result"]["isError"] is False
                assert time.monotonic() - t0 < 2.0
            t0 = time.monotonic()
            for sock in list(drips):
                sock.settimeout(max(0.5, 8 - (time.monotonic() - t0)))
                try:
                    cut.append(sock.recv(4096))
                except OSError as exc:
                    cut.append(repr(exc).encode())
        finally:
            stop.set()
            dripper.join(timeout=10)
            for sock in drips:
                sock.close()
        assert cut and all(c.startswith(b"HTTP/1.1 408") for c in cut), cut[:3]


# ------------------------------------------------------------------ 16: one write


def test_a_kept_alive_ping_waits_for_no_delayed_ack(home: Path) -> None:
    """Pings on one kept-alive connection: answered in a few ms (before: each waited for
    the client's delayed ACK, ~40 ms, as the reply went out in two writes with Nagle on)."""
    with server(home) as s:
        sock, reader = _connect(s.port)
        with sock:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            times = []
            for _ in range(25):
                t0 = time.perf_counter()
                sock.sendall(_post(PING))
                assert reader.response()[0] == 200
                times.append(time.perf_counter() - t0)
        assert statistics.median(times) < 0.02, times


# ------------------------------------------------------------------ 17: SIGTERM


def test_sigterm_closes_kept_alive_connections_that_keep_sending(home: Path) -> None:
    """Four clients ping without pause on kept-alive connections; one SIGTERM: the server
    answers what it has read with Connection: close and exits 0 at once (before: it went
    on serving them and exited after 42 s)."""
    s = HttpMcp(home)
    stop = threading.Event()
    outcomes: List[str] = []

    def client() -> None:
        try:
            sock, reader = _connect(s.port, timeout=20)
        except OSError as exc:
            outcomes.append(f"connect {exc!r}")
            return
        with sock:
            while not stop.is_set():
                try:
                    sock.sendall(_post(PING))
                    status, fields, _ = reader.response()
                except OSError:
                    outcomes.append("closed")
                    return
                if fields.get("connection") == "close":
                    outcomes.append(f"close {status}")
                    return

    clients = [threading.Thread(target=client) for _ in range(4)]
    for t in clients:
        t.start()
    time.sleep(1.0)
    t0 = time.monotonic()
    s.proc.send_signal(signal.SIGTERM)
    try:
        code = s.proc.wait(timeout=15)
    finally:
        stop.set()
        for t in clients:
            t.join(timeout=30)
        s.stop()
    assert code == 0
    assert time.monotonic() - t0 < 5
    assert len(outcomes) == 4 and all(o in ("closed", "close 200") for o in outcomes), outcomes


# ------------------------------------------------------------------ 18: framing rules


@pytest.mark.parametrize("value", ["+45", "4_5", "0x2d", "٤٥", "45, 45", "-1", "4 5"])
def test_content_length_is_digits_only(home: Path, value: str) -> None:
    with server(home) as s:
        sock, reader = _connect(s.port)
        with sock:
            data = _post(PING).replace(b"Content-Length: ", b"X-Len: ")
            head, body = data.split(b"\r\n\r\n", 1)
            sock.sendall(head + f"\r\nContent-Length: {value}\r\n\r\n".encode() + body)
            status, fields, reply = reader.response()
            assert status == 400 and "Content-Length" in reply["error"]["message"], reply
            assert fields["connection"] == "close"


def test_content_length_with_spaces_around_it_is_the_number(home: Path) -> None:
    with server(home) as s:
        sock, reader = _connect(s.port)
        with sock:
            data = _post(PING)
            sock.sendall(data.replace(b"Content-Length: ", b"Content-Length: \t "))
            assert reader.response()[:1] == (200,)


def test_a_header_line_is_at_most_8_kib(home: Path) -> None:
    with server(home) as s:
        sock, reader = _connect(s.port)
        with sock:
            fits = "X-Big: " + "y" * (8192 - len("X-Big: "))
            sock.sendall(_post(PING, {"X-Big": fits[len("X-Big: ") :]}))
            assert reader.response()[0] == 200
            sock.sendall(_post(PING, {"X-Big": "y" * 8200}))
            status, fields, _ = reader.response()
            assert status == 431 and fields["connection"] == "close"


# ------------------------------------------------------------------ http_wire, pure


def test_head_end_finds_the_empty_line_and_caps_lines() -> None:
    assert http_wire.head_end(b"GET / HTTP/1.1\r\nHost: a\r\n") == -1
    assert http_wire.head_end(b"GET / HTTP/1.1\r\nHost: a\r\n\r\nbody") == 27
    assert http_wire.head_end(b"GET / HTTP/1.1\nHost: a\n\nbody") == 24
    with pytest.raises(http_wire.WireError) as err:
        http_wire.head_end(b"GET /" + b"a" * 9000)  # the request line, not yet complete
    assert err.value.status == 414
    with pytest.raises(http_wire.WireError) as err:
        http_wire.head_end(b"GET / HTTP/1.1\r\nX: " + b"a" * 8190 + b"\r\n")
    assert err.value.status == 431
    many = b"GET / HTTP/1.1\r\n" + b"X: " + b"a" * 8000 + b"\r\n"
    with pytest.raises(http_wire.WireError) as err:
        http_wire.head_end(many * 9)
    assert err.value.status == 431
    assert http_wire.skip_empty_lines(b"\r\n\r\nGET") == 4


def test_parse_head_and_body_length() -> None:
    head = http_wire.parse_head(b"POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length:  12 \r\n\r\n")
    assert (head.method, head.target, head.get("host"), head.keep_alive) == (
        "POST",
        "/mcp",
        "a",
        True,
    )
    assert http_wire.body_length(head) == 12
    twice = b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n"
    assert http_wire.body_length(http_wire.parse_head(twice)) == 3
    assert not http_wire.parse_head(b"GET / HTTP/1.0\r\n\r\n").keep_alive
    assert http_wire.parse_head(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").keep_alive
    assert not http_wire.parse_head(
        b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
    ).keep_alive
    for raw, status in (
        (b"GET / HTTP/2.0\r\n\r\n", 505),
        (b"GET /\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\n\r\n", 400),  # no Host
        (b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400),  # space before the colon
        (b"GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", 400),
        (b"G(T / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    ):
        with pytest.raises(http_wire.WireError) as err:
            http_wire.parse_head(raw)
        assert err.value.status == status, raw
    for fields, status in (
        (b"Content-Length: 3\r\nContent-Length: 4\r\n", 400),
        (b"Transfer-Encoding: chunked\r\n", 411),
        (b"Content-Length: +3\r\n", 400),
    ):
        head = http_wire.parse_head(b"POST / HTTP/1.1\r\nHost: a\r\n" + fields + b"\r\n")
        with pytest.raises(http_wire.WireError) as err:
            http_wire.body_length(head)
        assert err.value.status == status, fields


def test_a_response_is_one_buffer() -> None:
    data = http_wire.encode_response(
        200, [("Content-Type", "application/json")], b"{}", close=True, date="D"
    )
    assert data == (
        b"HTTP/1.1 200 OK\r\nServer: boost-mcp\r\nDate: D\r\nContent-Type: application/json\r\n"
        b"Content-Length: 2\r\nConnection: close\r\n\r\n{}"
    )


def test_bodies_being_read_are_capped_in_total() -> None:
    """In process: past ``max_buffered`` declared bytes being read, a request gets 503."""
    from boost_cli.core.http_serve import ConnServer, Response

    conns = ConnServer(
        ("127.0.0.1", 0),
        lambda request: Response(200, (), request.body),
        lambda status, message, client: Response(status, (), message.encode()),
        max_body=100,
        max_buffered=150,
        read_seconds=5,
    )
    runner = threading.Thread(target=conns.serve_forever)
    runner.start()
    try:
        head = b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n"
        first, r1 = _connect(conns.port)
        second, r2 = _connect(conns.port)
        with first, second:
            first.sendall(head + b"x" * 10)  # 100 bytes declared, being read
            time.sleep(0.3)
            second.sendall(head)  # 200 declared in all: over the cap
            second_answer = b""
            while b"\r\n\r\n" not in second_answer:
                second_answer += second.recv(4096)
            assert second_answer.startswith(b"HTTP/1.1 503") and b"Retry-After: 1" in second_answer
            first.sendall(b"x" * 90)
            while b"x" * 100 not in r1.buf:
                r1._fill()
            assert r1.buf.startswith(b"HTTP/1.1 200")
            # Once the first body is read, the budget is free again.
            third, r3 = _connect(conns.port)
            with third:
                third.sendall(head + b"y" * 100)
                while b"y" * 100 not in r3.buf:
                    r3._fill()
                assert r3.buf.startswith(b"HTTP/1.1 200")
    finally:
        conns.shutdown()
        runner.join(timeout=10)
        conns.stop(1)
    assert conns.open_connections() == 0


def test_clients_that_never_read_their_answers_hold_no_worker() -> None:
    """In process: ten clients ask for an 8 MB answer and never read it; the rest of the
    answer waits in the reader, not in a worker, so another client is answered at once
    and the stalled ones are dropped after --read-timeout."""
    from boost_cli.core.http_serve import ConnServer, Response

    big = b"z" * (8 << 20)
    conns = ConnServer(
        ("127.0.0.1", 0),
        lambda request: Response(200, (), big if request.head.target == "/big" else b"ok"),
        lambda status, message, client: Response(status, (), message.encode()),
        workers=2,
        read_seconds=2,
    )
    runner = threading.Thread(target=conns.serve_forever)
    runner.start()
    stalled = []
    try:
        for _ in range(10):
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect(("127.0.0.1", conns.port))
            sock.sendall(b"GET /big HTTP/1.1\r\nHost: a\r\n\r\n")
            stalled.append(sock)
        time.sleep(0.5)
        t0 = time.monotonic()
        sock, reader = _connect(conns.port)
        with sock:
            sock.sendall(b"GET /small HTTP/1.1\r\nHost: a\r\n\r\n")
            while b"\r\n\r\nok" not in reader.buf:
                reader._fill()
        assert time.monotonic() - t0 < 1.5
        deadline = time.monotonic() + 10
        while conns.open_connections() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert conns.open_connections() == 0  # the stalled ones were dropped
    finally:
        for sock in stalled:
            sock.close()
        conns.shutdown()
        runner.join(timeout=10)
        conns.stop(1)


def test_the_server_in_process_answers_and_refuses() -> None:
    """`HttpServer` with a stand-in handler, in this process (so coverage sees it): each
    status on one kept-alive socket, then a stop with a request half sent."""
    from boost_cli.core.mcp_http import HttpServer, HttpSettings

    lines: List[str] = []

    def respond(message: Any, legacy: Optional[str]) -> Optional[Dict[str, Any]]:
        if "id" not in message:
            return None
        return {"jsonrpc": "2.0", "id": message["id"], "result": {"legacy": legacy}}

    srv = HttpServer(
        respond, HttpSettings(port=0, token=TOKEN, read_seconds=1, log_sink=lines.append)
    )
    runner = threading.Thread(target=srv.serve_forever)
    runner.start()
    auth = {"Authorization": f"Bearer {TOKEN}"}
    try:
        sock, reader = _connect(srv.port)
        with sock:
            for data, status in (
                (_post(PING, auth), 200),
                (_post({"jsonrpc": "2.0", "method": "notifications/x"}, auth), 202),
                (_post(PING), 401),
                (_post(PING, {**auth, "Host": "evil.example"}), 403),
                (_post(PING, {**auth, "Origin": "http://evil.example"}), 403),
                (_post(None, auth, raw=b"{nope"), 400),
                (_post(None, auth, raw=b"").replace(b"Content-Length: 0\r\n", b""), 411),
                (b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 200),
                (b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 405),
                (b"GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 404),
                (b"DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 405),
                (b"PATCH /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 501),
            ):
                sock.sendall(data)
                got = reader.response()
                assert got[0] == status, (data, got)
            sock.sendall(b"HEAD /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            while b"\r\n\r\n" not in reader.buf:
                reader._fill()
            assert reader.buf.startswith(b"HTTP/1.1 501") and reader.buf.endswith(b"\r\n\r\n")
        late, late_reader = _connect(srv.port)
        with late:
            late.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # half a head
            time.sleep(0.3)
            srv.shutdown()
            runner.join(timeout=10)
            assert late_reader.closed()  # not read on after the stop
    finally:
        srv.shutdown()
        runner.join(timeout=10)
        srv.stop(1)
    assert not runner.is_alive()
    assert any(" 401 " in line for line in lines) and TOKEN not in "".join(lines)
