"""MCP's two eras, as pure functions: which revision a request speaks, and how a result
is shaped for it.

* The **handshake era** (2024-11-05 … 2025-11-25): ``initialize`` agrees a version for
  the connection, and every later request relies on it.
* The **stateless era** (2026-07-28): no handshake and no session. ``server/discover``
  tells a client what the server speaks, and every request carries its own protocol
  version, client info and client capabilities in ``params._meta`` (the *envelope*).
  Every result says ``resultType``; list and read results add the cache hints ``ttlMs``
  and ``cacheScope``; results carry the server's identity in ``_meta``.

`classify` decides per request, from the request alone, so the same answer comes out of a
stdio loop and a stateless HTTP endpoint: a request whose ``_meta`` carries the protocol
version key is a 2026-07-28 request, whatever came before on the connection; anything else
uses the connection's handshake (`Call.version` is then what ``initialize`` agreed, or
None before it). ``initialize`` is always the handshake: the 2026-07-28 revision has none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
#: 2026-07-28: the request's protocol version is not one the server speaks.
UNSUPPORTED_PROTOCOL_VERSION = -32022

#: The handshake-era revisions, newest first; the first is what ``initialize`` offers when
#: the client asks for one it does not know.
HANDSHAKE_VERSIONS: Tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
#: The stateless-era revisions, newest first.
MODERN_VERSIONS: Tuple[str, ...] = ("2026-07-28",)

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

#: Methods whose 2026-07-28 results are cacheable (``ttlMs`` and ``cacheScope`` required).
CACHEABLE = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)
#: What boost serves changes only when a tap changes (``boost update``): a minute is short
#: enough for a host to see an update soon and long enough to spare a listing per turn.
DEFAULT_TTL_MS = 60_000


class JsonRpcError(Exception):
    """A protocol-level failure that becomes a JSON-RPC ``error`` response."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


@dataclass(frozen=True)
class Call:
    """What one request speaks: its protocol ``version`` (None: a handshake-era request
    before any ``initialize``), whether it came with a 2026-07-28 envelope (``modern``),
    and the client's info and capabilities from that envelope."""

    version: Optional[str]
    modern: bool = False
    client_info: Optional[Mapping[str, Any]] = None
    client_capabilities: Optional[Mapping[str, Any]] = None

    def at_least(self, version: str) -> bool:
        """Whether this call's revision is ``version`` or newer (unknown: the newest
        handshake revision, what an un-initialised client is offered)."""
        return (self.version or HANDSHAKE_VERSIONS[0]) >= version  # ISO dates sort as strings


def has_envelope(params: Any) -> bool:
    """Whether ``params._meta`` carries the 2026-07-28 protocol version key (legacy
    requests may carry ``_meta`` too, for a progress token, but never that key)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta


def classify(
    method: str,
    params: Any,
    handshake: Optional[str],
    modern_versions: Sequence[str] = MODERN_VERSIONS,
    handshake_versions: Sequence[str] = HANDSHAKE_VERSIONS,
) -> Call:
    """The `Call` a request makes; raises `JsonRpcError` for a broken envelope (-32602) or
    a version boost does not speak (-32022, naming every version it does)."""
    if method == "initialize" or not has_envelope(params):
        if method == "server/discover":
            raise JsonRpcError(
                INVALID_PARAMS,
                f"invalid params: server/discover needs params._meta with {PROTOCOL_VERSION_KEY!r}"
                f" and {CLIENT_CAPABILITIES_KEY!r} (protocol 2026-07-28)",
            )
        return Call(handshake)
    meta = params["_meta"]
    version = meta[PROTOCOL_VERSION_KEY]
    if not isinstance(version, str):
        raise JsonRpcError(INVALID_PARAMS, "invalid params: the protocol version must be a string")
    if version not in modern_versions:
        supported = [*modern_versions, *handshake_versions]
        raise JsonRpcError(
            UNSUPPORTED_PROTOCOL_VERSION,
            f"unsupported protocol version {version[:40]!r}; this server speaks "
            f"{', '.join(supported)} (2025 revisions through initialize)",
            {"supported": supported, "requested": version},
        )
    if CLIENT_CAPABILITIES_KEY not in meta:
        raise JsonRpcError(
            INVALID_PARAMS, f"invalid params: params._meta is missing {CLIENT_CAPABILITIES_KEY!r}"
        )
    info, caps = meta.get(CLIENT_INFO_KEY), meta[CLIENT_CAPABILITIES_KEY]
    if not isinstance(caps, dict) or not (info is None or isinstance(info, dict)):
        raise JsonRpcError(
            INVALID_PARAMS, "invalid params: client info and capabilities must be objects"
        )
    return Call(version, True, info, caps)


def shape_result(
    method: str,
    result: Dict[str, Any],
    call: Call,
    server_info: Mapping[str, Any],
    ttl_ms: int = DEFAULT_TTL_MS,
) -> Dict[str, Any]:
    """``result`` as ``call``'s revision wants it. Handshake era: unchanged. 2026-07-28:
    ``resultType`` (``complete`` unless the handler said otherwise), the cache hints on a
    cacheable method (or wherever the handler set one), and the server's identity in
    ``_meta``. Boost serves the same bytes to everyone, so ``cacheScope`` is public."""
    if not call.modern:
        return result
    out = dict(result)
    out.setdefault("resultType", "complete")
    if method in CACHEABLE or "ttlMs" in out or "cacheScope" in out:
        out.setdefault("ttlMs", ttl_ms)
        out.setdefault("cacheScope", "public")
    meta = out.get("_meta")
    meta = dict(meta) if isinstance(meta, dict) else {}
    meta.setdefault(SERVER_INFO_KEY, dict(server_info))
    out["_meta"] = meta
    return out
