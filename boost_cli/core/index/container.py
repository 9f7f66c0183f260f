"""The container every index data file is: a header, a JSON table of contents, and
8-byte-aligned, CRC32-checked sections; written whole by `pack`, read by `Container`.

Layout (docs/index-format.md): header (magic, format version, TOC length and CRC32), a JSON
table of contents ``{"meta": ..., "sections": {name: [offset, length, crc32]}}``, then the
sections. Integers are little-endian `array` dumps (`binio`).
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from array import array
from pathlib import Path
from typing import Any, BinaryIO, Callable, Dict, List, Optional, Sequence, Tuple

from boost_cli.core.binio import from_le
from boost_cli.core.index.layout import FORMAT_VERSION, damaged, mismatch

HEAD = struct.Struct("<8sIII")  # magic, format version, table of contents: length, CRC32


def dumps(value: Any) -> bytes:
    """Deterministic compact JSON (sorted keys; unknown types as str)."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    ).encode("utf-8")


def pack(magic: bytes, meta: Dict[str, Any], sections: Sequence[Tuple[str, bytes]]) -> bytes:
    """One container file: header, table of contents, aligned sections."""
    table: Dict[str, List[int]] = {}
    pos = 0
    for name, data in sections:
        table[name] = [pos, len(data), zlib.crc32(data)]
        pos += len(data) + (-len(data) % 8)
    toc = dumps({"meta": meta, "sections": table})
    head = HEAD.pack(magic, FORMAT_VERSION, len(toc), zlib.crc32(toc)) + toc
    head += b"\0" * (-len(head) % 8)
    parts = [head]
    for _, data in sections:
        parts.append(data)
        parts.append(b"\0" * (-len(data) % 8))
    return b"".join(parts)


_os_pread: Optional[Callable[[int, int, int], bytes]]  # os.pread, where there is one
if hasattr(os, "pread"):
    _os_pread = os.pread

    def pread(fh: BinaryIO, offset: int, size: int) -> bytes:
        return os.pread(fh.fileno(), size, offset)

else:  # pragma: no cover - Windows: no pread; a reader is used from one thread
    _os_pread = None

    def pread(fh: BinaryIO, offset: int, size: int) -> bytes:
        fh.seek(offset)
        return fh.read(size)


class Container:
    """A read-only view of one container file, read with positioned reads.

    Opening reads the header and the table of contents only. Sections read whole are
    checked against their CRC32; random-access reads are bounds-checked and must not
    come back short (`verify` checks every CRC).
    """

    def __init__(self, path: Path, magic: bytes) -> None:
        self.path = path
        name = path.name
        self.fh: BinaryIO = open(path, "rb", buffering=0)  # noqa: SIM115 - kept open while in use
        self._fd = self.fh.fileno()
        try:
            self.size = os.fstat(self.fh.fileno()).st_size
            head = self.read_at(0, HEAD.size)
            got_magic, version, toc_len, toc_crc = HEAD.unpack(head)
            if got_magic != magic:
                raise damaged(f"{name} has a bad header")
            if version != FORMAT_VERSION:
                raise mismatch(version)
            self.toc_end = HEAD.size + toc_len
            data_start = self.data_start = self.toc_end + (-self.toc_end % 8)
            raw_toc = self.read_at(HEAD.size, toc_len) if self.toc_end <= self.size else b""
            if len(raw_toc) != toc_len or zlib.crc32(raw_toc) != toc_crc:
                raise damaged(f"{name} has a bad table of contents")
            try:
                toc = json.loads(raw_toc)
                self.meta: Dict[str, Any] = toc["meta"]
                self.sections: Dict[str, Tuple[int, int, int]] = {
                    k: (data_start + int(v[0]), int(v[1]), int(v[2]))
                    for k, v in toc["sections"].items()
                }
            except (ValueError, KeyError, TypeError, IndexError) as exc:
                raise damaged(f"{name} has a bad table of contents") from exc
            for sec, (off, length, _) in self.sections.items():
                if off + length > self.size:
                    raise damaged(f"{name} is truncated (section {sec})")
        except OSError as exc:
            self.fh.close()
            raise damaged(f"{name} cannot be read: {exc.strerror or exc}") from exc
        except BaseException:
            self.fh.close()
            raise

    def close(self) -> None:
        self.fh.close()

    def read_at(self, offset: int, size: int) -> bytes:
        data = pread(self.fh, offset, size) if size > 0 else b""
        if len(data) != size:
            raise damaged(f"{self.path.name} is truncated")
        return data

    def span(self, name: str) -> Tuple[int, int]:
        try:
            off, length, _ = self.sections[name]
        except KeyError:
            raise damaged(f"{self.path.name} has no section {name}") from None
        return off, length

    def read(self, name: str, check: bool = True) -> bytes:
        off, length = self.span(name)
        data = self.read_at(off, length)
        if check and zlib.crc32(data) != self.sections[name][2]:
            raise damaged(f"{self.path.name}: checksum mismatch in {name}")
        return data

    def ints(self, name: str, typecode: str, check: bool = True) -> array[int]:
        data = self.read(name, check)
        if len(data) % array(typecode).itemsize:
            raise damaged(f"{self.path.name}: bad length of {name}")
        return from_le(typecode, data)

    def slice(self, span: Tuple[int, int], start: int, end: int) -> bytes:
        """Bytes ``[start, end)`` of a section, bounds-checked."""
        if not 0 <= start <= end <= span[1]:
            raise damaged(f"{self.path.name}: a reference points outside its table")
        size = end - start
        if _os_pread is None or not size:  # no pread (Windows), or nothing to read
            return self.read_at(span[0] + start, size)
        # `read_at` inlined: a query makes thousands of these small reads (dictionary
        # rows, frontiers, posting lists: ~6,600 for a long task at 10x)
        data = _os_pread(self._fd, size, span[0] + start)
        if len(data) != size:
            raise damaged(f"{self.path.name} is truncated")
        return data

    def verify(self) -> bytes:
        """Check every byte: each section's CRC32, and zeros in the padding between them.
        Returns the file's bytes (so a caller needs not read them again)."""
        data = self.read_at(0, self.size)
        pos = self.data_start
        if data[self.toc_end : pos].strip(b"\0"):
            raise damaged(f"{self.path.name}: garbage after the table of contents")
        for name, (off, length, crc) in sorted(self.sections.items(), key=lambda x: x[1]):
            if off < pos or data[pos:off].strip(b"\0"):
                raise damaged(f"{self.path.name}: garbage before section {name}")
            if zlib.crc32(data[off : off + length]) != crc:
                raise damaged(f"{self.path.name}: checksum mismatch in {name}")
            pos = off + length
        end = pos + (-pos % 8)
        if end != self.size or data[pos:end].strip(b"\0"):
            raise damaged(f"{self.path.name}: unexpected bytes at the end")
        return data
