"""Numba kernels of the record-batch layer.

Every kernel here works on numpy arrays only (no Python objects per record),
bounds-checks every read against an explicit end position, and reports
problems by returning an error code (see ``E_*`` and ``ERROR_MESSAGES``) that
the Python side turns into :class:`ProtocolDecodeError`. Loops are bounded by
the input size: each record consumes at least one byte and every declared
count is checked against the bytes available before anything is allocated.

Plain-Python reference implementations of each kernel live in
``reference.py``; the tests check that both agree.

Conventions
-----------
* Byte buffers are 1-d ``uint8`` arrays, passed read-only (one numba
  signature for every caller).
* Integers are handled as ``int64`` inside the kernels, even unsigned 32-bit
  quantities (CRCs, murmur2 state): this avoids numba's float promotion when
  signed and unsigned 64-bit integers are mixed.
* Every kernel is ``nogil``: decoding can overlap network I/O in threads.
* CRC-32C uses the SSE4.2 instruction when the host has it (``HW_CRC32C``),
  else slicing-by-8 tables; CRC-32 (legacy) always uses tables.
* Positions in the "virtual" address space used by the record decoder:
  ``pos < len(a)`` points into buffer ``a`` (the fetched bytes), larger
  positions point into buffer ``b`` (concatenated decompressed payloads) at
  ``pos - len(a)``.
"""

from __future__ import annotations

import platform

import llvmlite.binding as _llvm
import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

# ---------------------------------------------------------------------------
# error codes
# ---------------------------------------------------------------------------
OK = 0
E_BATCH_LENGTH = 1
E_MAGIC = 2
E_CRC = 3
E_CODEC = 4
E_RECORD_COUNT = 5
E_VARINT = 6
E_RECORD_LENGTH = 7
E_FIELD_LENGTH = 8
E_RECORD_SIZE = 9
E_TRAILING = 10
E_LEGACY_SIZE = 11
E_LEGACY_NESTED = 12
E_LEGACY_INNER_MAGIC = 13
E_LEGACY_EMPTY = 14
E_LEGACY_TRUNCATED = 15
E_CAPACITY = 16
E_HEADER_KEY = 17
E_CONTROL = 18
E_LEGACY_NULL_WRAPPER = 19

ERROR_MESSAGES = {
    E_BATCH_LENGTH: "batch/message length is smaller than the minimum for its format",
    E_MAGIC: "unsupported magic byte",
    E_CRC: "checksum mismatch (corrupt batch)",
    E_CODEC: "unknown compression codec",
    E_RECORD_COUNT: "record count is negative or larger than the batch can hold",
    E_VARINT: "malformed varint",
    E_RECORD_LENGTH: "record length is invalid or points past the end of the batch",
    E_FIELD_LENGTH: "key/value/header length is invalid or points past the end of the record",
    E_RECORD_SIZE: "record length does not match the bytes of its fields",
    E_TRAILING: "record count does not match the records in the batch",
    E_LEGACY_SIZE: "legacy message size does not match its key and value",
    E_LEGACY_NESTED: "compressed legacy message contains a compressed inner message",
    E_LEGACY_INNER_MAGIC: "inner message magic differs from the wrapper's magic",
    E_LEGACY_EMPTY: "compressed legacy message has no inner messages",
    E_LEGACY_TRUNCATED: "truncated inner message in a compressed legacy message",
    E_CAPACITY: "more records than the batch headers declare",
    E_HEADER_KEY: "record header key is null",
    E_CONTROL: "malformed control record",
    E_LEGACY_NULL_WRAPPER: "compressed legacy message has a null value",
}

V2_HEADER_SIZE = 61
V2_MIN_RECORD_SIZE = 7  # length varint + attributes + 5 one-byte varints
LEGACY_MIN_SIZE = 26  # offset + size + crc + magic + attributes + key len + value len
INT64_MAX = np.iinfo(np.int64).max

# kinds of decode regions
KIND_LEGACY0 = 0  # one uncompressed top-level magic-0 message
KIND_LEGACY1 = 1  # one uncompressed top-level magic-1 message
KIND_V2 = 2  # the records section of a v2 batch (in place or decompressed)
KIND_INNER0 = 3  # decompressed inner message set of a magic-0 wrapper
KIND_INNER1 = 4  # decompressed inner message set of a magic-1 wrapper

CTRL_ABORT = 0
CTRL_COMMIT = 1
CTRL_UNKNOWN = -1  # not a control batch, or a type other than abort/commit
CTRL_MALFORMED = -2
CTRL_UNPARSED = -3  # compressed control batch: parsed on the Python side


# ---------------------------------------------------------------------------
# memcpy between uint8 arrays (numba's slice assignment is ~3x slower for the
# short copies of keys and values); callers guarantee the ranges are valid
# ---------------------------------------------------------------------------
@intrinsic
def _memcpy_u8(typingctx, dst, dst_off, src, src_off, n):
    sig = types.void(dst, dst_off, src, src_off, n)

    def codegen(context, builder, signature, args):
        dst_v, doff, src_v, soff, n_v = args
        dary = context.make_array(signature.args[0])(context, builder, dst_v)
        sary = context.make_array(signature.args[2])(context, builder, src_v)
        dptr = builder.gep(dary.data, [doff])
        sptr = builder.gep(sary.data, [soff])
        cgutils.raw_memcpy(builder, dptr, sptr, n_v, 1)
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, inline="always")
def copy_bytes(dst, dst_off, src, src_off, n):
    """dst[dst_off:dst_off+n] = src[src_off:src_off+n] (ranges already checked)."""
    _memcpy_u8(dst, np.int64(dst_off), src, np.int64(src_off), np.int64(n))


# ---------------------------------------------------------------------------
# CRC tables (slicing-by-8, reflected polynomials)
# ---------------------------------------------------------------------------
def _make_crc_tables(poly: int) -> np.ndarray:
    t = np.zeros((8, 256), dtype=np.int64)
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        t[0, i] = c
    for i in range(256):
        c = int(t[0, i])
        for k in range(1, 8):
            c = int(t[0, c & 0xFF]) ^ (c >> 8)
            t[k, i] = c
    return t


CRC32C_TABLE = _make_crc_tables(0x82F63B78)  # Castagnoli, record batch v2
CRC32_TABLE = _make_crc_tables(0xEDB88320)  # zlib / IEEE, legacy messages


@njit(cache=True, inline="always")
def _crc_table(t, buf, start, end):
    c = np.int64(0xFFFFFFFF)
    i = start
    while i + 8 <= end:
        lo = c ^ (
            np.int64(buf[i])
            | (np.int64(buf[i + 1]) << 8)
            | (np.int64(buf[i + 2]) << 16)
            | (np.int64(buf[i + 3]) << 24)
        )
        c = (
            t[7, lo & 0xFF]
            ^ t[6, (lo >> 8) & 0xFF]
            ^ t[5, (lo >> 16) & 0xFF]
            ^ t[4, lo >> 24]
            ^ t[3, buf[i + 4]]
            ^ t[2, buf[i + 5]]
            ^ t[1, buf[i + 6]]
            ^ t[0, buf[i + 7]]
        )
        i += 8
    while i < end:
        c = t[0, (c ^ np.int64(buf[i])) & 0xFF] ^ (c >> 8)
        i += 1
    return c ^ 0xFFFFFFFF


def _host_has_sse42() -> bool:
    try:
        return platform.machine().lower() in ("x86_64", "amd64") and "+sse4.2" in _llvm.get_host_cpu_features().flatten()
    except Exception:  # pragma: no cover - exotic hosts
        return False


# SSE4.2 has a CRC-32C instruction; numba compiles for the host CPU (and its
# cache is keyed by CPU name and features), so the choice made here at import
# is the one baked into the compiled kernels.
HW_CRC32C = _host_has_sse42()


@intrinsic
def _hw_crc32c_u64(typingctx, crc, v):
    sig = types.int64(types.int64, types.int64)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i64, i64]),
                                            "llvm.x86.sse42.crc32.64.64")
        return builder.call(fn, args)

    return sig, codegen


@intrinsic
def _hw_crc32c_u8(typingctx, crc, v):
    sig = types.int64(types.int64, types.int64)

    def codegen(context, builder, signature, args):
        i32 = ir.IntType(32)
        i8 = ir.IntType(8)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i32, [i32, i8]),
                                            "llvm.x86.sse42.crc32.32.8")
        c = builder.trunc(args[0], i32)
        b = builder.trunc(args[1], i8)
        return builder.zext(builder.call(fn, [c, b]), ir.IntType(64))

    return sig, codegen


@intrinsic
def _load_u64_le(typingctx, arr, off):
    """Unaligned 8-byte little-endian load from a uint8 array (caller checks bounds)."""
    sig = types.int64(arr, types.int64)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        ptr = builder.gep(ary.data, [args[1]])
        p64 = builder.bitcast(ptr, ir.IntType(64).as_pointer())
        return builder.load(p64, align=1)

    return sig, codegen


@njit(cache=True, inline="always")
def _crc32c_hw(buf, start, end):
    c = np.int64(0xFFFFFFFF)
    i = np.int64(start)
    while i + 8 <= end:
        c = _hw_crc32c_u64(c, _load_u64_le(buf, i))
        i += 8
    while i < end:
        c = _hw_crc32c_u8(c, np.int64(buf[i]))
        i += 1
    return (c ^ 0xFFFFFFFF) & 0xFFFFFFFF


if HW_CRC32C:

    @njit(cache=True, inline="always")
    def crc32c_range(buf, start, end):
        """CRC-32C of ``buf[start:end]`` (caller guarantees the range is valid)."""
        return _crc32c_hw(buf, start, end)

else:

    @njit(cache=True, inline="always")
    def crc32c_range(buf, start, end):
        """CRC-32C of ``buf[start:end]`` (caller guarantees the range is valid)."""
        return _crc_table(CRC32C_TABLE, buf, start, end)


@njit(cache=True, nogil=True)
def crc32c_table_range(buf, start, end):
    """Table-driven CRC-32C (the fallback without SSE4.2; tested everywhere)."""
    return _crc_table(CRC32C_TABLE, buf, start, end)


@njit(cache=True, nogil=True)
def crc32c_hw_range(buf, start, end):
    """SSE4.2 CRC-32C; only call when HW_CRC32C."""
    return _crc32c_hw(buf, start, end)


@njit(cache=True, inline="always")
def crc32_range(buf, start, end):
    """CRC-32 (zlib) of ``buf[start:end]``."""
    return _crc_table(CRC32_TABLE, buf, start, end)


# ---------------------------------------------------------------------------
# fixed-width big-endian reads (caller bounds-checks)
# ---------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _u32(buf, p):
    return (
        (np.int64(buf[p]) << 24)
        | (np.int64(buf[p + 1]) << 16)
        | (np.int64(buf[p + 2]) << 8)
        | np.int64(buf[p + 3])
    )


@njit(cache=True, inline="always")
def _i32(buf, p):
    v = _u32(buf, p)
    if v >= 0x80000000:
        v -= 0x100000000
    return v


@njit(cache=True, inline="always")
def _i16(buf, p):
    v = (np.int64(buf[p]) << 8) | np.int64(buf[p + 1])
    if v >= 0x8000:
        v -= 0x10000
    return v


@njit(cache=True, inline="always")
def _i64(buf, p):
    return (_u32(buf, p) << 32) | _u32(buf, p + 4)


# ---------------------------------------------------------------------------
# varints (zig-zag, as Kafka's ByteUtils.readVarint / readVarlong)
# ---------------------------------------------------------------------------
@njit(cache=True, inline="always")
def read_varint(buf, pos, end):
    """Returns (value, new_pos); new_pos == -1 on a malformed or truncated varint.

    At most 5 bytes; the value is truncated to 32 bits like Java's int.
    """
    value = np.int64(0)
    shift = 0
    while True:
        if pos >= end:
            return np.int64(0), np.int64(-1)
        b = np.int64(buf[pos])
        pos += 1
        if b < 0x80:
            value |= b << shift
            break
        value |= (b & 0x7F) << shift
        shift += 7
        if shift > 28:
            return np.int64(0), np.int64(-1)
    value &= 0xFFFFFFFF
    return (value >> 1) ^ -(value & 1), np.int64(pos)


@njit(cache=True, inline="always")
def read_varlong(buf, pos, end):
    """Returns (value, new_pos); new_pos == -1 on error. At most 10 bytes."""
    value = np.int64(0)
    shift = 0
    while True:
        if pos >= end:
            return np.int64(0), np.int64(-1)
        b = np.int64(buf[pos])
        pos += 1
        if b < 0x80:
            value |= b << shift
            break
        value |= (b & 0x7F) << shift
        shift += 7
        if shift > 63:
            return np.int64(0), np.int64(-1)
    return ((value >> 1) & 0x7FFFFFFFFFFFFFFF) ^ -(value & 1), np.int64(pos)


@njit(cache=True, inline="always")
def varint_size(v):
    """Encoded size of the zig-zag varint/varlong of ``v``."""
    z = (v << 1) ^ (v >> 63)
    n = 1
    while (z & ~np.int64(0x7F)) != 0:
        z = (z >> 7) & 0x01FFFFFFFFFFFFFF
        n += 1
    return n


@njit(cache=True, inline="always")
def write_varint(out, pos, v):
    """Writes the zig-zag varint of ``v`` at ``out[pos]``; returns the new position."""
    z = (v << 1) ^ (v >> 63)
    while (z & ~np.int64(0x7F)) != 0:
        out[pos] = np.uint8((z & 0x7F) | 0x80)
        pos += 1
        z = (z >> 7) & 0x01FFFFFFFFFFFFFF
    out[pos] = np.uint8(z)
    return pos + 1


# ---------------------------------------------------------------------------
# pass 1: find the complete top-level entries (v2 batches / legacy messages)
# ---------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def count_entries(buf):
    """Walks the entry length fields.

    Returns (n_complete, end_of_last_complete, status, error_pos). A trailing
    incomplete entry (or fewer than the bytes needed to read its length and
    magic) is ignored, as the Java consumer does.
    """
    n = buf.shape[0]
    p = np.int64(0)
    count = np.int64(0)
    while p + 17 <= n:
        size = _i32(buf, p + 8)
        magic = np.int64(buf[p + 16])
        if magic == 2:
            if size < V2_HEADER_SIZE - 12:
                return count, p, E_BATCH_LENGTH, p
        elif magic == 1:
            if size < LEGACY_MIN_SIZE - 12 + 8:
                return count, p, E_BATCH_LENGTH, p
        elif magic == 0:
            if size < LEGACY_MIN_SIZE - 12:
                return count, p, E_BATCH_LENGTH, p
        else:
            if size < LEGACY_MIN_SIZE - 12:
                return count, p, E_BATCH_LENGTH, p
            if p + 12 + size <= n:
                return count, p, E_MAGIC, p
            break
        if p + 12 + size > n:
            break
        p += 12 + size
        count += 1
    return count, p, OK, np.int64(-1)


@njit(cache=True, inline="always")
def _control_type(buf, p, end):
    """ControlRecordType of the first record of an uncompressed control batch."""
    length, q = read_varint(buf, p, end)
    if q < 0 or length < 6 or q + length > end:
        return CTRL_MALFORMED
    rend = q + length
    q += 1  # attributes
    _, q = read_varlong(buf, q, rend)
    if q < 0:
        return CTRL_MALFORMED
    _, q = read_varint(buf, q, rend)
    if q < 0:
        return CTRL_MALFORMED
    klen, q = read_varint(buf, q, rend)
    if q < 0 or klen < 4 or q + klen > rend:
        return CTRL_MALFORMED
    if _i16(buf, q) < 0:
        return CTRL_MALFORMED
    t = _i16(buf, q + 2)
    if t == CTRL_ABORT or t == CTRL_COMMIT:
        return t
    return CTRL_UNKNOWN


@njit(cache=True, nogil=True)
def scan_entries(
    buf,
    n_entries,
    crc32c_inline_max,
    crc32_inline_max,
    e_pos,
    e_size,
    e_magic,
    e_attr,
    e_base_offset,
    e_last_delta,
    e_count,
    e_pid,
    e_base_ts,
    e_max_ts,
    e_ctrl,
    e_crc_deferred,
):
    """Fills the per-entry arrays for the ``n_entries`` found by count_entries.

    Validates magic, codec, record count and the checksum (entries whose
    checksummed region is larger than ``crc32c_inline_max`` (v2) or
    ``crc32_inline_max`` (legacy) are flagged in
    ``e_crc_deferred`` for the caller to check with a hardware CRC library).
    Returns (status, entry_index).
    """
    p = np.int64(0)
    for i in range(n_entries):
        size = 12 + _i32(buf, p + 8)
        end = p + size
        magic = np.int64(buf[p + 16])
        e_pos[i] = p
        e_size[i] = size
        e_magic[i] = magic
        e_base_offset[i] = _i64(buf, p)
        e_crc_deferred[i] = 0
        e_ctrl[i] = CTRL_UNKNOWN
        if magic == 2:
            attr = _i16(buf, p + 21)
            e_attr[i] = attr
            codec = attr & 7
            if codec > 4:
                return E_CODEC, i
            e_last_delta[i] = _i32(buf, p + 23)
            e_base_ts[i] = _i64(buf, p + 27)
            e_max_ts[i] = _i64(buf, p + 35)
            e_pid[i] = _i64(buf, p + 43)
            count = _i32(buf, p + 57)
            e_count[i] = count
            if count < 0:
                return E_RECORD_COUNT, i
            if codec == 0 and count * V2_MIN_RECORD_SIZE > size - V2_HEADER_SIZE:
                return E_RECORD_COUNT, i
            if end - (p + 21) > crc32c_inline_max:
                e_crc_deferred[i] = 1
            elif crc32c_range(buf, p + 21, end) != _u32(buf, p + 17):
                return E_CRC, i
            if (attr & 0x20) != 0:
                if codec != 0:
                    e_ctrl[i] = CTRL_UNPARSED
                elif count > 0:
                    e_ctrl[i] = _control_type(buf, p + V2_HEADER_SIZE, end)
        else:
            attr = np.int64(buf[p + 17])
            e_attr[i] = attr
            if (attr & 7) > 3:
                return E_CODEC, i
            e_last_delta[i] = 0
            e_count[i] = 1
            e_pid[i] = -1
            if magic == 1:
                ts = _i64(buf, p + 18)
            else:
                ts = np.int64(-1)
            e_base_ts[i] = ts
            e_max_ts[i] = ts
            if end - (p + 16) > crc32_inline_max:
                e_crc_deferred[i] = 1
            elif crc32_range(buf, p + 16, end) != _u32(buf, p + 12):
                return E_CRC, i
        p = end
    return OK, np.int64(-1)


# ---------------------------------------------------------------------------
# read_committed: the Java consumer's aborted-transaction filter
# ---------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def txn_filter(e_magic, e_attr, e_pid, e_last_offset, e_ctrl, ab_pid_sorted, ab_first_sorted, uniq_pids, keep):
    """Clears ``keep`` for batches of aborted transactions.

    ``ab_*_sorted``: the fetch response's aborted transactions ordered by
    first offset. ``uniq_pids``: sorted unique producer ids among them.
    Walks the batches in order; before each batch with a producer id, every
    aborted transaction whose first offset <= the batch's last offset marks its
    producer aborted; an ABORT control marker of a producer clears the mark;
    a transactional batch of a marked producer is dropped.
    Returns (status, entry_index).
    """
    active = np.zeros(uniq_pids.shape[0], dtype=np.uint8)
    q = 0
    nab = ab_pid_sorted.shape[0]
    npid = uniq_pids.shape[0]
    for i in range(e_magic.shape[0]):
        if e_magic[i] != 2 or e_pid[i] < 0:
            continue
        lo = e_last_offset[i]
        while q < nab and ab_first_sorted[q] <= lo:
            j = np.searchsorted(uniq_pids, ab_pid_sorted[q])
            active[j] = 1
            q += 1
        pid = e_pid[i]
        j = np.searchsorted(uniq_pids, pid)
        known = j < npid and uniq_pids[j] == pid
        if (e_attr[i] & 0x20) != 0:
            c = e_ctrl[i]
            if c == CTRL_MALFORMED or c == CTRL_UNPARSED:
                return E_CONTROL, i
            if c == CTRL_ABORT and known:
                active[j] = 0
        elif (e_attr[i] & 0x10) != 0 and known and active[j] != 0:
            keep[i] = False
    return OK, np.int64(-1)


# ---------------------------------------------------------------------------
# pass 2: walk the records of every kept region into column arrays
# ---------------------------------------------------------------------------
# rows of the region table (int64, shape (R_ROWS, n_regions))
R_SRC, R_START, R_END, R_KIND, R_COUNT, R_BASE_OFFSET, R_BASE_TS, R_MAX_TS, R_TS_TYPE = range(9)
R_ROWS = 9
# rows of the output table (int64, shape (O_ROWS, capacity))
O_OFFSET, O_TS, O_TS_TYPE, O_KPOS, O_KLEN, O_VPOS, O_VLEN, O_HPOS, O_HCNT = range(9)
O_ROWS = 9
# (two 2-d tables instead of ~20 1-d arrays: every array passed to a numba
# function costs reference counting, ~150 ns per call for 20 arrays, which
# matters for batches of a single record)


@njit(cache=True, nogil=True)
def _v2_records(buf, base, s, e, count, base_offset, base_ts, max_ts, ts_type, start_offset, end_offset, n, out):
    cap = out.shape[1]
    pos = s
    for _ in range(count):
        if pos >= e:
            return E_TRAILING, n  # fewer records than declared
        length, pos = read_varint(buf, pos, e)
        if pos < 0:
            return E_VARINT, n
        if length < 6 or length > e - pos:
            return E_RECORD_LENGTH, n
        rend = pos + length
        pos += 1  # record attributes (unused)
        tsd, pos = read_varlong(buf, pos, rend)
        if pos < 0:
            return E_VARINT, n
        od, pos = read_varint(buf, pos, rend)
        if pos < 0:
            return E_VARINT, n
        klen, pos = read_varint(buf, pos, rend)
        if pos < 0:
            return E_VARINT, n
        if klen < -1 or klen > rend - pos:
            return E_FIELD_LENGTH, n
        kpos = pos
        if klen > 0:
            pos += klen
        vlen, pos = read_varint(buf, pos, rend)
        if pos < 0:
            return E_VARINT, n
        if vlen < -1 or vlen > rend - pos:
            return E_FIELD_LENGTH, n
        vpos = pos
        if vlen > 0:
            pos += vlen
        hcnt, pos = read_varint(buf, pos, rend)
        if pos < 0:
            return E_VARINT, n
        if hcnt < 0 or hcnt > rend - pos:
            return E_FIELD_LENGTH, n
        hpos = pos
        for _h in range(hcnt):
            hk, pos = read_varint(buf, pos, rend)
            if pos < 0:
                return E_VARINT, n
            if hk < 0:
                return E_HEADER_KEY, n
            if hk > rend - pos:
                return E_FIELD_LENGTH, n
            pos += hk
            hv, pos = read_varint(buf, pos, rend)
            if pos < 0:
                return E_VARINT, n
            if hv < -1 or hv > rend - pos:
                return E_FIELD_LENGTH, n
            if hv > 0:
                pos += hv
        if pos != rend:
            return E_RECORD_SIZE, n
        off = base_offset + od
        if off >= start_offset and off < end_offset:
            if n >= cap:
                return E_CAPACITY, n
            out[O_OFFSET, n] = off
            out[O_TS, n] = max_ts if ts_type == 1 else base_ts + tsd
            out[O_TS_TYPE, n] = ts_type
            out[O_KPOS, n] = base + kpos
            out[O_KLEN, n] = klen
            out[O_VPOS, n] = base + vpos
            out[O_VLEN, n] = vlen
            out[O_HPOS, n] = base + hpos
            out[O_HCNT, n] = hcnt
            n += 1
    if pos != e:
        return E_TRAILING, n
    return OK, n


@njit(cache=True, nogil=True)
def _legacy_message(buf, p, end, check_crc):
    """Parses one legacy message at ``p`` (must lie within ``[p, end)``).

    Returns (status, msg_end, offset, magic, attributes, timestamp,
    key_pos, key_len, value_pos, value_len).
    """
    z = np.int64(0)
    if p + 12 > end:
        return E_LEGACY_TRUNCATED, z, z, z, z, z, z, z, z, z
    size = _i32(buf, p + 8)
    if size < LEGACY_MIN_SIZE - 12:
        return E_BATCH_LENGTH, z, z, z, z, z, z, z, z, z
    if size > end - p - 12:
        return E_LEGACY_TRUNCATED, z, z, z, z, z, z, z, z, z
    mend = p + 12 + size
    offset = _i64(buf, p)
    magic = np.int64(buf[p + 16])
    if magic > 1:
        return E_MAGIC, z, z, z, z, z, z, z, z, z
    attr = np.int64(buf[p + 17])
    if magic == 1:
        if size < LEGACY_MIN_SIZE - 12 + 8:
            return E_BATCH_LENGTH, z, z, z, z, z, z, z, z, z
        ts = _i64(buf, p + 18)
        q = p + 26
    else:
        ts = np.int64(-1)
        q = p + 18
    klen = _i32(buf, q)
    q += 4
    if klen < -1 or klen > mend - q - 4:
        return E_LEGACY_SIZE, z, z, z, z, z, z, z, z, z
    kpos = q
    if klen > 0:
        q += klen
    vlen = _i32(buf, q)
    q += 4
    vpos = q
    if vlen > 0:
        q += vlen
    if vlen < -1 or q != mend:
        return E_LEGACY_SIZE, z, z, z, z, z, z, z, z, z
    if check_crc and crc32_range(buf, p + 16, mend) != _u32(buf, p + 12):
        return E_CRC, z, z, z, z, z, z, z, z, z
    return OK, mend, offset, magic, attr, ts, kpos, klen, vpos, vlen


@njit(cache=True, inline="always")
def _emit_legacy(out, n, base, off, ts, ts_type, kpos, klen, vpos, vlen):
    out[O_OFFSET, n] = off
    out[O_TS, n] = ts
    out[O_TS_TYPE, n] = ts_type
    out[O_KPOS, n] = base + kpos
    out[O_KLEN, n] = klen
    out[O_VPOS, n] = base + vpos
    out[O_VLEN, n] = vlen
    out[O_HPOS, n] = -1
    out[O_HCNT, n] = 0


@njit(cache=True, nogil=True)
def _legacy_inner(buf, base, s, e, wrapper_magic, wrapper_offset, wrapper_ts, wrapper_ts_type,
                  start_offset, end_offset, n, out):
    cap = out.shape[1]
    # pass 1: validate, find the last inner offset
    p = s
    last_rel = np.int64(0)
    inner = 0
    while p < e:
        st, mend, off, magic, attr, ts, kpos, klen, vpos, vlen = _legacy_message(buf, p, e, True)
        if st != OK:
            return st, n
        if magic != wrapper_magic:
            return E_LEGACY_INNER_MAGIC, n
        if (attr & 7) != 0:
            return E_LEGACY_NESTED, n
        last_rel = off
        inner += 1
        p = mend
    if inner == 0:
        return E_LEGACY_EMPTY, n
    # pass 2: emit
    p = s
    while p < e:
        st, mend, off, magic, attr, ts, kpos, klen, vpos, vlen = _legacy_message(buf, p, e, False)
        if wrapper_magic > 0:
            off = wrapper_offset - last_rel + off
        if off >= start_offset and off < end_offset:
            if n >= cap:
                return E_CAPACITY, n
            if magic == 0:
                ts = np.int64(-1)
                tt = np.int64(-1)
            elif wrapper_ts_type == 1:
                ts = wrapper_ts
                tt = np.int64(1)
            else:
                tt = (attr >> 3) & 1
            _emit_legacy(out, n, base, off, ts, tt, kpos, klen, vpos, vlen)
            n += 1
        p = mend
    return OK, n


@njit(cache=True, nogil=True)
def decode_regions(a, b, reg, start_offset, end_offset, out):
    """Decodes every region (columns of ``reg``, see R_*) into the columns
    of ``out`` (rows O_*); records outside ``[start_offset, end_offset)``
    are validated but not emitted.

    Returns (n_records, status, region_index).
    """
    a_len = np.int64(a.shape[0])
    n = np.int64(0)
    for r in range(reg.shape[1]):
        if reg[R_SRC, r] == 0:
            buf = a
            base = np.int64(0)
        else:
            buf = b
            base = a_len
        kind = reg[R_KIND, r]
        s = reg[R_START, r]
        e = reg[R_END, r]
        if kind == KIND_V2:
            st, n = _v2_records(buf, base, s, e, reg[R_COUNT, r], reg[R_BASE_OFFSET, r], reg[R_BASE_TS, r],
                                reg[R_MAX_TS, r], reg[R_TS_TYPE, r], start_offset, end_offset, n, out)
        elif kind == KIND_LEGACY0 or kind == KIND_LEGACY1:
            st, mend, off, magic, attr, ts, kpos, klen, vpos, vlen = _legacy_message(buf, s, e, False)
            if st == OK and mend != e:
                st = E_LEGACY_SIZE
            if st == OK and off >= start_offset and off < end_offset:
                if n >= out.shape[1]:
                    st = E_CAPACITY
                else:
                    tt = (attr >> 3) & 1 if magic == 1 else np.int64(-1)
                    _emit_legacy(out, n, base, off, ts, tt, kpos, klen, vpos, vlen)
                    n += 1
        else:
            st, n = _legacy_inner(buf, base, s, e, kind - KIND_INNER0, reg[R_BASE_OFFSET, r], reg[R_BASE_TS, r],
                                  reg[R_TS_TYPE, r], start_offset, end_offset, n, out)
        if st != OK:
            return n, st, np.int64(r)
    return n, OK, np.int64(-1)


# ---------------------------------------------------------------------------
# pass 3: gather bytes into Arrow buffers
# ---------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def gather_binary(a, b, pos, length, out_offsets, out_data):
    """Copies the (pos, length) slices (length -1 = null) into one data buffer.

    ``out_offsets`` (int32 or int64, n+1) receives Arrow offsets.
    Returns the number of bytes written.
    """
    a_len = a.shape[0]
    o = 0
    n = pos.shape[0]
    for i in range(n):
        out_offsets[i] = o
        ln = length[i]
        if ln > 0:
            p = pos[i]
            if p < a_len:
                copy_bytes(out_data, o, a, p, ln)
            else:
                q = p - a_len
                copy_bytes(out_data, o, b, q, ln)
            o += ln
    out_offsets[n] = o
    return o


@njit(cache=True, nogil=True)
def header_totals(a, b, hpos, hcnt):
    """Returns (n_headers, key_bytes, value_bytes) of the (already validated) headers."""
    a_len = a.shape[0]
    nh = np.int64(0)
    kb = np.int64(0)
    vb = np.int64(0)
    for i in range(hpos.shape[0]):
        c = hcnt[i]
        if c <= 0:
            continue
        p = hpos[i]
        if p < a_len:
            buf = a
        else:
            buf = b
            p -= a_len
        end = buf.shape[0]
        for _ in range(c):
            hk, p = read_varint(buf, p, end)
            p += hk
            kb += hk
            hv, p = read_varint(buf, p, end)
            if hv > 0:
                p += hv
                vb += hv
            nh += 1
    return nh, kb, vb


@njit(cache=True, nogil=True)
def header_fill(a, b, hpos, hcnt, list_offsets, k_offsets, k_data, v_offsets, v_data, v_valid):
    a_len = a.shape[0]
    h = 0
    ko = 0
    vo = 0
    n = hpos.shape[0]
    for i in range(n):
        list_offsets[i] = h
        c = hcnt[i]
        if c <= 0:
            continue
        p = hpos[i]
        if p < a_len:
            buf = a
        else:
            buf = b
            p -= a_len
        end = buf.shape[0]
        for _ in range(c):
            hk, p = read_varint(buf, p, end)
            k_offsets[h] = ko
            copy_bytes(k_data, ko, buf, p, hk)
            ko += hk
            p += hk
            hv, p = read_varint(buf, p, end)
            v_offsets[h] = vo
            if hv >= 0:
                v_valid[h] = 1
                copy_bytes(v_data, vo, buf, p, hv)
                vo += hv
                p += hv
            else:
                v_valid[h] = 0
            h += 1
    list_offsets[n] = h
    k_offsets[h] = ko
    v_offsets[h] = vo
    return h


# ---------------------------------------------------------------------------
# encoding (record batch v2) from Arrow buffers
# ---------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _slot_len(offsets, valid, i):
    if valid[i] == 0:
        return np.int64(-1)
    return offsets[i + 1] - offsets[i]


@njit(cache=True, nogil=True)
def record_body_size(
    i, first, base_ts, ts,
    k_off, k_valid, v_off, v_valid,
    h_list, hk_off, hv_off, hv_valid,
):
    """Size of record ``i``'s body (everything after its length varint) in a
    batch whose first record is ``first`` with base timestamp ``base_ts``."""
    size = 1 + varint_size(ts[i] - base_ts) + varint_size(i - first)
    kl = _slot_len(k_off, k_valid, i)
    size += varint_size(kl) + max(kl, 0)
    vl = _slot_len(v_off, v_valid, i)
    size += varint_size(vl) + max(vl, 0)
    h0 = h_list[i]
    h1 = h_list[i + 1]
    size += varint_size(h1 - h0)
    for h in range(h0, h1):
        hk = hk_off[h + 1] - hk_off[h]
        size += varint_size(hk) + hk
        hv = _slot_len(hv_off, hv_valid, h)
        size += varint_size(hv) + max(hv, 0)
    return size


@njit(cache=True, nogil=True)
def encoded_records_size(
    first, last, base_ts, ts, k_off, k_valid, v_off, v_valid, h_list, hk_off, hv_off, hv_valid,
):
    total = np.int64(0)
    for i in range(first, last):
        body = record_body_size(
            i, first, base_ts, ts, k_off, k_valid, v_off, v_valid, h_list, hk_off, hv_off, hv_valid
        )
        total += varint_size(body) + body
    return total


@njit(cache=True, nogil=True)
def encode_records(
    out, pos, first, last, base_ts, ts,
    k_off, k_data, k_valid, v_off, v_data, v_valid,
    h_list, hk_off, hk_data, hv_off, hv_data, hv_valid,
):
    """Writes records ``first..last-1`` at ``out[pos]`` (out must be large
    enough: see encoded_records_size). Returns the end position."""
    for i in range(first, last):
        body = record_body_size(
            i, first, base_ts, ts, k_off, k_valid, v_off, v_valid, h_list, hk_off, hv_off, hv_valid
        )
        pos = write_varint(out, pos, body)
        out[pos] = 0  # record attributes
        pos += 1
        pos = write_varint(out, pos, ts[i] - base_ts)
        pos = write_varint(out, pos, i - first)
        kl = _slot_len(k_off, k_valid, i)
        pos = write_varint(out, pos, kl)
        if kl > 0:
            s = k_off[i]
            copy_bytes(out, pos, k_data, s, kl)
            pos += kl
        vl = _slot_len(v_off, v_valid, i)
        pos = write_varint(out, pos, vl)
        if vl > 0:
            s = v_off[i]
            copy_bytes(out, pos, v_data, s, vl)
            pos += vl
        h0 = h_list[i]
        h1 = h_list[i + 1]
        pos = write_varint(out, pos, h1 - h0)
        for h in range(h0, h1):
            s = hk_off[h]
            hk = hk_off[h + 1] - s
            pos = write_varint(out, pos, hk)
            copy_bytes(out, pos, hk_data, s, hk)
            pos += hk
            hv = _slot_len(hv_off, hv_valid, h)
            pos = write_varint(out, pos, hv)
            if hv > 0:
                s = hv_off[h]
                copy_bytes(out, pos, hv_data, s, hv)
                pos += hv
    return pos


@njit(cache=True, nogil=True)
def split_points(max_bytes, ts, k_off, k_valid, v_off, v_valid, h_list, hk_off, hv_off, hv_valid):
    """Greedy cut of rows into batches whose uncompressed v2 encoding is at
    most ``max_bytes`` (a single larger record gets a batch of its own).
    Returns the boundaries [0, b1, ..., n]."""
    n = ts.shape[0]
    bounds = np.empty(n + 1, dtype=np.int64)
    nb = 0
    bounds[0] = 0
    first = 0
    size = np.int64(V2_HEADER_SIZE)
    i = 0
    while i < n:
        body = record_body_size(
            i, first, ts[first], ts, k_off, k_valid, v_off, v_valid, h_list, hk_off, hv_off, hv_valid
        )
        rs = varint_size(body) + body
        if i > first and size + rs > max_bytes:
            nb += 1
            bounds[nb] = i
            first = i
            size = np.int64(V2_HEADER_SIZE)
            continue  # recompute the size relative to the new batch start
        size += rs
        i += 1
    if n > 0:
        nb += 1
        bounds[nb] = n
    return bounds[: nb + 1].copy()


# ---------------------------------------------------------------------------
# murmur2 (Java client's Utils.murmur2) over Arrow binary buffers
# ---------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _murmur2(data, s, length):
    m = np.int64(0x5BD1E995)
    h = (np.int64(0x9747B28C) ^ length) & 0xFFFFFFFF
    n4 = length // 4
    for j in range(n4):
        q = s + 4 * j
        k = (
            np.int64(data[q])
            | (np.int64(data[q + 1]) << 8)
            | (np.int64(data[q + 2]) << 16)
            | (np.int64(data[q + 3]) << 24)
        )
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> 24
        k = (k * m) & 0xFFFFFFFF
        h = (h * m) & 0xFFFFFFFF
        h ^= k
    tail = s + (length & ~3)
    rem = length & 3
    if rem == 3:
        h ^= np.int64(data[tail + 2]) << 16
    if rem >= 2:
        h ^= np.int64(data[tail + 1]) << 8
    if rem >= 1:
        h ^= np.int64(data[tail])
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h  # unsigned 32-bit value


@njit(cache=True, nogil=True)
def murmur2_partitions(offsets, data, valid, num_partitions, out):
    """out[i] = (murmur2(key_i) & 0x7fffffff) % num_partitions; -1 for null keys."""
    for i in range(out.shape[0]):
        if valid[i] == 0:
            out[i] = -1
        else:
            s = offsets[i]
            h = _murmur2(data, s, offsets[i + 1] - s)
            out[i] = (h & 0x7FFFFFFF) % num_partitions


@njit(cache=True, nogil=True)
def murmur2_hashes(offsets, data, valid, out):
    """Signed 32-bit murmur2 of every slot (0 for null slots)."""
    for i in range(out.shape[0]):
        if valid[i] == 0:
            out[i] = 0
        else:
            s = offsets[i]
            h = _murmur2(data, s, offsets[i + 1] - s)
            if h >= 0x80000000:
                h -= 0x100000000
            out[i] = h
