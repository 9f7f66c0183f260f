"""The team page's pure parts with literals: escaping, links, install lines, sessions."""

from __future__ import annotations

from boost_cli.core import webpage, websession


def test_esc_escapes_markup_quotes_and_invisible_characters() -> None:
    assert webpage.esc("<a href=\"x\" onclick='y'>") == (
        "&lt;a href=&quot;x&quot; onclick=&#x27;y&#x27;&gt;"
    )
    assert webpage.esc("a\u202eb\u200bc\nd") == "a\\u202eb\\u200bc\\nd"
    assert webpage.esc_block("<b>\nx\u202e") == "&lt;b&gt;\nx\\u202e"
    assert webpage.esc(None) == ""


def test_links_are_boosts_own_or_plain_http() -> None:
    assert webpage.href("/skill", id='a:"><x', file=None) == "/skill?id=a%3A%22%3E%3Cx"
    assert webpage.safe_url("https://github.com/a/b") == "https://github.com/a/b"
    for bad in (
        "javascript:alert(1)",
        "JaVaScRiPt://x",
        "data:text/html,x",
        "file:///etc/x",
        "https://x/\u202e",
        "//evil.example/x",
        "",
    ):
        assert webpage.safe_url(bad) is None, bad


def test_install_lines_are_shell_quoted_per_layout() -> None:
    layouts = {"claude": {"skill": "a"}, "cursor": {"rule": "b"}, "agents": {"skill": "c"}}
    assert webpage.install_lines("t:x", "skill", layouts) == [
        "boost install t:x --agent claude",
        "boost install t:x --agent agents",
    ]
    assert webpage.install_lines("t:x; rm -rf ~", "rule", layouts) == [
        "boost install 't:x; rm -rf ~' --agent cursor"
    ]


def test_sessions_are_signed_expiring_and_keyed_by_the_token() -> None:
    key = websession.session_key("a-long-token-0123456789")
    value = websession.issue(key, 1000.0, nonce="n1")
    assert websession.verify(key, value, 1001.0) == "n1"
    assert websession.verify(key, value, 1000.0 + websession.SESSION_SECONDS) is None
    other = websession.session_key("another-token-0123456789")
    assert websession.verify(other, value, 1001.0) is None
    expiry, nonce, sig = value.split(".")
    assert websession.verify(key, f"{int(expiry) + 999}.{nonce}.{sig}", 1001.0) is None
    for bad in (None, "", "x", "1.2", "é.a.b", "abc.n1.sig"):
        assert websession.verify(key, bad, 1001.0) is None
    assert websession.signout_csrf(key, "n1") != websession.signout_csrf(key, "n2")
    assert websession.same("a", "a") and not websession.same("a", "b")
    assert not websession.same("", "") and not websession.same(None, "a")


def test_cookies_carry_their_flags_and_are_read_back() -> None:
    c = websession.cookie("s", "v", max_age=5, secure=True)
    assert c == "s=v; Path=/; Max-Age=5; HttpOnly; SameSite=Strict; Secure"
    assert "Secure" not in websession.cookie("s", "v", max_age=5, secure=False)
    assert websession.read_cookie("a=1; s=v.w=; b=2", "s") == "v.w="
    assert websession.read_cookie("as=1", "s") is None
    assert websession.read_cookie(None, "s") is None
