"""Record batch v2 encoding from Arrow columns (the produce side), and cutting rows into batches by size.

``_Columns`` holds canonical numpy views of the columns (no copy of keys and values); the kernels
``split_points``, ``encoded_records_size`` and ``encode_records`` do the per-record work; compression and
the batch header (CRC-32C by the crc32c library) are done here.
"""

from __future__ import annotations

import contextlib
import struct
import time

import crc32c as _crc32c
import numpy as np
import pyarrow as pa

from . import kernels as K
from ._arrow import _EMPTY_U8, binary_parts, header_parts, timestamp_column
from .compression import codec_id, compress
from .compilation.warming import kernels_for, register_sample

_HEADER = struct.Struct(">qiibIhiqqqhii")
assert _HEADER.size == K.V2_HEADER_SIZE


class _Columns:
    """Canonical numpy views of the columns of a produce request, and the kernels that encode them.

    Every array has one numba type whatever the input (e.g. timestamps are always a writable int64 array),
    so that one compiled version of each kernel serves every call.
    """

    __slots__ = ("n", "ts", "k_off", "k_data", "k_valid", "v_off", "v_data", "v_valid",
                 "h_list", "hk_off", "hk_data", "hv_off", "hv_data", "hv_valid", "kernels")

    def __init__(self, values, keys, timestamps_ms, headers, kernels=K):
        self.kernels = kernels
        self.v_off, self.v_data, self.v_valid = binary_parts(values, "values")
        n = self.n = self.v_valid.shape[0]
        if keys is None:
            self.k_off, self.k_data, self.k_valid = np.zeros(n + 1, np.int64), _EMPTY_U8, np.zeros(n, np.uint8)
        else:
            self.k_off, self.k_data, self.k_valid = binary_parts(keys, "keys")
            if self.k_valid.shape[0] != n:
                raise ValueError(f"keys has {self.k_valid.shape[0]} rows, values has {n}")
        if timestamps_ms is None:
            self.ts = np.full(n, int(time.time() * 1000), dtype=np.int64)
        elif isinstance(timestamps_ms, (int, np.integer)):
            self.ts = np.full(n, int(timestamps_ms), dtype=np.int64)
        else:
            self.ts = timestamp_column(timestamps_ms, n)
            if not self.ts.flags.writeable:  # a zero-copy view of an Arrow buffer
                self.ts = self.ts.copy()
        if headers is None:
            self.h_list = np.zeros(n + 1, np.int64)
            self.hk_off, self.hk_data = np.zeros(1, np.int64), _EMPTY_U8
            self.hv_off, self.hv_data, self.hv_valid = np.zeros(1, np.int64), _EMPTY_U8, np.zeros(0, np.uint8)
        else:
            self.h_list, (self.hk_off, self.hk_data, _), (self.hv_off, self.hv_data, self.hv_valid) = header_parts(
                headers, n
            )

    @property
    def nbytes(self) -> int:
        """Bytes of keys, values and headers: the work an encoding call has to do."""
        return sum(int(a.nbytes) for a in (self.ts, self.k_data, self.v_data, self.hk_data, self.hv_data))

    def size(self, first, last, base_ts):
        return self.kernels.encoded_records_size(
            first, last, base_ts, self.ts, self.k_off, self.k_valid, self.v_off, self.v_valid,
            self.h_list, self.hk_off, self.hv_off, self.hv_valid,
        )

    def encode_into(self, out, pos, first, last, base_ts):
        return self.kernels.encode_records(
            out, pos, first, last, base_ts, self.ts,
            self.k_off, self.k_data, self.k_valid, self.v_off, self.v_data, self.v_valid,
            self.h_list, self.hk_off, self.hk_data, self.hv_off, self.hv_data, self.hv_valid,
        )

    def encode_batch(self, first, last, *, codec, producer_id, producer_epoch, base_sequence, transactional,
                     base_offset, partition_leader_epoch) -> bytes:
        count = last - first
        if count <= 0:
            raise ValueError("a record batch needs at least one record")
        ts = self.ts[first:last]
        base_ts = int(ts[0])
        max_ts = int(ts.max())
        size = int(self.size(first, last, base_ts))
        hs = K.V2_HEADER_SIZE
        if codec == 0:
            buf = bytearray(hs + size)
            end = self.encode_into(np.frombuffer(buf, dtype=np.uint8), hs, first, last, base_ts)
        else:
            rec = np.empty(size, dtype=np.uint8)
            end = self.encode_into(rec, 0, first, last, base_ts)
            payload = compress(codec, rec)
            buf = bytearray(hs + len(payload))
            buf[hs:] = payload
            end = len(buf)
        assert end == len(buf), (end, len(buf))
        attrs = codec | (0x10 if transactional else 0)
        _HEADER.pack_into(
            buf, 0, base_offset, len(buf) - 12, partition_leader_epoch, 2, 0, attrs, count - 1,
            base_ts, max_ts, producer_id, producer_epoch, base_sequence, count,
        )
        struct.pack_into(">I", buf, 17, _crc32c.crc32c(memoryview(buf)[21:]))
        return bytes(buf)


@contextlib.contextmanager
def _columns_with_kernels(values, keys, timestamps_ms, headers):
    """``with _columns_with_kernels(...) as cols``: the columns, with the kernels ``warming`` chose for them."""
    cols = _Columns(values, keys, timestamps_ms, headers)
    with kernels_for("encode", cols.nbytes) as kernels:
        cols.kernels = kernels
        yield cols


def _check_producer(producer_id, producer_epoch, base_sequence, transactional):
    if transactional and producer_id < 0:
        raise ValueError("a transactional batch needs a producer id")
    if not (-(2**63) <= producer_id < 2**63 and -(2**15) <= producer_epoch < 2**15 and -(2**31) <= base_sequence < 2**31):
        raise ValueError("producer_id / producer_epoch / base_sequence out of range")


def encode_record_batch(
    values,
    keys=None,
    *,
    timestamps_ms=None,
    headers=None,
    compression: str = "none",
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    transactional: bool = False,
    base_offset: int = 0,
    partition_leader_epoch: int = -1,
) -> bytes:
    """Encodes one record batch (magic 2) from Arrow columns.

    ``values``/``keys``: binary, large_binary, string, large_string (or their
    view types, which are cast); nulls become null keys/values.
    ``timestamps_ms``: None (now), an int (all records), or one int64 per
    record (numpy array, sequence, or Arrow int64/timestamp array).
    ``headers``: list<struct<key: string|binary, value: binary|string>>
    (null lists = no headers; keys must not be null).
    Offset deltas are 0..n-1, timestamp type CreateTime, CRC-32C computed.
    """
    c = codec_id(compression)
    _check_producer(producer_id, producer_epoch, base_sequence, transactional)
    with _columns_with_kernels(values, keys, timestamps_ms, headers) as cols:
        return cols.encode_batch(
            0, cols.n, codec=c, producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=base_sequence,
            transactional=transactional, base_offset=base_offset, partition_leader_epoch=partition_leader_epoch,
        )


def split_batches(values, keys=None, *, timestamps_ms=None, headers=None, max_batch_bytes: int = 1 << 20) -> np.ndarray:
    """Row boundaries ``[0, b1, ..., n]`` cutting the rows into batches whose
    uncompressed v2 encoding (61-byte header included) is at most
    ``max_batch_bytes``; a record larger than that gets a batch of its own.
    Slice the columns with ``arr.slice(b[i], b[i+1] - b[i])`` (zero-copy) or
    use :func:`encode_record_batches`."""
    if max_batch_bytes <= K.V2_HEADER_SIZE:
        raise ValueError("max_batch_bytes must exceed the 61-byte batch header")
    with _columns_with_kernels(values, keys, 0 if timestamps_ms is None else timestamps_ms, headers) as cols:
        return _split(cols, max_batch_bytes)


def _split(cols: _Columns, max_batch_bytes: int) -> np.ndarray:
    return cols.kernels.split_points(
        max_batch_bytes, cols.ts, cols.k_off, cols.k_valid, cols.v_off, cols.v_valid,
        cols.h_list, cols.hk_off, cols.hv_off, cols.hv_valid,
    )


def encode_record_batches(
    values,
    keys=None,
    *,
    timestamps_ms=None,
    headers=None,
    compression: str = "none",
    max_batch_bytes: int = 1 << 20,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    transactional: bool = False,
    leave_last: bool = False,
) -> list[bytes]:
    """Cuts the rows with :func:`split_batches` and encodes each batch; the
    base sequence advances by each batch's record count (when >= 0).
    ``leave_last=True`` encodes every batch but the last, which may not be
    full yet (a producer keeps those rows open for more to join them)."""
    c = codec_id(compression)
    _check_producer(producer_id, producer_epoch, base_sequence, transactional)
    if max_batch_bytes <= K.V2_HEADER_SIZE:
        raise ValueError("max_batch_bytes must exceed the 61-byte batch header")
    with _columns_with_kernels(values, keys, timestamps_ms, headers) as cols:
        bounds = _split(cols, max_batch_bytes).tolist()
        if leave_last:
            bounds = bounds[:-1]
        out = []
        seq = base_sequence
        for first, last in zip(bounds[:-1], bounds[1:]):
            out.append(
                cols.encode_batch(
                    first, last, codec=c, producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=seq,
                    transactional=transactional, base_offset=0, partition_leader_epoch=-1,
                )
            )
            if seq >= 0:
                seq = (seq + last - first) & 0x7FFFFFFF
    return out


def _encode_sample(kernels) -> None:
    cols = _Columns(pa.array([b"value", None, b"v"]), pa.array([b"key", None, b"k"]), 0, None, kernels=kernels)
    assert _split(cols, 1 << 20).tolist() == [0, 3]
    cols.encode_batch(0, 3, codec=0, producer_id=-1, producer_epoch=-1, base_sequence=-1, transactional=False,
                      base_offset=0, partition_leader_epoch=-1)


register_sample("encode", _encode_sample)
