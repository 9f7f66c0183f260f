"""Reading a vectors file (`share`'s format) that anyone may have written: its header
checked field by field, its rows streamed one line at a time and each checked before it is
used, so a hostile or damaged file gets a `UsageError` naming what is wrong, and memory
stays bounded whatever the file's size.

What a row must be: a lowercase sha256 hex digest, strictly greater than the previous
row's (the export sorts them, so a repeated row is refused without remembering the rows),
and a base64 float32 vector of the header's dimensions whose values are all finite and
whose L2 norm is 1 (within `NORM_TOLERANCE`) when the parity block says ``normalisation:
l2`` (every store's: `store.identity`). A line is read with a length limit derived from
the dimensions, so one endless line cannot fill memory either. Pure Python: the same
checks hold with and without numpy.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from dataclasses import dataclass
from operator import mul
from pathlib import Path
from typing import Any, BinaryIO, Dict, Iterator, Optional, Tuple

from boost_cli.core.binio import from_le
from boost_cli.core.errors import UsageError
from boost_cli.core.paths import is_tap_name
from boost_cli.core.text import printable

FORMAT = "boost-vectors"
VERSION = 1
MAX_DIMENSIONS = 16384  # the largest models in use make 4,096; beyond this is not a model's
MAX_HEADER_BYTES = 1 << 20
NORM_TOLERANCE = 1e-3  # float32 rounding leaves ~1e-6; a real model's unit vector is far inside
_HASH = re.compile(rb"[0-9a-f]{64}\Z")
_WHOLE = re.compile(r"(0|[1-9][0-9]{0,8})\Z")
REEXPORT = "ask for a file written by 'boost vectors export'"


@dataclass(frozen=True)
class Header:
    """A vectors file's first line, checked: the tap (a valid tap name), its commit and
    source (as the file says: untrusted), the parity block, the row count and the
    vectors' dimensions (a whole number, from the parity block)."""

    tap: str
    commit: str
    source: str
    parity: Dict[str, str]
    count: int
    dimensions: int

    @property
    def unit(self) -> str:
        return self.parity.get("unit", "entry")

    @property
    def normalised(self) -> bool:
        return self.parity.get("normalisation") == "l2"


def _refuse(path: Path, what: str, fix: str = REEXPORT) -> UsageError:
    return UsageError(f"{path.name}{what}", fix)


def read_header(path: Path) -> Header:
    """The checked header of the vectors file at ``path``; `UsageError` naming what is
    wrong with it."""
    with _open(path) as fh:
        return _header(path, fh.readline(MAX_HEADER_BYTES + 1))


def _open(path: Path) -> BinaryIO:
    try:
        return open(path, "rb")  # noqa: SIM115 - the callers close it
    except OSError as exc:
        raise UsageError(f"cannot read {path} ({exc.strerror})", "check the path") from exc


def _header(path: Path, line: bytes) -> Header:
    not_ours = _refuse(path, " is not a boost vectors file")
    if len(line) > MAX_HEADER_BYTES:
        raise not_ours
    try:
        header = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):  # nested past Python's stack
        raise not_ours from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise not_ours
    version = header.get("version")
    if version != VERSION or isinstance(version, bool):
        raise UsageError(
            f"{path.name} is a version {printable(repr(version))[:40]} vectors file, this "
            f"boost reads version {VERSION}",
            "export it again with this version of boost",
        )
    tap = header.get("tap")
    if not isinstance(tap, str) or not tap:
        raise _refuse(path, " names no tap")
    if not is_tap_name(tap):
        raise _refuse(
            path,
            f" names an invalid tap {printable(repr(tap))[:120]} (a tap name is 1-100 of "
            "letters, digits, '.', '_' and '-', starting with a letter or digit)",
        )
    commit, source = header.get("commit", ""), header.get("source", "")
    if not isinstance(commit, str) or not isinstance(source, str):
        raise _refuse(path, " has a commit or source that is not text")
    parity = header.get("parity")
    if not isinstance(parity, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in parity.items()
    ):
        raise _refuse(path, " has no valid parity block")
    count = header.get("count")
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise _refuse(path, f" has a bad vector count ({printable(repr(count))[:40]})")
    for field in ("dimensions", "requested_dimensions"):
        value = parity.get(field, "0" if field == "requested_dimensions" else "")
        if not _WHOLE.match(value):
            raise _refuse(
                path,
                f"'s parity block has {field} {printable(repr(value))[:40]}, not a whole number",
            )
    dims = int(parity["dimensions"])
    if not 0 < dims <= MAX_DIMENSIONS:
        raise _refuse(path, f"'s parity block has {dims} dimensions (1-{MAX_DIMENSIONS} work)")
    return Header(tap, commit, source, {str(k): v for k, v in parity.items()}, count, dims)


def check_vector(blob: bytes, normalised: bool) -> Optional[str]:
    """Why the float32 vector ``blob`` cannot be used (not finite; not of unit length when
    ``normalised``), or None. The squares are summed in float64, where no float32 value
    overflows, so the sum is finite exactly when every value is."""
    values = from_le("f", blob)
    total = sum(map(mul, values, values))
    if not math.isfinite(total):
        return "holds a value that is not a finite number (NaN or infinity)"
    norm = math.sqrt(total)
    if normalised and abs(norm - 1.0) > NORM_TOLERANCE:
        return f"has length {norm:.6g}, but the parity block says the vectors are normalised"
    return None


def rows(path: Path, header: Header) -> Iterator[Tuple[str, bytes]]:
    """Every (text hash, float32 vector bytes) row of the file at ``path`` after its
    header, each checked (module docstring), streamed; `UsageError` at the first bad row,
    at a row past the header's count and, at the end, when fewer rows came."""
    width = 4 * header.dimensions
    limit = 64 + 4 * ((width + 2) // 3) + 16  # the digest, the base64, JSON's brackets
    previous = b""
    seen = 0
    with _open(path) as fh:
        fh.readline(MAX_HEADER_BYTES + 1)
        number = 1
        while True:
            line = fh.readline(limit + 1)
            if not line:
                break
            number += 1
            if len(line) > limit:
                raise _refuse(path, f": line {number} is too long for a vector")
            digest, blob = _row(path, number, line.rstrip(b"\r\n"), width)
            if digest <= previous:
                raise _refuse(path, f": line {number} repeats a row or is out of order")
            seen += 1
            if seen > header.count:
                raise _refuse(path, f" holds more rows than its header says ({header.count})")
            problem = check_vector(blob, header.normalised)
            if problem is not None:
                raise _refuse(path, f": the vector on line {number} {problem}")
            previous = digest
            yield digest.decode("ascii"), blob
    if seen != header.count:
        raise _refuse(path, " is truncated or damaged")


def _row(path: Path, number: int, line: bytes, width: int) -> Tuple[bytes, bytes]:
    """A row's (digest bytes, vector bytes), or `UsageError`: it is not a vector row."""
    bad = _refuse(path, f": line {number} is not a vector")
    try:
        parsed: Any = json.loads(line)
    except (ValueError, RecursionError):
        raise bad from None
    if not isinstance(parsed, list) or len(parsed) != 2:
        raise bad
    digest, encoded = parsed
    if not isinstance(digest, str) or not isinstance(encoded, str):
        raise bad
    raw = digest.encode("ascii", "replace")
    if not _HASH.match(raw):
        raise bad
    try:
        blob = base64.b64decode(encoded, validate=True)
    except (ValueError, binascii.Error):
        raise bad from None
    if len(blob) != width:
        raise bad
    return raw, blob
