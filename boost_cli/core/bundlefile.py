"""The bundle file: named members in one deterministic file, with a manifest of digests.

Layout (every integer little-endian)::

    MAGIC (16 bytes) | u64 header length | header (canonical JSON) | members | sha256 (32 bytes)

The header is ``{"format", "kind", "meta", "total", "members": [{"name", "size", "csize",
"sha256"}]}``; each member is its bytes compressed with zlib, stored in header order, and
the last 32 bytes are the SHA-256 of everything before them. The same members in the same
order make the same bytes: no timestamps, no owners, canonical JSON.

A reader checks the magic, the trailing digest over the whole file, the header's shape and
every member's size and digest as it is read, so a truncated, damaged or foreign file is
refused before anything is written. What a bundle may decompress to is capped before any
of it is: each member at its stated ``size`` (at most `MAX_MEMBER_BYTES`), all of them at
the stated ``total`` (their sum, at most `MAX_TOTAL_BYTES` and `MAX_RATIO` times the
file's size, with a floor of `RATIO_FLOOR`), and a member is inflated a megabyte at a time
and stops at its stated size: memory stays a few megabytes whatever a member holds.
Member names are checked here (`check_member_name`); what they mean is `bundle`'s business.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import struct
import tempfile
import zlib
from pathlib import Path, PurePosixPath
from typing import IO, Any, BinaryIO, Dict, Iterator, List, Optional, Tuple

from boost_cli.core.errors import UsageError

MAGIC = b"BOOSTBUNDLE-v1\n\x00"
FORMAT = 1
KIND = "boost-bundle"
DIGEST_BYTES = 32
MAX_HEADER_BYTES = 64 << 20
MAX_MEMBERS = 500_000
MAX_MEMBER_BYTES = 256 << 20  # one member, uncompressed
MAX_TOTAL_BYTES = 16 << 30  # every member, uncompressed
# zlib shrinks text and index files 2 to 10 times; a bundle stating more than this many
# times its own size is a decompression bomb (a tiny bundle may still state RATIO_FLOOR).
MAX_RATIO = 100
RATIO_FLOOR = 256 << 20
MAX_NAME_CHARS = 1024
_CHUNK = 1 << 20
_LEVEL = 6

REEXPORT = "export it again with 'boost bundle export'"


def _damaged(path: Path, detail: str) -> UsageError:
    return UsageError(f"{path} is not a usable boost bundle ({detail})", REEXPORT)


def canonical(value: Any) -> bytes:
    """The one JSON spelling of ``value``: sorted keys, no spaces, ASCII."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def check_member_name(name: object) -> Optional[str]:
    """Why ``name`` cannot name a member (None when it can): a relative POSIX path of plain
    parts, no ``.``/``..``, no ``.git`` part, no control characters or backslashes."""
    if not isinstance(name, str) or not name:
        return "an empty or non-text name"
    if len(name) > MAX_NAME_CHARS:
        return "a name over 1024 characters"
    if any(ord(c) < 0x20 or c in "\x7f\\" for c in name):
        return "a control character or backslash in a name"
    if name.startswith("/") or name.endswith("/"):
        return "an absolute or folder name"
    parts = name.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return "an empty, '.' or '..' path part"
    if any(p == ".git" for p in parts):
        return "a '.git' path part"
    if str(PurePosixPath(name)) != name:
        return "a name that is not in normal form"
    return None


class BundleWriter:
    """Collects members (compressed into a spool file), then writes the bundle atomically.

    Use as a context manager; `add` members in the order they should appear, then
    `finish(meta)`. Leaving the block without `finish` leaves nothing behind.
    """

    def __init__(self, out: Path) -> None:
        self.out = out
        self._members: List[Dict[str, Any]] = []
        self._names: set = set()
        out.parent.mkdir(parents=True, exist_ok=True)
        self._spool: IO[bytes] = tempfile.TemporaryFile(dir=str(out.parent))  # noqa: SIM115

    def __enter__(self) -> BundleWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self._spool.close()

    def add(self, name: str, data: bytes) -> None:
        problem = check_member_name(name)
        if problem:
            raise UsageError(f"cannot bundle {name!r}: {problem}", "rename it in the registry")
        if name in self._names:
            raise UsageError(f"cannot bundle {name!r} twice", "this is a bug in boost")
        if len(data) > MAX_MEMBER_BYTES:
            raise UsageError(f"cannot bundle {name!r}: over 256 MiB", "leave it out")
        packed = zlib.compress(data, _LEVEL)
        self._spool.write(packed)
        self._names.add(name)
        self._members.append(
            {
                "name": name,
                "size": len(data),
                "csize": len(packed),
                "sha256": hashlib.sha256(data).hexdigest(),
            }
        )

    def finish(self, meta: Dict[str, Any]) -> Tuple[int, str]:
        """Write the bundle to ``out`` (temp file, fsync, rename); its size and digest."""
        total = sum(m["size"] for m in self._members)
        header = canonical(
            {"format": FORMAT, "kind": KIND, "meta": meta, "total": total, "members": self._members}
        )
        fd, tmp = tempfile.mkstemp(dir=str(self.out.parent), prefix=f".{self.out.name}.")
        digest = hashlib.sha256()
        size = 0
        try:
            with os.fdopen(fd, "wb") as f:

                def put(data: bytes) -> None:
                    nonlocal size
                    f.write(data)
                    digest.update(data)
                    size += len(data)

                put(MAGIC)
                put(struct.pack("<Q", len(header)))
                put(header)
                self._spool.seek(0)
                while True:
                    block = self._spool.read(_CHUNK)
                    if not block:
                        break
                    put(block)
                tail = digest.digest()
                f.write(tail)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o644)  # a file to hand to replicas, not a secret
            os.replace(tmp, self.out)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return size + DIGEST_BYTES, tail.hex()


class BundleReader:
    """An opened, verified bundle: `meta`, `members`, `read(name)`, `extract(name, dest)`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._f: BinaryIO = open(path, "rb")  # noqa: SIM115 - closed by close()
        except OSError as exc:
            raise UsageError(
                f"cannot read {path} ({exc.strerror or exc})", "check the path"
            ) from exc
        try:
            self._open()
        except BaseException:
            self._f.close()
            raise

    def __enter__(self) -> BundleReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._f.close()

    def _open(self) -> None:
        f, path = self._f, self.path
        total = os.fstat(f.fileno()).st_size
        head = f.read(len(MAGIC) + 8)
        if head[: len(MAGIC)] != MAGIC:
            raise UsageError(
                f"{path} is not a boost bundle", "pass a file from 'boost bundle export'"
            )
        if len(head) < len(MAGIC) + 8:
            raise _damaged(path, "truncated")
        (hlen,) = struct.unpack("<Q", head[len(MAGIC) :])
        start = len(MAGIC) + 8
        if hlen > MAX_HEADER_BYTES or start + hlen + DIGEST_BYTES > total:
            raise _damaged(path, "truncated or a header of impossible size")
        self.digest = self._verify_digest(total)
        f.seek(start)
        try:
            header = json.loads(f.read(hlen).decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise _damaged(path, "its header is not JSON") from exc
        except RecursionError as exc:  # JSON nested deeper than Python recurses
            raise _damaged(path, "its header is nested too deeply") from exc
        if not isinstance(header, dict) or header.get("kind") != KIND:
            raise _damaged(path, "its header is not a bundle header")
        if header.get("format") != FORMAT:
            raise UsageError(
                f"{path} is a format {header.get('format')!r} bundle; this boost reads "
                f"format {FORMAT}",
                "export it again with this version of boost",
            )
        meta, members = header.get("meta"), header.get("members")
        if not isinstance(meta, dict) or not isinstance(members, list):
            raise _damaged(path, "its header has no meta or member list")
        if len(members) > MAX_MEMBERS:
            raise _damaged(path, f"over {MAX_MEMBERS} members")
        offset = start + hlen
        self.members: Dict[str, Dict[str, Any]] = {}
        self.order: List[str] = []
        for m in members:
            self._add_member(m, offset)
            offset += int(m["csize"])
        if offset != total - DIGEST_BYTES:
            raise _damaged(path, "its members do not fill the file")
        self.total = self._check_total(header, total)
        self.meta: Dict[str, Any] = meta
        self.size = total

    def _check_total(self, header: Dict[str, Any], file_size: int) -> int:
        """The members' decompressed total: as the header states it (when it does: older
        bundles do not), and within the caps (module docstring)."""
        total = sum(int(m["size"]) for m in self.members.values())
        stated = header.get("total", total)
        if not isinstance(stated, int) or stated != total:
            raise _damaged(self.path, "its stated total size is not its members' sum")
        cap = min(MAX_TOTAL_BYTES, max(RATIO_FLOOR, MAX_RATIO * file_size))
        if total > cap:
            raise UsageError(
                f"{self.path} would decompress to {total / 1e6:.0f} MB, over the "
                f"{cap / 1e6:.0f} MB boost takes from a bundle of {file_size / 1e6:.1f} MB",
                "export fewer taps into each bundle, or check where this file came from",
            )
        return total

    def _add_member(self, m: Any, offset: int) -> None:
        ok = (
            isinstance(m, dict)
            and isinstance(m.get("size"), int)
            and isinstance(m.get("csize"), int)
            and isinstance(m.get("sha256"), str)
            and len(m["sha256"]) == 64
            and 0 <= m["size"] <= MAX_MEMBER_BYTES
            and m["csize"] > 0
        )
        if not ok:
            raise _damaged(self.path, "a member record is malformed")
        name = m.get("name")
        problem = check_member_name(name)
        if problem:
            raise _damaged(self.path, f"a member has {problem}")
        assert isinstance(name, str)
        if name in self.members:
            raise _damaged(self.path, f"member {name!r} appears twice")
        self.members[name] = {**m, "offset": offset}
        self.order.append(name)

    def _verify_digest(self, total: int) -> str:
        f = self._f
        f.seek(0)
        digest = hashlib.sha256()
        left = total - DIGEST_BYTES
        while left > 0:
            block = f.read(min(_CHUNK, left))
            if not block:
                raise _damaged(self.path, "truncated")
            digest.update(block)
            left -= len(block)
        if f.read(DIGEST_BYTES) != digest.digest():
            raise _damaged(self.path, "its digest does not match: damaged or truncated")
        return digest.hexdigest()

    def names(self, prefix: str = "") -> Iterator[str]:
        return (n for n in self.order if n.startswith(prefix))

    def _chunks(self, name: str) -> Iterator[bytes]:
        """The member's bytes in pieces of at most `_CHUNK`, checked against its size and
        digest: never more than its stated size is inflated, and a file cut short while
        it is read (replaced under the reader, say) is an error, not an endless loop."""
        m = self.members[name]
        self._f.seek(m["offset"])
        left = m["csize"]
        inflate = zlib.decompressobj()
        digest = hashlib.sha256()
        size = 0
        while left > 0:
            block = self._f.read(min(_CHUNK, left))
            if not block:
                raise _damaged(self.path, f"truncated while member {name!r} was read")
            left -= len(block)
            while block:
                try:
                    piece = inflate.decompress(block, min(_CHUNK, m["size"] - size + 1))
                except zlib.error as exc:
                    raise _damaged(self.path, f"member {name!r} does not decompress") from exc
                size += len(piece)
                if size > m["size"]:
                    raise _damaged(self.path, f"member {name!r} is larger than recorded")
                digest.update(piece)
                if piece:
                    yield piece
                tail = inflate.unconsumed_tail
                if inflate.eof or (not piece and len(tail) == len(block)):
                    break  # the end, or no progress (the checks below say which)
                block = tail
        if not inflate.eof or size != m["size"] or digest.hexdigest() != m["sha256"]:
            raise _damaged(self.path, f"member {name!r} does not match its digest")

    def read(self, name: str) -> bytes:
        return b"".join(self._chunks(name))

    def extract(self, name: str, dest: Path) -> None:
        """Write member ``name`` to the new file ``dest`` (never through a symlink)."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(dest, flags, 0o644)
        with os.fdopen(fd, "wb") as f:
            for piece in self._chunks(name):
                f.write(piece)
