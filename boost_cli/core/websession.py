"""Sign-in sessions for the team page: signed, expiring cookie values and CSRF values.

Pure: the key is derived from the server's token (`session_key`), so a new token ends
every session, and a cookie never holds the token itself. A session value is
``EXPIRY.NONCE.SIG`` with ``SIG = HMAC-SHA256(key, "session:EXPIRY.NONCE")``; the
sign-out form's CSRF value is ``HMAC(key, "signout:NONCE")``, so only a page served to
that session can end it. Sign-in's CSRF is a double submit: a random value in a
``SameSite=Strict`` cookie and in the form, compared in constant time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from typing import Optional

SESSION_SECONDS = 8 * 3600
SESSION_COOKIE = "boost_session"
CSRF_COOKIE = "boost_signin"


def session_key(token: str) -> bytes:
    return hmac.new(token.encode("utf-8"), b"boost web session v1", hashlib.sha256).digest()


def _sign(key: bytes, what: str) -> str:
    mac = hmac.new(key, what.encode("ascii"), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).decode("ascii").rstrip("=")


def new_nonce() -> str:
    return secrets.token_urlsafe(24)


def issue(key: bytes, now: float, nonce: Optional[str] = None) -> str:
    """A session value good until ``now`` + `SESSION_SECONDS`."""
    body = f"{int(now) + SESSION_SECONDS}.{nonce or new_nonce()}"
    return f"{body}.{_sign(key, 'session:' + body)}"


def verify(key: bytes, value: Optional[str], now: float) -> Optional[str]:
    """The session's nonce when ``value`` is signed by ``key`` and unexpired, else None."""
    if not value or not value.isascii():
        return None
    expiry, _, rest = value.partition(".")
    nonce, _, sig = rest.partition(".")
    if not expiry.isdigit() or not nonce or not sig:
        return None
    if not hmac.compare_digest(sig, _sign(key, f"session:{expiry}.{nonce}")):
        return None
    return nonce if int(expiry) > now else None


def signout_csrf(key: bytes, nonce: str) -> str:
    return _sign(key, "signout:" + nonce)


def same(a: Optional[str], b: Optional[str]) -> bool:
    """Constant-time equality of two non-empty strings."""
    if not a or not b:
        return False
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))


def cookie(name: str, value: str, *, max_age: int, secure: bool) -> str:
    """A ``Set-Cookie`` value: HttpOnly, SameSite=Strict, Path=/, Secure behind TLS."""
    flags = f"{name}={value}; Path=/; Max-Age={max_age}; HttpOnly; SameSite=Strict"
    return flags + ("; Secure" if secure else "")


def read_cookie(header: Optional[str], name: str) -> Optional[str]:
    """The value of cookie ``name`` in a ``Cookie`` header (the first one), or None."""
    for part in (header or "").split(";"):
        key, eq, value = part.strip().partition("=")
        if eq and key == name:
            return value
    return None
