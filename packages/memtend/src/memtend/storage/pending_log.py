"""The file in an embedded folder that holds acknowledged writes not yet moved into Chroma.

Each record is a length, a CRC-32 and the bytes of one op (:func:`memtend.storage.pending_ops.encode`), appended and
``fsync``'d before the write returns, so an acknowledged write survives a kill of the process or of the machine.
Reading stops at the first record that is cut short or fails its check: only a write that never returned can be
torn. The file is emptied once everything in it is in Chroma.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path

__all__ = ["LOG_NAME", "PendingLog"]

LOG_NAME = "memtend-pending.log"
_HEADER = struct.Struct("<II")  # payload length, CRC-32 of the payload


class PendingLog:
    """Append-only records in ``folder/LOG_NAME`` (the caller serialises every call)."""

    def __init__(self, folder: Path) -> None:
        self.path = Path(folder) / LOG_NAME
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        self.size = os.fstat(self._fd).st_size

    def records(self) -> Iterator[bytes]:
        """Every whole record in the file, oldest first."""
        with open(self.path, "rb") as f:
            data = f.read()
        pos = 0
        while pos + _HEADER.size <= len(data):
            length, crc = _HEADER.unpack_from(data, pos)
            body = data[pos + _HEADER.size : pos + _HEADER.size + length]
            if len(body) < length or zlib.crc32(body) != crc:
                return
            yield body
            pos += _HEADER.size + length

    def append(self, payloads: list[bytes]) -> None:
        """Append records and make them durable (one ``fsync`` for all of them)."""
        chunk = b"".join(_HEADER.pack(len(p), zlib.crc32(p)) + p for p in payloads)
        view = memoryview(chunk)
        try:
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            os.fsync(self._fd)
        except OSError:  # a disk full or failing: cut the torn record off, or later records would be unreadable
            os.ftruncate(self._fd, self.size)
            raise
        self.size += len(chunk)

    def clear(self) -> None:
        """Empty the file (everything in it is in Chroma)."""
        if self.size:
            os.ftruncate(self._fd, 0)
            os.fsync(self._fd)
            self.size = 0

    def close(self) -> None:
        os.close(self._fd)
