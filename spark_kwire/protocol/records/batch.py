"""Record batch v2 decode (plus legacy message sets) into columns.

Decoding a partition's ``Records`` bytes from a Fetch response takes a fixed
number of kernel calls however many batches the buffer holds:

1. ``count_entries`` / ``scan_entries``: walk the top-level entries (v2
   batches or legacy messages), validate header fields and checksums (large
   entries are checked afterwards with the hardware CRC libraries).
2. Per-entry keep flags with numpy (offset range, control batches) and, under
   read_committed, the Java consumer's aborted-transaction filter
   (``txn_filter``).
3. Decompression of the kept compressed entries (one library call each; the
   outputs are concatenated into one buffer ``b``).
4. ``decode_v2_regions`` (all v2) or ``decode_regions``: one pass over the
   records of every kept entry (in the fetched buffer or in ``b``) filling
   offset/timestamp/key/value/header position columns.
5. ``gather_binary`` (+ ``header_totals`` / ``header_fill``): copy key and
   value bytes into Arrow buffers.

The kernels are compiled by numba, or plain Python where numba is missing or
refused: ``kernels`` chooses at import, and this module calls them the same way.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

import crc32c as _crc32c
import numpy as np
import pyarrow as pa

from ..errors import ProtocolDecodeError
from . import kernels as K
from ._arrow import _EMPTY_U8, from_numpy, make_binary_array, readonly_u8
from .compression import CODEC_NAMES, DEFAULT_MAX_DECOMPRESSED_BYTES, DecompressedSizeError, decompress
from .legacy import wrapper_value_range
from .compilation.warming import kernels_for, register_sample

# v2 batches whose checksummed bytes exceed this are verified afterwards with
# the crc32c library (hardware speed, ~0.5 us per call plus Python overhead)
# instead of the table-driven kernel (~1.3 GB/s). With SSE4.2 the compiled
# kernel computes CRC-32C in hardware (~8 GB/s) and checks every v2 batch
# itself. Legacy messages (CRC-32) are always checked afterwards, with zlib.
CRC_INLINE_MAX = 2048
CRC32C_INLINE_MAX: int | None = None  # None: per kernels (above); an int overrides it (tests)


def _crc32c_inline_max(k) -> int:
    if CRC32C_INLINE_MAX is not None:
        return CRC32C_INLINE_MAX
    return K.INT64_MAX if k.HW_CRC32C else CRC_INLINE_MAX


_INT32_MAX = 2**31 - 1
_INT64_MIN = -(2**63)
_I64 = struct.Struct(">q")
_U32 = struct.Struct(">I")

HEADER_STRUCT_TYPE = pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())])
HEADERS_TYPE = pa.list_(HEADER_STRUCT_TYPE)


@dataclass
class DecodedRecords:
    """Columns of the records decoded from one partition's record set.

    ``headers`` is None unless requested; a record without headers has a null
    list (as Spark's Kafka source shows it), a header with a null value has a
    null ``value``.
    """

    offset: np.ndarray  # int64
    timestamp: np.ndarray  # int64, epoch ms; -1 when the format has none (magic 0)
    timestamp_type: np.ndarray  # int32: 0 CreateTime, 1 LogAppendTime, -1 none (magic 0)
    key: pa.Array  # binary (large_binary only past 2 GiB of keys)
    value: pa.Array  # binary (large_binary only past 2 GiB of values)
    headers: pa.Array | None  # list<struct<key: string, value: binary>>
    next_offset: int  # offset to fetch next
    bytes_decoded: int  # bytes of complete entries consumed from the buffer
    record_count: int
    topic: str = ""
    partition: int = -1
    batch_count: int = 0  # complete top-level entries (batches / legacy messages) seen
    trailing_bytes: int = 0  # bytes of an incomplete trailing entry (ignored)
    codecs: dict = field(default_factory=dict)  # codec name -> number of kept compressed entries

    def __len__(self) -> int:
        return self.record_count

    def to_arrow(self, *, timestamp_unit: str = "ms") -> pa.RecordBatch:
        """Spark Kafka source layout: key, value, topic, partition, offset,
        timestamp (timestamp[unit, UTC]), timestampType[, headers]."""
        n = self.record_count
        tb = self.topic.encode("utf-8")
        topic = pa.Array.from_buffers(
            pa.string(),
            n,
            [None, pa.py_buffer(np.arange(n + 1, dtype=np.int32) * len(tb)), pa.py_buffer(tb * n)],
        )
        ts = self.timestamp
        if timestamp_unit == "us":
            ts = ts * 1000
        elif timestamp_unit != "ms":
            raise ValueError("timestamp_unit must be 'ms' or 'us'")
        cols = [
            self.key,
            self.value,
            topic,
            from_numpy(np.full(n, self.partition, dtype=np.int32)),
            from_numpy(np.asarray(self.offset, dtype=np.int64)),
            from_numpy(np.asarray(ts, dtype=np.int64)).view(pa.timestamp(timestamp_unit, tz="UTC")),
            from_numpy(np.asarray(self.timestamp_type, dtype=np.int32)),
        ]
        names = ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]
        if self.headers is not None:
            cols.append(self.headers)
            names.append("headers")
        return pa.RecordBatch.from_arrays(cols, names=names)


def _fail(topic, partition, base_offset, code_or_msg) -> ProtocolDecodeError:
    msg = K.ERROR_MESSAGES.get(code_or_msg, str(code_or_msg)) if isinstance(code_or_msg, int) else code_or_msg
    return ProtocolDecodeError(
        f"corrupt record set for topic {topic!r} partition {partition}, "
        f"batch at base offset {base_offset}: {msg}"
    )


def _empty_binary() -> pa.Array:
    return pa.array([], type=pa.binary())


def _empty_result(next_offset, bytes_decoded, n_bytes, topic, partition, n_entries, include_headers):
    return DecodedRecords(
        offset=np.zeros(0, dtype=np.int64),
        timestamp=np.zeros(0, dtype=np.int64),
        timestamp_type=np.zeros(0, dtype=np.int32),
        key=_empty_binary(),
        value=_empty_binary(),
        headers=pa.array([], type=HEADERS_TYPE) if include_headers else None,
        next_offset=next_offset,
        bytes_decoded=bytes_decoded,
        record_count=0,
        topic=topic,
        partition=partition,
        batch_count=n_entries,
        trailing_bytes=n_bytes - bytes_decoded,
    )


def scan_record_set(buf) -> dict[str, np.ndarray]:
    """Header fields of every complete top-level entry of a record set (no
    record decoding): for diagnostics and tests. Checksums are verified."""
    a = readonly_u8(buf)
    with kernels_for("decode", a.shape[0]) as k:
        e = _scan(k, a, memoryview(a), "", -1)
        uncompressed_control = (e["ctrl"] == K.CTRL_UNPARSED) & ((e["attr"] & 7) == 0) & (e["count"] > 0)
        for i in np.flatnonzero(uncompressed_control).tolist():
            e["ctrl"][i] = _control_type_at(k, a, int(e["pos"][i]), int(e["size"][i]))
    return e


def _scan(k, a, mv, topic, partition):
    n_entries, end_pos, st, err_pos = k.count_entries(a)
    if st != K.OK:
        raise _fail(topic, partition, _I64.unpack_from(mv, err_pos)[0], st)
    n = int(n_entries)
    e = {
        name: np.empty(n, dtype=np.int64)
        for name in ("pos", "size", "magic", "attr", "base_offset", "last_delta", "count", "pid", "base_ts", "max_ts",
                     "ctrl")
    }
    e["crc_deferred"] = np.empty(n, dtype=np.uint8)
    st, idx = k.scan_entries(
        a, n, _crc32c_inline_max(k), e["pos"], e["size"], e["magic"], e["attr"], e["base_offset"], e["last_delta"],
        e["count"], e["pid"], e["base_ts"], e["max_ts"], e["ctrl"], e["crc_deferred"],
    )
    if st != K.OK:
        raise _fail(topic, partition, int(e["base_offset"][idx]), st)
    for i in np.flatnonzero(e["crc_deferred"]).tolist():
        p = int(e["pos"][i])
        end = p + int(e["size"][i])
        if e["magic"][i] == 2:
            ok = _crc32c.crc32c(mv[p + 21 : end]) == _U32.unpack_from(mv, p + 17)[0]
        else:
            ok = zlib.crc32(mv[p + 16 : end]) == _U32.unpack_from(mv, p + 12)[0]
        if not ok:
            raise _fail(topic, partition, int(e["base_offset"][i]), K.E_CRC)
    e["end_pos"] = int(end_pos)
    return e


def _control_type_at(k, a, p: int, size: int) -> int:
    """ControlRecordType (``CTRL_*``) of the uncompressed control batch of ``size`` bytes at ``a[p]``."""
    return int(k.control_type(a, p + K.V2_HEADER_SIZE, p + size))


def _control_type_py(k, data: bytes) -> int:
    """ControlRecordType of the first record of a decompressed control batch."""
    return int(k.control_type(readonly_u8(data), 0, len(data)))


def decode_record_set(
    buf,
    *,
    start_offset: int,
    end_offset: int | None = None,
    read_committed: bool = False,
    aborted_transactions: list[tuple[int, int]] | None = None,
    include_headers: bool = False,
    topic: str = "",
    partition: int = -1,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
) -> DecodedRecords:
    """Decodes the ``Records`` bytes of one partition of a Fetch response.

    ``buf``: any contiguous bytes-like object (bytes, bytearray, memoryview,
    uint8 numpy array); not copied. Records with offset < ``start_offset`` or
    >= ``end_offset`` are dropped, control batches are never returned, and
    with ``read_committed`` the batches of ``aborted_transactions``
    ((producer_id, first_offset) pairs from the Fetch response) are dropped
    following the Java consumer's algorithm. A trailing incomplete batch is
    ignored. ``next_offset`` is the offset after the last complete batch (also
    when its records were filtered out), at least ``start_offset`` and at most
    ``end_offset``. Raises ProtocolDecodeError on corrupt input, and its
    subclass DecompressedSizeError when the compressed batches of ``buf``
    together would inflate to more than ``max_decompressed_bytes``.
    """
    a = readonly_u8(buf)
    with kernels_for("decode_headers" if include_headers else "decode", a.shape[0]) as k:
        return _decode(k, a, start_offset, end_offset, read_committed, aborted_transactions, include_headers, topic,
                       partition, max_decompressed_bytes)


def _decode(k, a, start_offset, end_offset, read_committed, aborted_transactions, include_headers, topic, partition,
            max_decompressed_bytes) -> DecodedRecords:
    """decode_record_set with the kernels ``k``."""
    mv = memoryview(a)
    n_bytes = a.shape[0]
    start_offset = int(start_offset)
    end = K.INT64_MAX if end_offset is None else int(end_offset)
    e = _scan(k, a, mv, topic, partition)
    n_entries = e["pos"].shape[0]
    bytes_decoded = e["end_pos"]
    if n_entries == 0:
        return _empty_result(start_offset, 0, n_bytes, topic, partition, 0, include_headers)

    magic = e["magic"]
    attr = e["attr"]
    base_offset = e["base_offset"]
    is_v2 = magic == 2
    codec = attr & 7
    last_offset = base_offset + np.where(is_v2, e["last_delta"], 0)
    first_offset = np.where(is_v2 | (codec == 0), base_offset, _INT64_MIN)
    nxt = max(int(last_offset[-1]) + 1, start_offset)
    if nxt > end:
        nxt = max(end, start_offset)
    is_control = is_v2 & ((attr & 0x20) != 0)
    keep = (last_offset >= start_offset) & (first_offset < end) & ~is_control

    if read_committed and aborted_transactions:
        ctrl = e["ctrl"]
        for i in np.flatnonzero((ctrl == K.CTRL_UNPARSED) & (e["pid"] >= 0)).tolist():
            p, size = int(e["pos"][i]), int(e["size"][i])
            if codec[i] == 0:
                ctrl[i] = _control_type_at(k, a, p, size) if e["count"][i] > 0 else K.CTRL_UNKNOWN
            else:  # decompressed even when it declares no records: corrupt data fails as it always did
                data = _decompress_entry(mv, p, size, 2, int(codec[i]), topic, partition, int(base_offset[i]),
                                         max_decompressed_bytes, max_decompressed_bytes)
                ctrl[i] = _control_type_py(k, data) if e["count"][i] > 0 else K.CTRL_UNKNOWN
        ab = np.asarray(aborted_transactions, dtype=np.int64).reshape(-1, 2)
        order = np.argsort(ab[:, 1], kind="stable")
        ab_pid = np.ascontiguousarray(ab[order, 0])
        ab_first = np.ascontiguousarray(ab[order, 1])
        st, idx = k.txn_filter(magic, attr, e["pid"], last_offset, ctrl, ab_pid, ab_first, np.unique(ab_pid), keep)
        if st != K.OK:
            raise _fail(topic, partition, int(base_offset[idx]), st)

    kept = np.flatnonzero(keep)
    if kept.shape[0] == 0:
        return _empty_result(nxt, bytes_decoded, n_bytes, topic, partition, n_entries, include_headers)

    k_magic = magic[kept]
    k_attr = attr[kept]
    k_codec = codec[kept]
    k_pos = e["pos"][kept]
    k_size = e["size"][kept]
    k_v2 = k_magic == 2
    reg = np.empty((K.R_ROWS, kept.shape[0]), dtype=np.int64)
    reg[K.R_SRC] = 0
    reg[K.R_START] = np.where(k_v2, k_pos + K.V2_HEADER_SIZE, k_pos)
    reg[K.R_END] = k_pos + k_size
    reg[K.R_KIND] = np.where(k_v2, K.KIND_V2, np.where(k_codec == 0, k_magic, K.KIND_INNER0 + k_magic))
    reg[K.R_COUNT] = e["count"][kept]
    reg[K.R_BASE_OFFSET] = base_offset[kept]
    reg[K.R_BASE_TS] = e["base_ts"][kept]
    reg[K.R_MAX_TS] = e["max_ts"][kept]
    reg[K.R_TS_TYPE] = np.where(k_v2 | (k_magic == 1), (k_attr >> 3) & 1, -1)
    caps = np.where(k_v2, reg[K.R_COUNT], 1)
    # like the Java client, a v2 batch declaring no records is not decompressed
    empty_comp = k_v2 & (reg[K.R_COUNT] == 0) & (k_codec != 0)
    reg[K.R_END] = np.where(empty_comp, reg[K.R_START], reg[K.R_END])

    codecs: dict[str, int] = {}
    comp = np.flatnonzero((k_codec != 0) & ~empty_comp)
    if comp.shape[0]:
        chunks = []
        cur = 0
        for j in comp.tolist():
            p = int(k_pos[j])
            mg = int(k_magic[j])
            c = int(k_codec[j])
            bo = int(base_offset[kept[j]])
            data = _decompress_entry(mv, p, int(k_size[j]), mg, c, topic, partition, bo,
                                     max_decompressed_bytes - cur, max_decompressed_bytes)
            ln = len(data)
            if mg == 2:
                if int(reg[K.R_COUNT, j]) * K.V2_MIN_RECORD_SIZE > ln:
                    raise _fail(topic, partition, bo, K.E_RECORD_COUNT)
            else:
                caps[j] = ln // K.LEGACY_MIN_SIZE + 1
            chunks.append(data)
            reg[K.R_SRC, j] = 1
            reg[K.R_START, j] = cur
            reg[K.R_END, j] = cur + ln
            cur += ln
            name = CODEC_NAMES[c]
            codecs[name] = codecs.get(name, 0) + 1
        b = readonly_u8(chunks[0] if len(chunks) == 1 else b"".join(chunks))
    else:
        b = _EMPTY_U8

    cap = int(caps.sum())
    out = np.empty((K.O_ROWS, cap), dtype=np.int64)
    # modern data needs only the v2 kernel, which does not compile the legacy code
    decode_regions = k.decode_v2_regions if (reg[K.R_KIND] == K.KIND_V2).all() else k.decode_regions
    n, st, r = decode_regions(a, b, reg, start_offset, end, out)
    if st != K.OK:
        raise _fail(topic, partition, int(base_offset[kept[r]]), st)
    n = int(n)
    if n == 0:
        res = _empty_result(nxt, bytes_decoded, n_bytes, topic, partition, n_entries, include_headers)
        res.codecs = codecs
        return res
    o_offset = out[K.O_OFFSET, :n]
    o_klen = out[K.O_KLEN, :n]
    o_vlen = out[K.O_VLEN, :n]
    o_kpos = out[K.O_KPOS, :n]
    o_vpos = out[K.O_VPOS, :n]
    o_hpos = out[K.O_HPOS, :n]
    o_hcnt = out[K.O_HCNT, :n]
    key = _gather(k, a, b, o_kpos, o_klen)
    value = _gather(k, a, b, o_vpos, o_vlen)
    headers = _build_headers(k, a, b, o_hpos, o_hcnt, topic, partition) if include_headers else None
    return DecodedRecords(
        offset=o_offset.copy(),
        timestamp=out[K.O_TS, :n].copy(),
        timestamp_type=out[K.O_TS_TYPE, :n].astype(np.int32),
        key=key,
        value=value,
        headers=headers,
        next_offset=nxt,
        bytes_decoded=bytes_decoded,
        record_count=n,
        topic=topic,
        partition=partition,
        batch_count=n_entries,
        trailing_bytes=n_bytes - bytes_decoded,
        codecs=codecs,
    )


def _decompress_entry(mv, p, size, magic, codec, topic, partition, base_offset, max_bytes, limit) -> bytes:
    """The payload of one compressed batch or wrapper; ``max_bytes`` is what is left of ``limit``, the bound on
    all that one decode call inflates."""
    if magic == 2:
        payload = mv[p + K.V2_HEADER_SIZE : p + size]
        legacy_magic = None
    else:
        try:
            vs, ve = wrapper_value_range(mv, p, size, magic)
        except ValueError as exc:
            raise _fail(topic, partition, base_offset, exc.args[0]) from None
        payload = mv[vs:ve]
        legacy_magic = magic
    try:
        return decompress(codec, payload, legacy_magic=legacy_magic, max_bytes=max_bytes)
    except DecompressedSizeError as exc:
        raise DecompressedSizeError(
            exc.codec, limit, f"record set for topic {topic!r} partition {partition}, batch at base offset "
            f"{base_offset}", "decompressed data per fetched partition") from None
    except ProtocolDecodeError as exc:
        raise _fail(topic, partition, base_offset, str(exc)) from exc


def _gather(k, a, b, pos, length) -> pa.Array:
    n = pos.shape[0]
    total = int(np.maximum(length, 0).sum(dtype=np.int64))
    offsets = np.empty(n + 1, dtype=np.int32 if total <= _INT32_MAX else np.int64)
    data = np.empty(total, dtype=np.uint8)
    k.gather_binary(a, b, pos, length, offsets, data)
    valid = length >= 0
    return make_binary_array(offsets, data, None if valid.all() else valid, n)


def _build_headers(k, a, b, hpos, hcnt, topic, partition) -> pa.Array:
    n = hpos.shape[0]
    nh, kb, vb = (int(x) for x in k.header_totals(a, b, hpos, hcnt))
    if nh > _INT32_MAX or kb > _INT32_MAX or vb > _INT32_MAX:
        raise _fail(topic, partition, -1, "record headers exceed 2 GiB")
    list_offsets = np.empty(n + 1, dtype=np.int32)
    k_offsets = np.empty(nh + 1, dtype=np.int32)
    v_offsets = np.empty(nh + 1, dtype=np.int32)
    k_data = np.empty(kb, dtype=np.uint8)
    v_data = np.empty(vb, dtype=np.uint8)
    v_valid = np.empty(nh, dtype=np.uint8)
    k.header_fill(a, b, hpos, hcnt, list_offsets, k_offsets, k_data, v_offsets, v_data, v_valid)
    keys = pa.Array.from_buffers(pa.string(), nh, [None, pa.py_buffer(k_offsets), pa.py_buffer(k_data)])
    try:
        keys.validate(full=True)
    except pa.ArrowInvalid:
        # Java decodes header keys with new String(bytes, UTF_8), which
        # replaces malformed sequences with U+FFFD; do the same (rare path)
        raw = k_data.tobytes()
        keys = pa.array(
            [raw[k_offsets[h] : k_offsets[h + 1]].decode("utf-8", "replace") for h in range(nh)], type=pa.string()
        )
    vmask = v_valid.view(np.bool_)
    values = make_binary_array(v_offsets, v_data, None if vmask.all() else vmask, nh)
    structs = pa.StructArray.from_arrays([keys, values], fields=list(HEADER_STRUCT_TYPE))
    has = hcnt > 0
    if has.all():
        vbuf, nulls = None, 0
    else:
        vbuf, nulls = pa.py_buffer(np.packbits(has, bitorder="little")), int(n - np.count_nonzero(has))
    return pa.Array.from_buffers(
        HEADERS_TYPE, n, [vbuf, pa.py_buffer(list_offsets)], null_count=nulls, children=[structs]
    )


def _sample_fetch() -> np.ndarray:
    """Two small v2 batches (plain and lz4, with headers), encoded by the pure-Python kernels."""
    from . import pure
    from .encoding import _Columns

    headers = pa.array([[{"key": "h", "value": b"v"}], None], type=HEADERS_TYPE)
    cols = _Columns(pa.array([b"value", None]), pa.array([b"key", None]), 0, headers, kernels=pure)
    batches = [cols.encode_batch(0, 2, codec=codec, producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                 transactional=False, base_offset=2 * i, partition_leader_epoch=-1)
               for i, codec in enumerate((0, 3))]
    return readonly_u8(b"".join(batches))


def _decode_sample(kernels, include_headers: bool) -> None:
    res = _decode(kernels, _sample_fetch(), 0, None, False, None, include_headers, "", -1,
                  DEFAULT_MAX_DECOMPRESSED_BYTES)
    assert res.record_count == 4, res.record_count


register_sample("decode", lambda kernels: _decode_sample(kernels, False))
register_sample("decode_headers", lambda kernels: _decode_sample(kernels, True))

# the encoding side lives in encoding.py; these names stay importable from here
from .encoding import encode_record_batch, encode_record_batches, split_batches  # noqa: E402,F401
