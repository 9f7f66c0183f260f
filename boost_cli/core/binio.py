"""Little-endian integer and float arrays: the byte order of every binary file boost writes,
whatever the machine's, so an index or vector store built on one machine reads on another."""

from __future__ import annotations

import sys
from array import array
from typing import Any


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
