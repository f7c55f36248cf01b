"""The JSON encoding interpreter, one kernel for both JSON formats: ``json_encode_rows`` walks any Arrow type's rows
(objects, arrays and maps as frames on ``stack``) as the program of JSON Schema (``json_schema/encode_program.py``)
or of plain JSON (``json/encode_program.py``) says, in ``tables.py``'s layout, writing leaves with JSON Schema's
writers (``write.py``) or with ``to_json``'s (Jackson's generator with Spark's writers): strings escaped as Jackson
escapes them, doubles and floats as Java prints them (``1.0E10``, ``0.001``, ``"NaN"``), decimals as
``BigDecimal.toString`` (``1E-7``), dates ``yyyy-MM-dd`` and timestamps ``yyyy-MM-dd'T'HH:mm:ss.SSSXXX`` in the
writing time zone, or the patterns given. Null handling is the program's: a property whose value may not be null
is left out when it is (``to_json``'s ``ignoreNullFields``; JSON Schema's optional properties), or fails the row
when required.
"""

from __future__ import annotations

import numpy as np

from ...vm.bytes_out import write_bytes
from ...vm.codes import E_DEPTH, E_NULL, E_OK, E_OVERFLOW
from ...vm.rows import GO_ON, ROWS_DONE, close_encoded_row, is_null, open_encoded_row
from ...vm.slots import S_BASE, S_DATA_BASE
from ..patterns import (
    F_DAY, F_HOUR, F_HOUR12, F_MICROS, F_MINUTE, F_MONTH, F_OFFSET, F_PM, F_SECOND, F_YEAR, F_YEAR2, MONTH_LENGTHS,
    MONTH_NAMES, OFF_COLON, OFF_MINUTES, OFF_MINUTES_OPT, P_AMPM, P_FRAC, P_LIT, P_MONTH_NAME, P_NUM, P_OFFSET
)
from ..tables import (
    EP_NAME, EP_NAME_LEN, EP_REQUIRED, EP_VALUE, EV_COUNT, EV_NODE, EV_NULLABLE, EV_OP, EV_SUB, W_ARRAY, W_BIG_DECIMAL,
    W_DATE_TEXT, W_JACKSON_STRING, W_JAVA_DOUBLE, W_JAVA_FLOAT, W_LOCAL_TIMESTAMP_TEXT, W_MAP, W_OBJECT,
    W_TIMESTAMP_TEXT
)
from .numbers import write_java_number, write_scientific
from .write import civil, put_byte, write_decimal_int, write_escaped_hex, write_leaf, write_padded, write_word

HEX_UPPER = np.frombuffer(b"0123456789ABCDEF", dtype=np.uint8)
JE_VAL = 0
JE_IDX = 1
JE_CURSOR = 2  # objects: next property; arrays and maps: next element
JE_END = 3
JE_WROTE = 4  # whether a member was written (a comma goes before the next)
JSON_ENCODE_FRAME_WORDS = 5
MICROS_PER_DAY = np.int64(86400000000)
# opts of a write: ``wopts``, where the format programs start in ``patterns`` (the option's, or the default)
WO_TS_PATTERN = 0
WO_DATE_PATTERN = 1
WO_NTZ_PATTERN = 2
WOPT_WORDS = 3


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
    return write_scientific(out, pos, cap, dig, n, adjusted, False)


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
    if op == W_DATE_TEXT:
        local = v * MICROS_PER_DAY
        start = wopts[WO_DATE_PATTERN]
    else:
        if op == W_TIMESTAMP_TEXT:
            seconds = v // 1000000
            offset = zone_offset_at(seconds, zone_at, zone_offsets)
        local = v + offset * 1000000
        start = wopts[WO_TS_PATTERN] if op == W_TIMESTAMP_TEXT else wopts[WO_NTZ_PATTERN]
    local_time_fields(local, fields)
    fields[F_OFFSET] = offset
    return write_with_pattern(out, pos, cap, patterns, start, fields)


def write_to_json_leaf(op, node, idx, state, a64, a32, abytes, text_base, text_offsets, text_bytes, out, pos, cap,
                       dig, wopts, patterns, fields, zone_at, zone_offsets):
    """One non-null leaf value of an op only ``to_json`` has (``W_JAVA_DOUBLE`` on); the position."""
    base = state[node, S_BASE]
    if op == W_JACKSON_STRING:
        start = np.int64(a32[base + idx])
        n = np.int64(a32[base + idx + 1]) - start
        return write_escaped_hex(out, pos, cap, abytes, state[node, S_DATA_BASE] + start, n, HEX_UPPER)
    if op == W_JAVA_DOUBLE or op == W_JAVA_FLOAT or op == W_BIG_DECIMAL:
        t = text_base[node] + idx
        if op == W_BIG_DECIMAL:
            return write_big_decimal(out, pos, cap, text_bytes, text_offsets[t], text_offsets[t + 1], dig)
        return write_java_number(out, pos, cap, text_bytes, text_offsets[t], text_offsets[t + 1], dig,
                                 op == W_JAVA_FLOAT)
    if op == W_DATE_TEXT:
        return write_date_time(out, pos, cap, np.int64(a32[base + idx]), op, wopts, patterns, fields, zone_at,
                               zone_offsets)
    return write_date_time(out, pos, cap, a64[base + idx], op, wopts, patterns, fields, zone_at, zone_offsets)


def json_encode_value(vals, props, consts, root, row, state, a64, a32, a8, abytes, text_base, text_offsets,
                      text_bytes, out, pos, cap, stack, bstack, hex_digits, dig, wopts, patterns, fields, zone_at,
                      zone_offsets):
    """Writes element ``row`` of the root node as value program ``root``; (code, node, position)."""
    pending = root
    pidx = row
    sp = 0
    while True:
        if pending >= 0:
            v = pending
            idx = pidx
            pending = -1
            node = vals[v, EV_NODE]
            op = vals[v, EV_OP]
            if is_null(state, a8, node, idx):
                if vals[v, EV_NULLABLE] == 0:
                    return E_NULL, node, pos
                pos = write_word(out, pos, cap, np.int64(0x6C6C756E), 4)
            elif op == W_OBJECT or op == W_ARRAY or op == W_MAP:
                if sp >= stack.shape[0]:
                    return E_DEPTH, node, pos
                pos = put_byte(out, pos, cap, 91 if op == W_ARRAY else 123)
                stack[sp, JE_VAL] = v
                stack[sp, JE_IDX] = idx
                stack[sp, JE_WROTE] = 0
                if op == W_OBJECT:
                    stack[sp, JE_CURSOR] = 0
                    stack[sp, JE_END] = vals[v, EV_COUNT]
                else:
                    base = state[node, S_BASE] + idx
                    stack[sp, JE_CURSOR] = np.int64(a32[base])
                    stack[sp, JE_END] = np.int64(a32[base + 1])
                sp += 1
            elif op < W_JAVA_DOUBLE:  # JSON Schema's leaves (and those to_json writes alike)
                code, pos = write_leaf(op, node, idx, state, a64, a32, a8, abytes, text_base, text_offsets, text_bytes,
                                       out, pos, cap, bstack)
                if code != E_OK:
                    return code, node, pos
            else:
                pos = write_to_json_leaf(op, node, idx, state, a64, a32, abytes, text_base, text_offsets, text_bytes,
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
        prop = np.int64(0)
        pv = np.int64(0)
        if op == W_OBJECT:
            prop = vals[v, EV_SUB] + j
            pv = props[prop, EP_VALUE]
            pnode = vals[pv, EV_NODE]
            if is_null(state, a8, pnode, idx) and vals[pv, EV_NULLABLE] == 0:
                if props[prop, EP_REQUIRED] != 0:
                    return E_NULL, pnode, pos
                continue  # a property that may not be null and need not be there: left out
        if stack[top, JE_WROTE] != 0:
            pos = put_byte(out, pos, cap, 44)
        stack[top, JE_WROTE] = 1
        if op == W_OBJECT:
            if pos >= 0:
                pos = write_bytes(out, pos, cap, consts, props[prop, EP_NAME], props[prop, EP_NAME_LEN])
            pending = pv
            pidx = idx
        elif op == W_ARRAY:
            pending = vals[v, EV_SUB]
            pidx = j
        else:
            key = vals[v, EV_COUNT]
            kb = state[key, S_BASE] + j
            start = np.int64(a32[kb])
            pos = write_escaped_hex(out, pos, cap, abytes, state[key, S_DATA_BASE] + start,
                                    np.int64(a32[kb + 1]) - start, hex_digits)
            pos = put_byte(out, pos, cap, 58)
            pending = vals[v, EV_SUB]
            pidx = j
        if pos < 0:
            return E_OVERFLOW, vals[v, EV_NODE], pos


def json_encode_rows(vals, props, consts, root, header, first_row, stop_on_error, state, a64, f64, a32, f32, a8,
                     abytes, text_base, text_offsets, text_bytes, out, offsets, valid, stack, bstack, err_code,
                     err_node, hex_digits, dig, wopts, patterns, fields, zone_at, zone_offsets):
    """Encodes rows ``first_row..`` after ``header`` each (plain JSON: none); (next row, outcome) as ``vm/rows.py``
    says, the node a row failed on noted in ``err_node``. ``hex_digits``: of ``\\u00XX`` escapes (Jackson's are
    capitals); the rest serve ``to_json``'s leaves (JSON Schema passes placeholders)."""
    cap = out.shape[0]
    pos = offsets[first_row]
    for row in range(first_row, offsets.shape[0] - 1):
        code, node, pos = open_encoded_row(state, a8, row, header, out, pos, cap)
        if code == E_OK:
            code, node, pos = json_encode_value(vals, props, consts, root, row, state, a64, a32, a8, abytes, text_base,
                                                text_offsets, text_bytes, out, pos, cap, stack, bstack, hex_digits,
                                                dig, wopts, patterns, fields, zone_at, zone_offsets)
        pos, nxt, outcome = close_encoded_row(row, code, node, pos, stop_on_error, offsets, valid, err_code, err_node)
        if outcome != GO_ON:
            return nxt, outcome
    return offsets.shape[0] - 1, ROWS_DONE



KERNELS = ("write_big_decimal", "zone_offset_at", "write_year", "write_offset", "local_time_fields",
           "write_with_pattern", "write_date_time", "write_to_json_leaf", "json_encode_value", "json_encode_rows")
