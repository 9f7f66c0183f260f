"""The team page: `boost mcp --http` serves people beside ``/mcp`` (docs/team-server.md).

`Pages` answers every request the MCP transport does not own (``/mcp`` and ``/healthz``
stay `mcp_http`'s, which checks Host and Origin for these routes too and caps them the
same way). It gathers the records the services already produce — `search.run` and
`records.mcp_record` (the MCP tool's pipeline and ranking), `lookup`, the trust view,
`status.tap_rows` — and `webpage` renders them; ``format=json`` gives the same record as
JSON, for scripts. Every answer carries a strict Content-Security-Policy and the other
safety headers (`SECURITY_HEADERS`).

With a token (a non-loopback team server), a person signs in once: ``POST /signin``
with the token and a double-submit CSRF value gives an HttpOnly, SameSite=Strict,
signed and expiring session cookie (`websession`); ``POST /signout`` ends it. A script
may send ``Authorization: Bearer <token>`` instead. No GET changes anything.
"""

from __future__ import annotations

import datetime
import json
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Set, Tuple
from urllib.parse import parse_qs

from boost_cli.core import (
    lookup,
    records,
    registry,
    retrieval,
    search,
    skillmap,
    status,
    trust_scan,
    web_assets,
    webpage,
    websession,
)
from boost_cli.core.errors import BoostError, NotFoundError, UsageError
from boost_cli.core.http_serve import Response
from boost_cli.core.http_wire import Head
from boost_cli.core.install.agents import LAYOUTS
from boost_cli.core.models import KINDS

SEARCH_LIMIT = 20
MAX_QUERY = 2000
MAX_FORM = 8192  # a sign-in form is a token and a CSRF value

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
SECURITY_HEADERS: Tuple[Tuple[str, str], ...] = (
    ("Content-Security-Policy", CSP),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "same-origin"),
    ("X-Frame-Options", "DENY"),
    ("Cross-Origin-Opener-Policy", "same-origin"),
    ("Cross-Origin-Resource-Policy", "same-origin"),
    ("Permissions-Policy", "camera=(), microphone=(), geolocation=()"),
)
PAGES = frozenset(
    {
        "/",
        "/skill",
        "/taps",
        "/signin",
        "/signout",
        "/favicon.ico",
        "/static/boost.css",
        "/static/boost.js",
    }
)
STATIC = {
    "/static/boost.css": ("text/css; charset=utf-8", web_assets.CSS),
    "/static/boost.js": ("text/javascript; charset=utf-8", web_assets.JS),
}


def _age(stamp: object, now: float) -> str:
    """``updated`` (ISO 8601 or epoch seconds) as "3 h ago"; '' when unreadable."""
    try:
        if isinstance(stamp, (int, float)):
            then = float(stamp)
        else:
            then = datetime.datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return ""
    secs = max(0, int(now - then))
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if secs >= size:
            return f"{secs // size} {unit} ago"
    return "just now"


class Pages:
    """``pages(head, body) -> Response`` for `mcp_http.HttpServer` (called one at a time)."""

    def __init__(
        self,
        engines: retrieval.Engines,
        skills: skillmap.Holder,
        token: Optional[str] = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.engines = engines
        self.skills = skills
        self.token = token
        self.key = websession.session_key(token) if token else b""
        self.clock = clock
        self._revoked: Set[str] = set()  # signed-out nonces, until the server restarts
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ responses

    def _html(
        self, status: int, title: str, main: str, csrf: Optional[str], *extra: Tuple[str, str]
    ) -> Response:
        page = webpage.layout(title, main, signout=csrf)
        fields = (
            ("Content-Type", "text/html; charset=utf-8"),
            ("Cache-Control", "no-store"),
            *SECURITY_HEADERS,
            *extra,
        )
        return Response(status, fields, page.encode("utf-8"))

    @staticmethod
    def _json(status: int, data: Any, *extra: Tuple[str, str]) -> Response:
        body = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        fields = (
            ("Content-Type", "application/json; charset=utf-8"),
            ("Cache-Control", "no-store"),
            *SECURITY_HEADERS,
            *extra,
        )
        return Response(status, fields, body)

    @staticmethod
    def _redirect(to: str, *extra: Tuple[str, str]) -> Response:
        return Response(
            303, (("Location", to), ("Cache-Control", "no-store"), *SECURITY_HEADERS, *extra)
        )

    # ------------------------------------------------------------------ the entry point

    def __call__(self, head: Head, body: bytes) -> Response:
        path, _, query = head.target.partition("?")
        params = {k: v[0] for k, v in parse_qs(query, max_num_fields=20).items() if v}
        want_json = params.get("format") == "json"
        if path not in PAGES:
            if want_json or head.method != "GET":
                return self._json(404, {"error": "not found: the pages are /, /skill and /taps"})
            text = "no such page — the pages are / (search), /skill?id=ID and /taps"
            return self._html(404, "Not found", webpage.error_page(text), None)
        if head.method not in ("GET", "POST"):
            return self._json(
                405, {"error": "method not allowed: GET a page"}, ("Allow", "GET, POST")
            )
        if path in STATIC and head.method == "GET":
            ctype, text = STATIC[path]
            fields = (("Content-Type", ctype), ("Cache-Control", "max-age=300"), *SECURITY_HEADERS)
            return Response(200, fields, text.encode("utf-8"))
        if path == "/favicon.ico" and head.method == "GET":
            return Response(204, (("Cache-Control", "max-age=86400"), *SECURITY_HEADERS))
        secure = (head.get("x-forwarded-proto") or "").lower() == "https"
        if path == "/signin":
            return self._signin(head, body, secure)
        nonce = self._session(head)
        if self.token and nonce is None:
            if want_json or head.method != "GET":
                return self._json(401, {"error": "sign in at /signin, or send a bearer token"})
            return self._redirect("/signin")
        csrf = websession.signout_csrf(self.key, nonce) if self.token and nonce else None
        if path == "/signout":
            return self._signout(head, body, nonce, secure)
        if head.method != "GET":
            return self._json(405, {"error": "method not allowed: GET this page"}, ("Allow", "GET"))
        try:
            if path == "/skill":
                return self._skill(params, want_json, csrf)
            if path == "/taps":
                return self._taps(want_json, csrf)
            return self._search(params, want_json, csrf)  # "/", the one page left
        except BoostError as exc:
            code = (
                404
                if isinstance(exc, NotFoundError)
                else 400
                if isinstance(exc, UsageError)
                else 503
            )
            text = f"{exc.message} — {exc.fix}" if exc.fix else exc.message
            if want_json:
                return self._json(code, {"error": text})
            return self._html(code, "Not shown", webpage.error_page(text), csrf)

    # ------------------------------------------------------------------ sign-in

    def _session(self, head: Head) -> Optional[str]:
        """The session's nonce; "" for a bearer token or when no token is configured;
        None when the request is not signed in."""
        if not self.token:
            return ""
        scheme, _, given = (head.get("authorization") or "").partition(" ")
        if scheme.lower() == "bearer" and websession.same(given.strip(), self.token):
            return ""
        value = websession.read_cookie(head.get("cookie"), websession.SESSION_COOKIE)
        nonce = websession.verify(self.key, value, self.clock())
        with self._lock:
            return None if nonce is None or nonce in self._revoked else nonce

    def _signin(self, head: Head, body: bytes, secure: bool) -> Response:
        if not self.token:
            return self._redirect("/")
        if head.method == "GET":
            return self._signin_form(200, "", secure)
        form = self._form(head, body)
        if form is None:
            return self._signin_form(400, "Send the sign-in form.", secure)
        given = websession.read_cookie(head.get("cookie"), websession.CSRF_COOKIE)
        if not websession.same(given, form.get("csrf")):
            return self._signin_form(403, "The form expired: sign in again.", secure)
        if not websession.same(form.get("token"), self.token):
            return self._signin_form(401, "That is not this server's token.", secure)
        session = websession.issue(self.key, self.clock())
        return self._redirect(
            "/",
            (
                "Set-Cookie",
                websession.cookie(
                    websession.SESSION_COOKIE,
                    session,
                    max_age=websession.SESSION_SECONDS,
                    secure=secure,
                ),
            ),
            ("Set-Cookie", websession.cookie(websession.CSRF_COOKIE, "", max_age=0, secure=secure)),
        )

    def _signin_form(self, status: int, problem: str, secure: bool) -> Response:
        csrf = websession.new_nonce()
        cookie = websession.cookie(websession.CSRF_COOKIE, csrf, max_age=600, secure=secure)
        return self._html(
            status, "Sign in", webpage.signin_page(csrf, problem), None, ("Set-Cookie", cookie)
        )

    def _signout(self, head: Head, body: bytes, nonce: Optional[str], secure: bool) -> Response:
        if head.method != "POST":
            return self._json(405, {"error": "sign out with POST"}, ("Allow", "POST"))
        if self.token and nonce:
            form = self._form(head, body)
            want = websession.signout_csrf(self.key, nonce)
            if form is None or not websession.same(form.get("csrf"), want):
                return self._json(403, {"error": "the sign-out form expired: reload the page"})
            with self._lock:
                self._revoked.add(nonce)
        clear = websession.cookie(websession.SESSION_COOKIE, "", max_age=0, secure=secure)
        return self._redirect("/signin" if self.token else "/", ("Set-Cookie", clear))

    @staticmethod
    def _form(head: Head, body: bytes) -> Optional[Dict[str, str]]:
        ctype = (head.get("content-type") or "").split(";")[0].strip().lower()
        if ctype != "application/x-www-form-urlencoded" or len(body) > MAX_FORM:
            return None
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return None
        return {k: v[0] for k, v in parse_qs(text, max_num_fields=10).items() if v}

    # ------------------------------------------------------------------ pages

    def search_data(self, params: Dict[str, str]) -> Dict[str, Any]:
        """The search page's record: the MCP tool's records, each with its ``marker``."""
        query = params.get("q", "").strip()[:MAX_QUERY]
        kind = params.get("kind", "")
        kind = kind if kind in KINDS else ""
        tap = params.get("tap", "")
        data: Dict[str, Any] = {"query": query, "kind": kind, "tap": tap, "results": []}
        if not query:
            return data
        opts = search.SearchOptions(
            query=query,
            limit=SEARCH_LIMIT,
            kind=kind or None,
            taps=(tap,) if tap else (),
            rerank="none",
            expand="none",
        )
        result = search.run(opts, engines=self.engines)
        taps = {t.name: t for t in registry.list_taps()}
        served = self.skills.get()
        view = trust_scan.View(taps)
        results: List[Dict[str, Any]] = []
        for h in result.hits:
            r = records.mcp_record(h, taps, served, view)
            r["marker"] = trust_scan.marker(r["flags"])
            results.append(r)
        data.update(engine=result.engine, notes=list(result.notes), results=results)
        return data

    def _search(self, params: Dict[str, str], want_json: bool, csrf: Optional[str]) -> Response:
        data = self.search_data(params)
        if want_json:
            return self._json(200, data)
        names = [t.name for t in registry.list_taps()]
        title = f"{data['query']} — search" if data["query"] else "Search"
        return self._html(200, title, webpage.search_page(data, names), csrf)

    def skill_data(self, params: Dict[str, str]) -> Dict[str, Any]:
        name = params.get("id", "")
        if not name:
            raise UsageError("which skill?", "open /skill?id=TAP:NAME (ids are on the search page)")
        found = lookup.read(name)
        entry = found.entry
        findings = registry.trust_view().findings(entry)
        rel = params.get("file", "")
        text = found.text
        if rel:
            text = lookup.read_in_folder(found, rel)
            where = f"{entry.rel_dir}/{rel}" if entry.rel_dir else rel
            findings = tuple(f for f in findings if f.file == where)
        files: List[str] = []
        total = 0
        if lookup.folder_of(found) is not None:
            files, total = lookup.folder_files(found)
        data: Dict[str, Any] = {
            "id": entry.qualified_name,
            "name": entry.name,
            "kind": entry.kind,
            "tap": entry.tap,
            "path": entry.path,
            "description": entry.description,
            "url": found.url,
            "findings": [f.to_dict() for f in findings],
            "install": webpage.install_lines(entry.qualified_name, entry.kind, LAYOUTS),
            "files": files,
            "files_total": total,
            "file": rel,
            "text": text,
        }
        if entry.kind == "skill":
            got = self.skills.get().status(entry.tap, entry.path)
            if isinstance(got, skillmap.Served):
                data["uri"] = got.uri
            elif isinstance(got, skillmap.Refused):
                data["not_served"] = got.message()
        return data

    def _skill(self, params: Dict[str, str], want_json: bool, csrf: Optional[str]) -> Response:
        data = self.skill_data(params)
        if want_json:
            return self._json(200, data)
        return self._html(200, data["name"], webpage.skill_page(data), csrf)

    def taps_data(self) -> Dict[str, Any]:
        taps = registry.list_taps()
        state = status.index_state(self.engines) if taps else status.IndexState(False, {})
        now = self.clock()
        rows = status.tap_rows(taps, state)
        for r in rows:
            r["age"] = _age(r.get("updated") or r.get("added"), now)
        out: Dict[str, Any] = {"taps": rows}
        if state.damaged is not None:
            out["index_problem"] = str(state.damaged)
        return out

    def _taps(self, want_json: bool, csrf: Optional[str]) -> Response:
        data = self.taps_data()
        if want_json:
            return self._json(200, data)
        return self._html(200, "Taps", webpage.taps_page(data), csrf)
