"""The Confluent wire format around schema-registry payloads, read over a whole Arrow binary column at once.

A framed value is: magic byte 0, the schema id (4 bytes, big-endian), then for Protobuf only the message-
index list (zig-zag varints: a count, then the indexes into the file's nested messages; the list ``[0]`` is
written as a single 0 byte), then the payload. :func:`parse_confluent` finds, for every row, its schema id
and where its payload starts and ends, or why it is not framed (too short, wrong magic byte), in one
compiled pass over the column's buffers: no Python per record.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ..protocol.records._arrow import binary_parts
from ..protocol.records.pure.ints import encode_varint
from . import kernels as _kernels
from .vm.codes import E_OK, E_UNKNOWN_SCHEMA, message

MAGIC = 0
HEADER_SIZE = 5


@dataclass
class Frames:
    """Where each row's payload is, in ``data`` (the column's data buffer, read-only, not copied).

    ``status`` is E_OK, ROW_NULL, or an error code (``vm.codes``: E_SHORT, E_MAGIC, E_BAD_INDEXES);
    ``schema_id`` is -1 where the header could not be read. With message indexes (Protobuf),
    ``indexes[index_offsets[i]:index_offsets[i+1]]`` is row i's list.
    """

    data: np.ndarray
    start: np.ndarray  # int64, absolute positions in data
    end: np.ndarray  # int64
    schema_id: np.ndarray  # int64
    status: np.ndarray  # int32
    index_offsets: np.ndarray | None = None
    indexes: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.status.shape[0])

    def schema_ids(self) -> list[int]:
        """The distinct schema ids of the framed rows, sorted: fetch the unknown ones before decoding."""
        return [int(i) for i in np.unique(self.schema_id[self.status == E_OK])]

    def errors(self) -> np.ndarray:
        """Mask of the rows whose framing is wrong."""
        return self.status > E_OK

    def describe(self, row: int) -> str:
        """Why ``row`` is not framed, in words."""
        return message(int(self.status[row]))


def parse_confluent(values: pa.Array | pa.ChunkedArray, message_indexes: bool = False) -> Frames:
    """The framing of every row of a binary column (Kafka's ``value`` or ``key``), in one compiled pass. With
    ``message_indexes`` (Protobuf), the index list is read too and payloads start after it."""
    offsets, data, valid = binary_parts(values, "framed column")
    n = valid.shape[0]
    start = np.empty(n, dtype=np.int64)
    end = np.empty(n, dtype=np.int64)
    schema_id = np.empty(n, dtype=np.int64)
    status = np.empty(n, dtype=np.int32)
    k = _kernels.current()
    k.scan_headers(data, offsets, valid, start, end, schema_id, status)
    frames = Frames(data, start, end, schema_id, status)
    if message_indexes:
        index_offsets = np.zeros(n + 1, dtype=np.int64)
        indexes = np.zeros(max(1, int(np.maximum(end - start, 0)[status == E_OK].sum())), dtype=np.int64)
        with k.quiet():
            used = k.scan_message_indexes(data, frames.start, end, status, index_offsets, indexes)
        frames.index_offsets, frames.indexes = index_offsets, indexes[:used]
    return frames


def program_index(frames: Frames, known_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(which, status): per row, the position of its schema id in ``known_ids`` (sorted; -1 where there is
    none), and the rows' status with E_UNKNOWN_SCHEMA where the id is not known. ``frames`` is unchanged."""
    which = np.full(len(frames), -1, dtype=np.int64)
    status = frames.status.copy()
    ok = status == E_OK
    if known_ids.size and ok.any():
        pos = np.minimum(np.searchsorted(known_ids, frames.schema_id), known_ids.size - 1)
        hit = ok & (known_ids[pos] == frames.schema_id)
        which[hit] = pos[hit]
        status[ok & ~hit] = E_UNKNOWN_SCHEMA
    else:
        status[ok] = E_UNKNOWN_SCHEMA
    return which, status


def confluent_header(schema_id: int, message_indexes: list[int] | None = None) -> bytes:
    """The bytes before a payload: magic byte, schema id, and (Protobuf) the message-index list."""
    head = struct.pack(">bI", MAGIC, schema_id & 0xFFFFFFFF)
    if message_indexes is None:
        return head
    if list(message_indexes) == [0]:
        return head + b"\x00"
    return head + encode_varint(len(message_indexes)) + b"".join(encode_varint(i) for i in message_indexes)
