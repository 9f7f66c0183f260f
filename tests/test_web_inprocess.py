"""The team page in this process (`mcp_http.HttpServer` with `webapp.Pages` in a thread),
so the page code is measured by coverage too; tests/test_web_http.py drives the real
`boost mcp --http` subprocess the same way."""

from __future__ import annotations

import http.client
import json
import threading
from pathlib import Path
from typing import Dict, Iterator, Optional, Tuple
from urllib.parse import urlencode

import pytest

from boost_cli.core import mcp_http, retrieval, skillmap, webapp
from tests.helpers import indexed_example
from tests.test_mcp_http import TOKEN


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_example(tmp_path_factory.mktemp("webin"))


def _serve(home: Path, monkeypatch: pytest.MonkeyPatch, token: Optional[str]) -> Iterator[int]:
    monkeypatch.setenv("BOOST_HOME", str(home))
    pages = webapp.Pages(retrieval.Engines(), skillmap.Holder(), token, clock=lambda: 1e9)
    lines = []
    settings = mcp_http.HttpSettings(port=0, token=token, log_sink=lines.append)
    server = mcp_http.HttpServer(lambda m, v: None, settings, pages)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.port
    finally:
        server.shutdown()
        server.stop(5)
        thread.join(5)


@pytest.fixture()
def port(indexed: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    yield from _serve(indexed, monkeypatch, None)


@pytest.fixture()
def token_port(indexed: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    yield from _serve(indexed, monkeypatch, TOKEN)


def call(
    port: int,
    path: str,
    *,
    method: str = "GET",
    form: Optional[Dict[str, str]] = None,
    headers: Optional[Dict[str, str]] = None,
) -> Tuple[int, Dict[str, str], str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    h = dict(headers or {})
    body = None
    if form is not None:
        body = urlencode(form)
        h.setdefault("Content-Type", "application/x-www-form-urlencoded")
    try:
        conn.request(method, path, body=body, headers=h)
        r = conn.getresponse()
        fields = {k.lower(): v for k, v in r.getheaders()}
        cookies = [v for k, v in r.getheaders() if k.lower() == "set-cookie"]
        if cookies:
            fields["set-cookie"] = cookies[0]
        return r.status, fields, r.read().decode()
    finally:
        conn.close()


def test_pages_and_views(port: int) -> None:
    status, _, page = call(port, "/")
    assert status == 200 and "Describe a task" in page
    status, _, page = call(port, "/?q=qqqqqqqqqq")
    assert status == 200 and "No matches" in page
    status, _, page = call(port, "/?q=pdf&kind=bogus&tap=example")
    assert status == 200 and "example:pdf-forms" in page
    status, _, page = call(port, "/skill?id=example:pdf-forms")
    assert status == 200 and "boost install example:pdf-forms --agent claude" in page
    data = json.loads(call(port, "/skill?id=example:pdf-forms&format=json")[2])
    if len(data["files"]) > 1:
        other = [f for f in data["files"] if f != "SKILL.md"][0]
        status, _, page = call(
            port, "/skill?" + urlencode({"id": "example:pdf-forms", "file": other})
        )
        assert status == 200 and 'aria-current="page"' in page
    status, _, page = call(port, "/skill?id=example:pdf-forms&file=../../etc/passwd")
    assert status == 400 and 'role="alert"' in page
    assert call(port, "/skill")[0] == 400
    assert call(port, "/skill?id=nope:nope")[0] == 404
    status, _, page = call(port, "/taps")
    assert status == 200 and '<th scope="row">example</th>' in page
    assert json.loads(call(port, "/taps?format=json")[2])["taps"][0]["age"]
    assert call(port, "/favicon.ico")[0] == 204
    assert call(port, "/static/boost.js")[0] == 200
    # No sign-in without a token: the form sends you home; sign-out only clears.
    assert call(port, "/signin")[0] == 303
    assert call(port, "/signout", method="POST", form={})[0] == 303
    assert call(port, "/", method="POST", form={})[0] == 405
    assert call(port, "/", method="PUT")[0] == 405


def test_sign_in_flow(token_port: int) -> None:
    p = token_port
    assert call(p, "/taps")[0] == 303
    assert call(p, "/taps", method="POST", form={})[0] == 401
    status, h, page = call(p, "/signin")
    csrf = h["set-cookie"].split(";")[0].split("=", 1)[1]
    jar = {"Cookie": f"boost_signin={csrf}"}
    assert (
        call(
            p,
            "/signin",
            method="POST",
            form={"csrf": csrf},
            headers={**jar, "Content-Type": "text/plain"},
        )[0]
        == 400
    )
    assert (
        call(p, "/signin", method="POST", form={"csrf": csrf, "token": "x"}, headers=jar)[0] == 401
    )
    status, h, _ = call(
        p, "/signin", method="POST", form={"csrf": csrf, "token": TOKEN}, headers=jar
    )
    assert status == 303
    session = {"Cookie": h["set-cookie"].split(";")[0]}
    status, _, page = call(p, "/taps", headers=session)
    assert status == 200 and "Sign out" in page
    assert call(p, "/signout", headers=session)[0] == 405
    assert call(p, "/signout", method="POST", form={"csrf": "no"}, headers=session)[0] == 403
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    status, _, page = call(p, "/taps", headers=bearer)
    assert status == 200 and "Sign out" not in page


def test_age_reads_iso_and_epoch() -> None:
    assert webapp._age("2001-09-09T01:46:40Z", 1e9 + 7200) == "2 h ago"
    assert webapp._age(1e9, 1e9 + 30) == "just now"
    assert webapp._age(1e9, 1e9 + 3 * 86400) == "3 d ago"
    assert webapp._age("yesterday", 1e9) == ""
