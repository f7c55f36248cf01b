"""Protobuf wire-format helpers of the decoding kernel: field spans (groups skipped with their nesting
checked), values read and converted as spark-protobuf shows them, enum names, Timestamp/Duration and
wrapper messages read in place, and appends to the output columns. Run by ``vm_decode.py``."""

from __future__ import annotations

import numpy as np

from ...vm.bytes_in import as_i32, load_u32_le, load_u64_le, read_uvarint, skip_varint, unzigzag
from ...vm.codes import (
    E_BAD_GROUP, E_BAD_LENGTH, E_BAD_TAG, E_BAD_UTF8, E_BAD_VARINT, E_BAD_WIRE_TYPE, E_OK, E_OVERFLOW,
    E_TIMESTAMP_RANGE, E_TRUNCATED
)
from ...vm.column_writes import append_value, put_bytes, put_dec
from ...vm.utf8 import valid_utf8
from ..opcodes import (
    OP_BOOL, OP_BYTES, OP_ENUM_NAME, OP_FIXED32, OP_FIXED64, OP_INT32, OP_INT64, OP_SINT32, OP_SINT64, OP_STRING,
    OP_UINT32_LONG, OP_UINT64_DEC, WT_EGROUP, WT_I32, WT_I64, WT_LEN, WT_SGROUP, WT_VARINT
)

O_POS = 0
O_END = 1
O_WT = 2
O_NEXT = 3
MAX_SECONDS = np.int64(9223372036854)  # the most seconds whose microseconds fit in 64 bits (both signs)


def read_tag(buf, pos, end):
    """(code, field number, wire type, position after the tag)."""
    tag, p = read_uvarint(buf, pos, end)
    if p < 0:
        return (E_TRUNCATED if p == -1 else E_BAD_VARINT), np.int64(0), np.int64(0), p
    if tag < 8 or tag > 0xFFFFFFFF:
        return E_BAD_TAG, np.int64(0), np.int64(0), p
    return E_OK, tag >> 3, tag & 7, p


def span_plain(buf, pos, end, wt):
    """(code, value start, value end) of a value of wire type 0, 1, 2 or 5 at ``pos``."""
    if wt == WT_VARINT:
        p = skip_varint(buf, pos, end)
        if p < 0:
            return (E_TRUNCATED if p == -1 else E_BAD_VARINT), pos, pos
        return E_OK, pos, p
    if wt == WT_I64:
        if end - pos < 8:
            return E_TRUNCATED, pos, pos
        return E_OK, pos, pos + 8
    if wt == WT_I32:
        if end - pos < 4:
            return E_TRUNCATED, pos, pos
        return E_OK, pos, pos + 4
    if wt == WT_LEN:
        n, p = read_uvarint(buf, pos, end)
        if p < 0:
            return (E_TRUNCATED if p == -1 else E_BAD_VARINT), pos, pos
        if n < 0:
            return E_BAD_LENGTH, pos, pos
        if n > end - p:
            return E_TRUNCATED, pos, pos
        return E_OK, p, p + n
    return E_BAD_WIRE_TYPE, pos, pos


def span(buf, pos, end, wt, number, gstack):
    """:func:`span_plain`, and groups (wire type 3) skipped to their matching end tag."""
    if wt != WT_SGROUP:
        return span_plain(buf, pos, end, wt)
    gstack[0] = number
    depth = 1
    p = pos
    while True:
        code, num, w, p = read_tag(buf, p, end)
        if code != E_OK:
            return (E_BAD_GROUP if code == E_TRUNCATED else code), pos, pos
        if w == WT_EGROUP:
            if num != gstack[depth - 1]:
                return E_BAD_GROUP, pos, pos
            depth -= 1
            if depth == 0:
                return E_OK, pos, p
        elif w == WT_SGROUP:
            if depth >= gstack.shape[0]:
                return E_BAD_GROUP, pos, pos
            gstack[depth] = num
            depth += 1
        else:
            code, s, p = span_plain(buf, p, end, w)
            if code != E_OK:
                return (E_BAD_GROUP if code == E_TRUNCATED else code), pos, pos


def raw_value(buf, pos, end, wt):
    """The raw value of a varint, fixed32 or fixed64 whose bytes are ``buf[pos:end]`` (already checked)."""
    if wt == WT_VARINT:
        v, p = read_uvarint(buf, pos, end)
        return v
    if wt == WT_I32:
        return load_u32_le(buf, pos)
    return load_u64_le(buf, pos)


def convert(op, raw):
    """A raw varint/fixed value as the column stores it: signed 32 bits for the int32 family, 0/1 for bools,
    the zig-zag decoded value for sint*, the bits otherwise."""
    if op == OP_INT32 or op == OP_ENUM_NAME or op == OP_FIXED32:
        return as_i32(raw)
    if op == OP_UINT32_LONG:
        return raw & 0xFFFFFFFF
    if op == OP_SINT32:
        x = raw & 0xFFFFFFFF
        return as_i32((x >> 1) ^ -(x & 1))
    if op == OP_SINT64:
        return unzigzag(raw)
    if op == OP_BOOL:
        return np.int64(1) if raw != 0 else np.int64(0)
    return raw


def enum_find(enums, table, number):
    """Position of ``number`` among the enum's values (sorted), or -1."""
    lo = np.int64(0)
    hi = enums[table]
    base = table + 3
    while lo < hi:
        mid = (lo + hi) >> 1
        v = enums[base + 3 * mid]
        if v == number:
            return mid
        if v < number:
            lo = mid + 1
        else:
            hi = mid
    return np.int64(-1)


def put_converted(op, node, v, state, a64, a32, a8, out):
    """Appends a converted number to ``node``; False when its region is full."""
    if op == OP_INT64 or op == OP_SINT64 or op == OP_FIXED64 or op == OP_UINT32_LONG:
        return append_value(state, a64, a8, out, node, v)
    if op == OP_BOOL:
        return append_value(state, a8, a8, out, node, v)
    if op == OP_UINT64_DEC:
        return put_dec(state, a64, a8, out, node, v, np.int64(0))
    return append_value(state, a32, a8, out, node, v)


def put_enum_name(enums, consts, table, number, node, state, a32, a8, abytes, out, scratch8):
    """Appends the name of enum value ``number``; an unknown number (open enums) as the Java runtime names it:
    ``UNKNOWN_ENUM_VALUE_<Enum>_<number>``."""
    k = enum_find(enums, table, number)
    if k >= 0:
        q = table + 3 + 3 * k
        return put_bytes(state, a32, a8, abytes, out, node, consts, enums[q + 1], enums[q + 2])
    plen = enums[table + 2]
    poff = enums[table + 1]
    for i in range(plen):
        scratch8[i] = consts[poff + i]
    n = plen
    v = np.int64(number)
    if v < 0:
        scratch8[n] = 45  # '-'
        n += 1
        v = -v
    digits = np.int64(1)
    t = v
    while t >= 10:
        t //= 10
        digits += 1
    for i in range(digits):
        scratch8[n + digits - 1 - i] = np.uint8(48 + v % 10)
        v //= 10
    return put_bytes(state, a32, a8, abytes, out, node, scratch8, 0, n + digits)


def put_len(op, flags_utf8, node, src, pos, n, state, a32, a8, abytes, out):
    """(code) appending string/bytes ``src[pos:pos+n]``; strings are checked for UTF-8 when asked."""
    if op == OP_STRING and flags_utf8 and not valid_utf8(src, pos, n):
        return E_BAD_UTF8
    if not put_bytes(state, a32, a8, abytes, out, node, src, pos, n):
        return E_OVERFLOW
    return E_OK


def put_value(op, utf8, table, node, buf, pos, end, wt, enums, consts, state, a64, a32, a8, abytes, out, scratch8):
    """Appends the value whose bytes are ``buf[pos:end]`` (one element; LEN values: the payload)."""
    if op == OP_STRING or op == OP_BYTES:
        return put_len(op, utf8, node, buf, pos, end - pos, state, a32, a8, abytes, out)
    v = convert(op, raw_value(buf, pos, end, wt))
    if op == OP_ENUM_NAME:
        ok = put_enum_name(enums, consts, table, v, node, state, a32, a8, abytes, out, scratch8)
    else:
        ok = put_converted(op, node, v, state, a64, a32, a8, out)
    return E_OK if ok else E_OVERFLOW


def time_fields(buf, pos, end, seconds_number, nanos_number, seconds, nanos, gstack):
    """(code, seconds, nanos) after the fields of one piece ``buf[pos:end]`` of a Timestamp or Duration message
    (the last value of each wins, as when pieces merge)."""
    while pos < end:
        code, number, wt, pos = read_tag(buf, pos, end)
        if code != E_OK:
            return code, seconds, nanos
        if wt == WT_VARINT:
            v, pos = read_uvarint(buf, pos, end)
            if pos < 0:
                return (E_TRUNCATED if pos == -1 else E_BAD_VARINT), seconds, nanos
            if number == seconds_number:
                seconds = v
            elif number == nanos_number:
                nanos = as_i32(v)
            continue
        code, vs, pos = span(buf, pos, end, wt, number, gstack)
        if code != E_OK:
            return code, seconds, nanos
    return E_OK, seconds, nanos


def micros_of(seconds, nanos):
    """(code, microseconds): seconds * 10^6 plus nanos / 1000 rounded toward zero, as spark-protobuf computes
    a Timestamp or Duration (past 64 bits: E_TIMESTAMP_RANGE)."""
    if seconds > MAX_SECONDS or seconds < -MAX_SECONDS:
        return E_TIMESTAMP_RANGE, np.int64(0)
    q = (nanos if nanos >= 0 else -nanos) // 1000
    return E_OK, seconds * 1000000 + (q if nanos >= 0 else -q)


def read_time(buf, occ, head, single, seconds_number, nanos_number, gstack):
    """(code, microseconds) of a Timestamp or Duration message whose pieces are the occurrences from ``head``."""
    seconds = np.int64(0)
    nanos = np.int64(0)
    s = head
    while s >= 0:
        code, seconds, nanos = time_fields(buf, occ[s, O_POS], occ[s, O_END], seconds_number, nanos_number, seconds,
                                           nanos, gstack)
        if code != E_OK:
            return code, np.int64(0)
        if single:
            break
        s = occ[s, O_NEXT]
    return micros_of(seconds, nanos)


def wrapped_value(buf, pos, end, inner_wt, found, vs_last, ve_last, gstack):
    """(code, found, start, end) of the last ``value`` (field 1) of one piece of a wrapper message."""
    while pos < end:
        code, number, wt, pos = read_tag(buf, pos, end)
        if code != E_OK:
            return code, found, vs_last, ve_last
        code, vs, pos = span(buf, pos, end, wt, number, gstack)
        if code != E_OK:
            return code, found, vs_last, ve_last
        if number == 1 and wt == inner_wt:
            found = True
            vs_last = vs
            ve_last = pos
    return E_OK, found, vs_last, ve_last


def find_wrapped(buf, occ, head, single, inner_wt, gstack):
    """(code, found, start, end) of the last ``value`` of a wrapper message's pieces (occurrences from ``head``)."""
    found = False
    vs_last = np.int64(0)
    ve_last = np.int64(0)
    s = head
    while s >= 0:
        code, found, vs_last, ve_last = wrapped_value(buf, occ[s, O_POS], occ[s, O_END], inner_wt, found, vs_last,
                                                      ve_last, gstack)
        if code != E_OK:
            return code, found, vs_last, ve_last
        if single:
            break
        s = occ[s, O_NEXT]
    return E_OK, found, vs_last, ve_last


KERNELS = ("read_tag", "span_plain", "span", "raw_value", "convert", "enum_find", "put_converted", "put_enum_name",
           "put_len", "put_value", "time_fields", "micros_of", "read_time", "wrapped_value", "find_wrapped")
