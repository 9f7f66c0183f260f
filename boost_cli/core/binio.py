"""Little-endian integer and float arrays: the byte order of every binary file boost writes,
whatever the machine's, so an index or vector store built on one machine reads on another."""

from __future__ import annotations

import sys
from array import array
from typing import Any, Sequence


def to_le(values: array[Any]) -> bytes:
    """``values`` as little-endian bytes (the argument is never modified)."""
    if sys.byteorder == "big":  # pragma: no cover - no big-endian CI machine
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def from_le(typecode: str, data: bytes) -> array[Any]:
    """An ``array(typecode)`` decoded from little-endian ``data``."""
    values = array(typecode)
    values.frombytes(data)
    if sys.byteorder == "big":  # pragma: no cover
        values.byteswap()
    return values


def u16_view(data: bytes) -> Sequence[int]:
    """``data`` (little-endian u16s) as a read-only sequence of ints: a view of the bytes
    on a little-endian machine (no copy; slices of it are views too), else a decoded
    array. For large tables read whole and then only indexed and sliced."""
    if sys.byteorder == "little":
        return memoryview(data).cast("H")
    return from_le("H", data)  # pragma: no cover - no big-endian CI machine
