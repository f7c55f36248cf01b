"""The plain-JSON encoding interpreter: one kernel writes any Spark type's rows as ``to_json`` does (Jackson's
generator with Spark's writers): fields in order, null fields left out (``ignoreNullFields``), nulls written in
arrays and maps, strings escaped as Jackson escapes them, doubles and floats as Java prints them (``1.0E10``,
``0.001``, ``"NaN"``), decimals as ``BigDecimal.toString`` (``1E-7``), binary as base64, dates ``yyyy-MM-dd`` and
timestamps ``yyyy-MM-dd'T'HH:mm:ss.SSSXXX`` in the writing time zone, or the pattern given.
"""

from __future__ import annotations

import numpy as np

from ..json_schema.vm_encode import (civil, put_byte, write_base64, write_decimal_int, write_escaped_hex, write_padded,
                                     write_word)
from ..vm.bytes_out import write_bytes
from ..vm.codes import E_DEPTH, E_OK, E_OVERFLOW
from ..vm.rows import GO_ON, ROWS_DONE, close_encoded_row, is_null, open_encoded_row
from ..vm.slots import S_BASE, S_DATA_BASE
from .encode_program import (EP_NAME, EP_NAME_LEN, EP_VALUE, EV_COUNT, EV_NODE, EV_OP, EV_SUB, W_ARRAY, W_BINARY,
                             W_BOOL, W_DATE, W_DECIMAL, W_DOUBLE, W_FLOAT, W_INT32, W_INT64, W_MAP, W_STRING, W_STRUCT,
                             W_TIMESTAMP, W_TIMESTAMP_NTZ)
from .patterns import (F_DAY, F_HOUR, F_HOUR12, F_MICROS, F_MINUTE, F_MONTH, F_OFFSET, F_PM, F_SECOND, F_YEAR,
                       F_YEAR2, OFF_COLON, OFF_MINUTES, OFF_MINUTES_OPT, P_AMPM, P_FRAC, P_LIT, P_MONTH_NAME, P_NUM,
                       P_OFFSET)
from .vm_numbers import write_java_number
from .vm_pattern import MONTH_LENGTHS, MONTH_NAMES

HEX_UPPER = np.frombuffer(b"0123456789ABCDEF", dtype=np.uint8)
JE_VAL = 0
JE_IDX = 1
JE_CURSOR = 2
JE_END = 3
JE_WROTE = 4
ENCODE_FRAME_WORDS = 5
MICROS_PER_DAY = np.int64(86400000000)
# opts of a write: ``wopts``
WO_IGNORE_NULLS = 0
WO_TS_PATTERN = 1  # start of the timestamp format's program in ``patterns`` (timestampFormat, or the default)
WO_DATE_PATTERN = 2
WO_NTZ_PATTERN = 3
WOPT_WORDS = 4


def write_big_decimal(out, pos, cap, text, s, e, dig):
    """A decimal as Java's ``BigDecimal.toString`` prints it, from Arrow's plain text of it (``-0.0000001`` with
    its scale): plain unless the exponent of its unscaled digits is below -6, then ``1E-7``, ``1.20E-8``."""
    if pos < 0 or pos + (e - s) + 16 > cap:
        return np.int64(-1)
    p = s
    if text[p] == 45:
        out[pos] = 45
        pos += 1
        p += 1
    scale = np.int64(0)
    n = np.int64(0)
    point = False
    for q in range(p, e):
        ch = text[q]
        if ch == 46:
            point = True
            continue
        if point:
            scale += 1
        if n == 0 and ch == 48:
            continue
        dig[n] = ch
        n += 1
    if n == 0:
        dig[0] = 48
        n = 1
    adjusted = n - 1 - scale
    if adjusted >= -6:
        for q in range(p, e):
            out[pos] = text[q]
            pos += 1
        return pos
    out[pos] = dig[0]
    pos += 1
    if n > 1:
        out[pos] = 46
        pos += 1
        for k in range(1, n):
            out[pos] = dig[k]
            pos += 1
    out[pos] = 69
    return write_decimal_int(out, pos + 1, cap, adjusted)


def zone_offset_at(utc_seconds, zone_at, zone_offsets):
    """The offset (seconds) of a zone at an instant."""
    lo = 0
    hi = zone_at.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if zone_at[mid] <= utc_seconds:
            lo = mid + 1
        else:
            hi = mid
    return zone_offsets[lo]


def write_year(out, pos, y, width):
    """A year as Java's ``uuuu`` prints it: ``width`` digits at least, a sign before a negative year or one
    longer than four digits."""
    if y < 0:
        out[pos] = 45
        pos += 1
        y = -y
    elif y > 9999 and width == 4:
        out[pos] = 43
        pos += 1
    n = 1
    t = y
    while t >= 10:
        t //= 10
        n += 1
    return write_padded(out, pos, y, n if n > width else width)


def write_offset(out, pos, offset, style, zero_z):
    """An offset as ``X``/``x``/``Z`` patterns print it (``Z``, ``+01``, ``+0130``, ``+01:30``, ``+01:30:15``)."""
    if offset == 0 and zero_z == 1:
        out[pos] = 90
        return pos + 1
    out[pos] = 45 if offset < 0 else 43
    a = -offset if offset < 0 else offset
    h = a // 3600
    mi = (a // 60) % 60
    sec = a % 60
    pos = write_padded(out, pos + 1, h, 2)
    if (style & OFF_MINUTES) != 0 or ((style & OFF_MINUTES_OPT) != 0 and (mi != 0 or sec != 0)):
        if (style & OFF_COLON) != 0:
            out[pos] = 58
            pos += 1
        pos = write_padded(out, pos, mi, 2)
        if sec != 0:
            if (style & OFF_COLON) != 0:
                out[pos] = 58
                pos += 1
            pos = write_padded(out, pos, sec, 2)
    return pos


def local_time_fields(local_micros, fields):
    """Date and time fields (``patterns.F_*``) of a local time in micros since 1970."""
    days = local_micros // MICROS_PER_DAY
    rest = local_micros - days * MICROS_PER_DAY
    y, m, d = civil(days)
    seconds = rest // 1000000
    fields[F_YEAR] = y
    fields[F_YEAR2] = y % 100
    fields[F_MONTH] = m
    fields[F_DAY] = d
    fields[F_HOUR] = seconds // 3600
    fields[F_HOUR12] = (seconds // 3600) % 12 if (seconds // 3600) % 12 != 0 else 12
    fields[F_PM] = 1 if seconds // 3600 >= 12 else 0
    fields[F_MINUTE] = (seconds // 60) % 60
    fields[F_SECOND] = seconds % 60
    fields[F_MICROS] = rest - seconds * 1000000


def write_with_pattern(out, pos, cap, patterns, start, fields):
    """The ``fields`` of a date or time (``F_OFFSET`` included) as the pattern program at ``start`` prints them,
    quoted."""
    count = patterns[start]
    if pos < 0 or pos + 2 + 12 * count > cap:
        return np.int64(-1)
    out[pos] = 34
    pos += 1
    for i in range(count):
        w = start + 1 + 3 * i
        op = patterns[w]
        a = patterns[w + 1]
        b = patterns[w + 2]
        if op == P_LIT:
            out[pos] = a
            pos += 1
        elif op == P_NUM:
            v = fields[a]
            if a == F_YEAR:
                pos = write_year(out, pos, v, b & 255)
            else:
                pos = write_padded(out, pos, v, 2 if (b & 255) == 2 or v >= 10 else 1)
        elif op == P_FRAC:
            v = fields[F_MICROS] * 1000
            for k in range(a):
                digit = v // np.int64(10 ** (8 - k)) % 10 if k < 9 else 0
                out[pos + k] = 48 + digit
            pos += a
        elif op == P_MONTH_NAME:
            m = fields[F_MONTH] - 1
            n = MONTH_LENGTHS[m] if a == 1 else 3
            for k in range(n):
                c = MONTH_NAMES[m, k]
                out[pos + k] = c - 32 if k == 0 else c
            pos += n
        elif op == P_AMPM:
            out[pos] = 80 if fields[F_PM] == 1 else 65
            out[pos + 1] = 77
            pos += 2
        elif op == P_OFFSET:
            pos = write_offset(out, pos, fields[F_OFFSET], a, b)
    out[pos] = 34
    return pos + 1


def write_date_time(out, pos, cap, v, op, wopts, patterns, fields, zone_at, zone_offsets):
    """A date (days), timestamp or local timestamp (micros) as ``to_json`` prints it; the default formats are
    ``yyyy-MM-dd``, ``yyyy-MM-dd'T'HH:mm:ss.SSSXXX`` (in the writing zone) and ``yyyy-MM-dd'T'HH:mm:ss[.SSS]``."""
    offset = np.int64(0)
    if op == W_DATE:
        local = v * MICROS_PER_DAY
        start = wopts[WO_DATE_PATTERN]
    else:
        if op == W_TIMESTAMP:
            seconds = v // 1000000
            offset = zone_offset_at(seconds, zone_at, zone_offsets)
        local = v + offset * 1000000
        start = wopts[WO_TS_PATTERN] if op == W_TIMESTAMP else wopts[WO_NTZ_PATTERN]
    local_time_fields(local, fields)
    fields[F_OFFSET] = offset
    return write_with_pattern(out, pos, cap, patterns, start, fields)


def write_json_leaf(op, node, idx, state, a64, a32, a8, abytes, text_base, text_offsets, text_bytes, out, pos, cap, dig,
               wopts, patterns, fields, zone_at, zone_offsets):
    """One non-null leaf value; the new position (-1: the output is full)."""
    base = state[node, S_BASE]
    if op == W_STRING or op == W_BINARY:
        start = np.int64(a32[base + idx])
        n = np.int64(a32[base + idx + 1]) - start
        data = state[node, S_DATA_BASE] + start
        if op == W_STRING:
            return write_escaped_hex(out, pos, cap, abytes, data, n, HEX_UPPER)
        return write_base64(out, pos, cap, abytes, data, n)
    if op == W_INT32:
        return write_decimal_int(out, pos, cap, np.int64(a32[base + idx]))
    if op == W_INT64:
        return write_decimal_int(out, pos, cap, a64[base + idx])
    if op == W_DOUBLE or op == W_FLOAT or op == W_DECIMAL:
        t = text_base[node] + idx
        if op == W_DECIMAL:
            return write_big_decimal(out, pos, cap, text_bytes, text_offsets[t], text_offsets[t + 1], dig)
        return write_java_number(out, pos, cap, text_bytes, text_offsets[t], text_offsets[t + 1], dig, op == W_FLOAT)
    if op == W_BOOL:
        if a8[base + idx] != 0:
            return write_word(out, pos, cap, np.int64(0x65757274), 4)
        return write_word(out, pos, cap, np.int64(0x65736C6166), 5)
    if op == W_DATE:
        return write_date_time(out, pos, cap, np.int64(a32[base + idx]), op, wopts, patterns, fields, zone_at,
                               zone_offsets)
    if op == W_TIMESTAMP or op == W_TIMESTAMP_NTZ:
        return write_date_time(out, pos, cap, a64[base + idx], op, wopts, patterns, fields, zone_at, zone_offsets)
    return write_word(out, pos, cap, np.int64(0x6C6C756E), 4)  # null


def json_value_encode(vals, props, consts, root, row, state, a64, a32, a8, abytes, text_base, text_offsets,
                      text_bytes, out, pos, cap, stack, dig, wopts, patterns, fields, zone_at, zone_offsets):
    """Writes element ``row`` of the root struct; (code, node, position)."""
    ignore_nulls = wopts[WO_IGNORE_NULLS] != 0
    sp = 0
    pending = root
    idx = row
    while True:
        if pending >= 0:
            v = pending
            pending = -1
            node = vals[v, EV_NODE]
            op = vals[v, EV_OP]
            if is_null(state, a8, node, idx):
                pos = write_word(out, pos, cap, np.int64(0x6C6C756E), 4)
            elif op == W_STRUCT or op == W_ARRAY or op == W_MAP:
                if sp >= stack.shape[0]:
                    return E_DEPTH, node, pos
                pos = put_byte(out, pos, cap, 91 if op == W_ARRAY else 123)
                stack[sp, JE_VAL] = v
                stack[sp, JE_IDX] = idx
                stack[sp, JE_WROTE] = 0
                if op == W_STRUCT:
                    stack[sp, JE_CURSOR] = 0
                    stack[sp, JE_END] = vals[v, EV_COUNT]
                else:
                    base = state[node, S_BASE] + idx
                    stack[sp, JE_CURSOR] = np.int64(a32[base])
                    stack[sp, JE_END] = np.int64(a32[base + 1])
                sp += 1
            else:
                pos = write_json_leaf(op, node, idx, state, a64, a32, a8, abytes, text_base, text_offsets, text_bytes,
                                      out, pos, cap, dig, wopts, patterns, fields, zone_at, zone_offsets)
            if pos < 0:
                return E_OVERFLOW, node, pos
        if sp == 0:
            return E_OK, np.int64(-1), pos
        top = sp - 1
        v = stack[top, JE_VAL]
        op = vals[v, EV_OP]
        j = stack[top, JE_CURSOR]
        if j >= stack[top, JE_END]:
            pos = put_byte(out, pos, cap, 93 if op == W_ARRAY else 125)
            if pos < 0:
                return E_OVERFLOW, vals[v, EV_NODE], pos
            sp -= 1
            continue
        stack[top, JE_CURSOR] = j + 1
        idx = stack[top, JE_IDX]
        if op == W_STRUCT:
            prop = vals[v, EV_SUB] + j
            pv = props[prop, EP_VALUE]
            if ignore_nulls and is_null(state, a8, vals[pv, EV_NODE], idx):
                continue
            if stack[top, JE_WROTE] != 0:
                pos = put_byte(out, pos, cap, 44)
            if pos >= 0:
                pos = write_bytes(out, pos, cap, consts, props[prop, EP_NAME], props[prop, EP_NAME_LEN])
            pending = pv
        else:
            if stack[top, JE_WROTE] != 0:
                pos = put_byte(out, pos, cap, 44)
            idx = j
            pending = vals[v, EV_SUB]
            if op == W_MAP:
                key = vals[v, EV_COUNT]
                kb = state[key, S_BASE] + j
                start = np.int64(a32[kb])
                pos = write_escaped_hex(out, pos, cap, abytes, state[key, S_DATA_BASE] + start,
                                        np.int64(a32[kb + 1]) - start, HEX_UPPER)
                pos = put_byte(out, pos, cap, 58)
        stack[top, JE_WROTE] = 1
        if pos < 0:
            return E_OVERFLOW, vals[v, EV_NODE], pos


def json_value_encode_rows(vals, props, consts, root, header, first_row, stop_on_error, state, a64, f64, a32, f32,
                           a8, abytes, text_base, text_offsets, text_bytes, out, offsets, valid, stack, err_code,
                           err_node, dig, wopts, patterns, fields, zone_at, zone_offsets):
    """Encodes rows ``first_row..`` (``header`` before each, empty for plain JSON); (next row, outcome) as
    ``vm/rows.py`` says. A null row is a null value."""
    cap = out.shape[0]
    pos = offsets[first_row]
    for row in range(first_row, offsets.shape[0] - 1):
        code, node, pos = open_encoded_row(state, a8, row, header, out, pos, cap)
        if code == E_OK:
            code, node, pos = json_value_encode(vals, props, consts, root, row, state, a64, a32, a8, abytes,
                                                text_base, text_offsets, text_bytes, out, pos, cap, stack, dig, wopts,
                                                patterns, fields, zone_at, zone_offsets)
        pos, nxt, outcome = close_encoded_row(row, code, node, pos, stop_on_error, offsets, valid, err_code, err_node)
        if outcome != GO_ON:
            return nxt, outcome
    return offsets.shape[0] - 1, ROWS_DONE


KERNELS = ("write_big_decimal", "zone_offset_at", "write_year", "write_offset",
           "local_time_fields", "write_with_pattern", "write_date_time", "write_json_leaf", "json_value_encode",
           "json_value_encode_rows")
