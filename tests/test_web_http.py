"""The team page over raw HTTP: the real `boost mcp --http` as a subprocess, spoken to
with `http.client` (headers, cookies, CSRF, Host/Origin, caps, the JSON views, escaping).
The browser's view of the same pages is tests/test_web_browser.py."""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import socket
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Set, Tuple
from urllib.parse import urlencode

import pytest

from boost_cli.core import webapp
from tests.helpers import indexed_example
from tests.test_mcp_http import TOKEN, HttpMcp, _search
from tests.web_fixtures import hostile_home

Reply = Tuple[int, Dict[str, str], bytes, list]
SAFE_TAGS = set(
    [
        "html",
        "head",
        "meta",
        "title",
        "link",
        "script",
        "body",
        "a",
        "header",
        "nav",
        "main",
        "footer",
        "form",
        "input",
        "button",
        "section",
        "h1",
        "h2",
        "p",
        "ol",
        "ul",
        "li",
        "span",
        "code",
        "pre",
        "dl",
        "dt",
        "dd",
        "table",
        "caption",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "label",
        "select",
        "option",
        "div",
        "kbd",
        "br",
    ]
)


class Tags(HTMLParser):
    """Every element, attribute name, link and script source a browser would see."""

    def __init__(self) -> None:
        super().__init__()
        self.names: Set[str] = set()
        self.attrs: Set[str] = set()
        self.hrefs: List[str] = []
        self.scripts: List[str] = []

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        self.names.add(tag)
        for k, v in attrs:
            self.attrs.add(k)
            if k in ("href", "src", "action") and tag != "script":
                self.hrefs.append(v or "")
        if tag == "script":
            self.scripts.append(dict(attrs).get("src") or "")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_example(tmp_path_factory.mktemp("web"))


@contextlib.contextmanager
def server(home: Path, *extra: str, token: Optional[str] = None) -> Iterator[HttpMcp]:
    s = HttpMcp(home, *extra, env={"BOOST_MCP_TOKEN": token} if token else None)
    try:
        yield s
    finally:
        s.stop()


def get(
    s: HttpMcp,
    path: str,
    headers: Optional[Dict[str, str]] = None,
    *,
    method: str = "GET",
    body: Optional[bytes] = None,
) -> Reply:
    conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        data = resp.read()
        cookies = [v for k, v in resp.getheaders() if k.lower() == "set-cookie"]
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data, cookies
    finally:
        conn.close()


def form(s: HttpMcp, path: str, fields: Dict[str, str], cookie: str = "", **h: str) -> Reply:
    headers = {"Content-Type": "application/x-www-form-urlencoded", **h}
    if cookie:
        headers["Cookie"] = cookie
    return get(s, path, headers, method="POST", body=urlencode(fields).encode())


def test_every_page_carries_the_safety_headers(home: Path) -> None:
    with server(home) as s:
        for path in ("/", "/?q=pdf", "/skill?id=example:pdf-forms", "/taps", "/nope"):
            status, h, body, _ = get(s, path)
            assert status == (404 if path == "/nope" else 200), (path, body[:200])
            assert h["content-type"] == "text/html; charset=utf-8"
            assert h["content-security-policy"] == webapp.CSP
            assert "script-src 'self'" in h["content-security-policy"]
            assert "unsafe-inline" not in h["content-security-policy"]
            assert "frame-ancestors 'none'" in h["content-security-policy"]
            assert h["x-content-type-options"] == "nosniff"
            assert h["referrer-policy"] == "same-origin"
            assert h["cache-control"] == "no-store"
            # No inline script, style or event handler: the CSP would block them anyway.
            text = body.decode()
            assert not re.search(r"<script(?![^>]*\bsrc=)", text)
            assert not re.search(r"\son[a-z]+=", text)
            assert "<style" not in text and " style=" not in text
        for path in ("/static/boost.css", "/static/boost.js"):
            status, h, body, _ = get(s, path)
            assert status == 200 and h["x-content-type-options"] == "nosniff"
            assert "innerHTML" not in body.decode()
        # Under 50 KB before the data: the empty search page and its two assets.
        total = sum(len(get(s, p)[2]) for p in ("/", "/static/boost.css", "/static/boost.js"))
        assert total < 50_000, total
        # The access log has each page with its server time, and never the query.
        time.sleep(0.2)
        log = "".join(s.log)
        assert re.search(r"GET /skill 200 \d+\.\dms page", log), log
        assert "pdf-forms" not in log and "q=pdf" not in log


def test_the_json_views_are_the_mcp_records_in_the_same_order(home: Path) -> None:
    with server(home) as s:
        status, h, body, _ = get(s, "/?" + urlencode({"q": "test my React app", "format": "json"}))
        assert status == 200 and h["content-type"].startswith("application/json")
        page = json.loads(body)
        _, _, reply = s.post({**_search(query="test my React app"), "id": 2})
        tool = reply["result"]["structuredContent"]["results"]
        assert [r["id"] for r in page["results"]][: len(tool)] == [r["id"] for r in tool]
        assert {k for k in tool[0]} <= set(page["results"][0])
        status, _, body, _ = get(s, "/?q=pdf&kind=rule&format=json")
        assert status == 200 and {r["kind"] for r in json.loads(body)["results"]} <= {"rule"}
        status, _, body, _ = get(s, "/skill?id=example:pdf-forms&format=json")
        skill = json.loads(body)
        # one line for each agent layout that takes skills (core/install/agents.py)
        from boost_cli.core.install.agents import LAYOUTS

        takes = [a for a, kinds in LAYOUTS.items() if "skill" in kinds]
        assert skill["install"] == [f"boost install example:pdf-forms --agent {a}" for a in takes]
        assert "boost install example:pdf-forms --agent claude" in skill["install"]
        assert skill["uri"] == "skill://example/skills/pdf-forms/SKILL.md"
        assert skill["text"].startswith("---\nname: pdf-forms")
        status, _, body, _ = get(s, "/taps?format=json")
        assert json.loads(body)["taps"][0]["name"] == "example"
        status, _, body, _ = get(s, "/skill?id=example:no-such&format=json")
        assert status == 404 and "error" in json.loads(body)
        # No state-changing GET, and no other method.
        assert get(s, "/signout")[0] == 405
        assert get(s, "/", method="DELETE")[0] == 405


def test_host_and_origin_are_checked_on_the_pages(home: Path) -> None:
    with server(home) as s:
        assert get(s, "/", {"Host": "evil.example"})[0] == 403
        assert get(s, "/taps", {"Origin": "http://evil.example"})[0] == 403
        assert get(s, "/", {"Origin": f"http://127.0.0.1:{s.port}"})[0] == 200
        assert form(s, "/signout", {}, Origin="https://evil.example")[0] == 403
        assert form(s, "/signin", {}, Origin="null")[0] == 403


def test_the_caps_hold_on_the_new_routes(home: Path) -> None:
    with server(home, token=TOKEN) as s:
        status, _, _, _ = get(s, "/", {"X-Long": "a" * 9000})
        assert status == 431
        assert get(s, "/?q=" + "a" * 9000)[0] == 414
        big = b"token=" + b"a" * ((1 << 20) + 10)
        with socket.create_connection(("127.0.0.1", s.port), timeout=10) as sock:
            head = (
                f"POST /signin HTTP/1.1\r\nHost: 127.0.0.1:{s.port}\r\n"
                "Content-Type: application/x-www-form-urlencoded\r\n"
                f"Content-Length: {len(big)}\r\n\r\n"
            )
            sock.sendall(head.encode())
            answer = sock.recv(200)
        assert answer.startswith(b"HTTP/1.1 413"), answer


def _cookie(cookies: list, name: str) -> str:
    for c in cookies:
        if c.startswith(name + "="):
            return c
    raise AssertionError(f"no {name} cookie in {cookies}")


def test_sign_in_and_out_with_a_token(home: Path) -> None:
    with server(home, token=TOKEN) as s:
        status, h, _, _ = get(s, "/?q=pdf")
        assert status == 303 and h["location"] == "/signin"
        assert get(s, "/?q=pdf&format=json")[0] == 401
        # A script may send the bearer token instead.
        auth = {"Authorization": f"Bearer {TOKEN}"}
        assert get(s, "/?q=pdf&format=json", auth)[0] == 200
        status, h, page, cookies = get(s, "/signin")
        assert status == 200
        csrf_cookie = _cookie(cookies, "boost_signin")
        assert "HttpOnly" in csrf_cookie and "SameSite=Strict" in csrf_cookie
        csrf = csrf_cookie.split(";")[0].split("=", 1)[1]
        assert f'name="csrf" value="{csrf}"' in page.decode()
        jar = f"boost_signin={csrf}"
        # CSRF: the form's value must match the cookie's.
        assert form(s, "/signin", {"token": TOKEN, "csrf": "forged"}, jar)[0] == 403
        assert form(s, "/signin", {"token": TOKEN, "csrf": csrf})[0] == 403
        assert form(s, "/signin", {"token": TOKEN}, jar)[0] == 403
        status, _, page, _ = form(s, "/signin", {"token": "wrong" * 5, "csrf": csrf}, jar)
        assert status == 401 and TOKEN.encode() not in page
        status, h, page, cookies = form(s, "/signin", {"token": TOKEN, "csrf": csrf}, jar)
        assert status == 303 and h["location"] == "/"
        session = _cookie(cookies, "boost_session")
        for flag in ("HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=28800"):
            assert flag in session
        assert "Secure" not in session and TOKEN not in session
        jar = session.split(";")[0]
        status, _, page, _ = get(s, "/?q=pdf", {"Cookie": jar})
        assert status == 200 and b"example:pdf-forms" in page and TOKEN.encode() not in page
        token_for_out = re.search(r'name="csrf" value="([^"]+)"', page.decode())
        assert token_for_out is not None
        # Sign-out needs the page's CSRF value; GET cannot sign out.
        assert form(s, "/signout", {"csrf": "forged"}, jar)[0] == 403
        assert get(s, "/signout", {"Cookie": jar})[0] == 405
        status, h, _, cookies = form(s, "/signout", {"csrf": token_for_out.group(1)}, jar)
        assert status == 303 and "Max-Age=0" in _cookie(cookies, "boost_session")
        assert get(s, "/?q=pdf", {"Cookie": jar})[0] == 303  # the old cookie is dead
        # Behind TLS (the proxy says so), cookies are Secure.
        _, _, _, cookies = get(s, "/signin", {"X-Forwarded-Proto": "https"})
        assert "Secure" in _cookie(cookies, "boost_signin")
        # A forged or tampered session is refused.
        bad = jar[:-3] + "AAA"
        assert get(s, "/", {"Cookie": bad})[0] == 303
        time.sleep(0.2)
        assert TOKEN not in "".join(s.log)


def test_pages_can_be_turned_off(home: Path) -> None:
    with server(home, "--no-pages") as s:
        status, h, body, _ = get(s, "/")
        assert status == 404 and h["content-type"] == "application/json"
        assert "team page" not in "".join(s.log)


def test_hostile_registry_text_is_escaped(tmp_path: Path) -> None:
    with server(hostile_home(tmp_path)) as s:
        pages = [
            get(s, "/?q=pdf+forms")[2].decode(),
            get(s, "/skill?id=evil:evil-skill")[2].decode(),
            get(s, "/taps")[2].decode(),
        ]
        status, _, body, _ = get(s, "/skill?id=evil:evil-skill&format=json")
        files = json.loads(body)["files"]
        assert len(files) == 3
        for f in files:
            pages.append(
                get(s, "/skill?" + urlencode({"id": "evil:evil-skill", "file": f}))[2].decode()
            )
        for page in pages:
            assert "pwned" in page or "evil" in page
            # As a browser parses it: only boost's own elements and attributes survive.
            tags = Tags()
            tags.feed(page)
            assert tags.names <= SAFE_TAGS, tags.names - SAFE_TAGS
            assert tags.scripts == ["/static/boost.js"]
            assert not [a for a in tags.attrs if a.startswith("on")]
            assert all(h.startswith(("/", "#")) for h in tags.hrefs), tags.hrefs
            assert "\u202e" not in page and "\u200b" not in page
        assert "&lt;script&gt;" in pages[1] and "\\u202e" in pages[1]
        # The flagged skill's findings come before its text.
        assert pages[1].index("Trust check") < pages[1].index("Text of")
