"""How a checkpoint, a pending write and their places are laid out as memtend documents (pure, no I/O).

Per user, under the thread's id:
- checkpoints: namespace ``(CHECKPOINTS, thread_id, "ns:" + checkpoint_ns)``, key = checkpoint id, value = bytes
  framing (parent id, serde type, serde bytes, metadata type, metadata bytes);
- pending writes: ``(WRITES, thread_id, "ns:" + checkpoint_ns, checkpoint_id)``, key = ``task_id`` + index;
- run index: ``(RUNS, run_id, thread_id, "ns:" + checkpoint_ns)``, key = checkpoint id, empty value, so
  ``delete_for_runs`` finds a run's checkpoints without reading any checkpoint;
- latest: ``(LATEST, thread_id)``, key = ``"ns:" + checkpoint_ns``, value = the newest checkpoint id, and whether
  checkpoints were put in id order (LangGraph's own runs do; an older id put after a newer one does not), so
  ``get_tuple`` without an id reads two documents instead of ordering the thread, and a listing can read the
  store's insertion order backwards instead of sorting by key. A hint: when it names a checkpoint that is gone,
  the thread is ordered instead.
Checkpoint ids (uuid6) sort by time as strings, so key order is checkpoint order.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

CHECKPOINTS = "langgraph_checkpoints"
WRITES = "langgraph_writes"
RUNS = "langgraph_runs"
LATEST = "langgraph_latest"
NS_MARK = "ns:"  # checkpoint_ns "" (the root graph) is a label too; labels may not be empty
_MAGIC_CHECKPOINT = b"MTGC1"
_MAGIC_WRITE = b"MTGW1"
_LENGTH = struct.Struct(">I")

Namespace = tuple[str, ...]


def ns_label(checkpoint_ns: str) -> str:
    return NS_MARK + checkpoint_ns


def checkpoint_ns_of(label: str) -> str:
    return label[len(NS_MARK) :]


def checkpoints_ns(thread_id: str, checkpoint_ns: str | None = None) -> Namespace:
    """The namespace of one (thread, checkpoint_ns), or with ``checkpoint_ns=None`` the thread's prefix."""
    if checkpoint_ns is None:
        return (CHECKPOINTS, thread_id)
    return (CHECKPOINTS, thread_id, ns_label(checkpoint_ns))


def writes_ns(thread_id: str, checkpoint_ns: str | None = None, checkpoint_id: str | None = None) -> Namespace:
    if checkpoint_ns is None:
        return (WRITES, thread_id)
    if checkpoint_id is None:
        return (WRITES, thread_id, ns_label(checkpoint_ns))
    return (WRITES, thread_id, ns_label(checkpoint_ns), checkpoint_id)


def runs_ns(run_id: str, thread_id: str | None = None, checkpoint_ns: str | None = None) -> Namespace:
    if thread_id is None:
        return (RUNS, run_id)
    assert checkpoint_ns is not None
    return (RUNS, run_id, thread_id, ns_label(checkpoint_ns))


def latest_ns(thread_id: str) -> Namespace:
    return (LATEST, thread_id)


@dataclass(frozen=True)
class Latest:
    checkpoint_id: str
    in_order: bool = True

    def encode(self) -> bytes:
        return (self.checkpoint_id + ("" if self.in_order else _OUT_OF_ORDER)).encode()

    @classmethod
    def decode(cls, data: bytes) -> Latest:
        text = data.decode()
        if text.endswith(_OUT_OF_ORDER):
            return cls(text[: -len(_OUT_OF_ORDER)], in_order=False)
        return cls(text)

    def after_put(self, checkpoint_id: str) -> Latest:
        if checkpoint_id >= self.checkpoint_id:
            return Latest(checkpoint_id, self.in_order)
        return Latest(self.checkpoint_id, in_order=False)


_OUT_OF_ORDER = "|unordered"


def write_key(task_id: str, idx: int) -> str:
    return f"{task_id}#{idx}"


def _frame(magic: bytes, parts: Sequence[bytes]) -> bytes:
    out = bytearray(magic)
    for part in parts:
        out += _LENGTH.pack(len(part))
        out += part
    return bytes(out)


def _unframe(magic: bytes, data: bytes, count: int) -> list[bytes]:
    if not data.startswith(magic):
        raise ValueError("not a memtend-langgraph record (bad header)")
    view = memoryview(data)
    pos = len(magic)
    parts: list[bytes] = []
    for _ in range(count):
        (size,) = _LENGTH.unpack_from(view, pos)
        pos += _LENGTH.size
        parts.append(bytes(view[pos : pos + size]))
        pos += size
    return parts


@dataclass(frozen=True)
class StoredCheckpoint:
    parent_id: str | None
    checkpoint: tuple[str, bytes]
    metadata: tuple[str, bytes]

    def encode(self) -> bytes:
        return _frame(
            _MAGIC_CHECKPOINT,
            [
                (self.parent_id or "").encode(),
                self.checkpoint[0].encode(),
                self.checkpoint[1],
                self.metadata[0].encode(),
                self.metadata[1],
            ],
        )

    @classmethod
    def decode(cls, data: bytes) -> StoredCheckpoint:
        parent, ctype, cbytes, mtype, mbytes = _unframe(_MAGIC_CHECKPOINT, data, 5)
        return cls(parent.decode() or None, (ctype.decode(), cbytes), (mtype.decode(), mbytes))


@dataclass(frozen=True)
class StoredWrite:
    task_id: str
    channel: str
    value: tuple[str, bytes]
    task_path: str
    idx: int

    def encode(self) -> bytes:
        return _frame(
            _MAGIC_WRITE,
            [
                self.task_id.encode(),
                self.channel.encode(),
                self.value[0].encode(),
                self.value[1],
                self.task_path.encode(),
                str(self.idx).encode(),
            ],
        )

    @classmethod
    def decode(cls, data: bytes) -> StoredWrite:
        task_id, channel, vtype, vbytes, task_path, idx = _unframe(_MAGIC_WRITE, data, 6)
        return cls(task_id.decode(), channel.decode(), (vtype.decode(), vbytes), task_path.decode(), int(idx))

    def sort_key(self) -> tuple[str, str, int]:
        return (self.task_path, self.task_id, self.idx)
