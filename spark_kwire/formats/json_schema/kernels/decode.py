"""The JSON decoding interpreter: one kernel, compiled once, parses JSON values into any schema's columns.

The text is read once, front to back. An object's properties are appended as they come (each has columns of
its own, so their order does not matter); a property found by name (the next expected one first, then a hash
table); unknown properties skipped (their structure checked); a property seen twice keeps the last value
(the first one's appends are undone); at the object's end, properties that never came are nulls, or the
record's error when required. Containers push a frame on ``stack``. Doubles too long to compute exactly here
are left to Python's ``float`` (noted in ``deferred``). Nothing raises: a bad record reports its code and the
node it was on.
"""

from __future__ import annotations

import numpy as np

from ...vm.codes import (
    E_JSON_DEPTH, E_JSON_SYNTAX, E_JSON_TYPE, E_MISSING_REQUIRED, E_NULL, E_OK, E_OVERFLOW, E_TRAILING
)
from ...vm.column_writes import append_value, begin, close_list, full, open_list, pad, put_bytes
from ...vm.rows import GO_ON, ROWS_DONE, end_decoded_row
from ...json_text.kernels.names import D_INDEX, D_NODE, find_property, undo_subtree
from ...json_text.kernels.text import (
    number_as_double, number_as_long, parse_date, parse_date_time, scan_number, scan_string, skip_literal, skip_value,
    skip_ws, unescape
)
from ...json_text.tables import (
    P_REQUIRED, P_VALUE, V_COUNT, V_END, V_HASH_BASE, V_HASH_MASK, V_KEY, V_KIND, V_NODE, V_NULLABLE, V_SUB
)
from ...vm.slots import ROOM_SCRATCH, ROOM_VALUES, S_LEN, S_PARENT
from ..program import (
    JK_ARRAY, JK_BINARY, JK_BOOLEAN, JK_DATE, JK_INTEGER, JK_JSON, JK_MAP, JK_NUMBER, JK_OBJECT, JK_STRING, JK_TIMESTAMP
)

JF_KIND = 0
JF_VAL = 1
JF_SLOT_BASE = 2
JF_COUNT = 3
JF_EXPECT = 4  # objects: the property expected next
JSON_FRAME_WORDS = 5
D_START = 2
D_END = 3


def base64_decode(buf, s, n, out):
    """(ok, length) of the standard base64 text ``buf[s:s+n]`` (RFC 4648: padded) decoded into ``out`` (which may
    be ``buf`` itself: the bytes are written behind the text being read)."""
    w = np.int64(0)
    acc = np.int64(0)
    bits = 0
    end = s + n
    while end > s and buf[end - 1] == 61:
        end -= 1
    if n % 4 != 0 or s + n - end > 2:
        return False, w
    for p in range(s, end):
        c = np.int64(buf[p])
        if 65 <= c <= 90:
            v = c - 65
        elif 97 <= c <= 122:
            v = c - 71
        elif 48 <= c <= 57:
            v = c + 4
        elif c == 43:
            v = np.int64(62)
        elif c == 47:
            v = np.int64(63)
        else:
            return False, w
        acc = (acc << 6) | v
        bits += 6
        if bits >= 8:
            bits -= 8
            out[w] = (acc >> bits) & 0xFF
            w += 1
    return True, w


def put_text(kind, node, buf, s, n, state, a32, a8, abytes, a64, out, scratch8):
    """Appends a string's content (no escapes in ``buf[s:s+n]``) as the kind says: string, date, date-time,
    base64 binary; (code)."""
    if kind == JK_STRING:
        return E_OK if put_bytes(state, a32, a8, abytes, out, node, buf, s, n) else E_OVERFLOW
    if kind == JK_DATE:
        code, days = parse_date(buf, s, n)
        if code != E_OK:
            return code
        return E_OK if append_value(state, a32, a8, out, node, days) else E_OVERFLOW
    if kind == JK_TIMESTAMP:
        code, micros = parse_date_time(buf, s, n)
        if code != E_OK:
            return code
        return E_OK if append_value(state, a64, a8, out, node, micros) else E_OVERFLOW
    ok, w = base64_decode(buf, s, n, scratch8)
    if not ok:
        return E_JSON_TYPE
    return E_OK if put_bytes(state, a32, a8, abytes, out, node, scratch8, 0, w) else E_OVERFLOW


def put_scalar(kind, node, data, pos, end, state, a64, f64, a32, a8, abytes, out, scratch8, deferred, counters):
    """Appends the scalar at ``pos`` (not null); (code, position after it)."""
    c = data[pos]
    if kind == JK_STRING or kind == JK_DATE or kind == JK_TIMESTAMP or kind == JK_BINARY:
        if c != 34:
            return E_JSON_TYPE, pos
        code, s, e, esc = scan_string(data, pos, end)
        if code != E_OK:
            return code, pos
        if esc:
            code, n = unescape(data, s, e, scratch8)
            if code != E_OK:
                return code, pos
            code = put_text(kind, node, scratch8, np.int64(0), n, state, a32, a8, abytes, a64, out, scratch8)
        else:
            code = put_text(kind, node, data, s, e - s, state, a32, a8, abytes, a64, out, scratch8)
        return code, e + 1
    if kind == JK_BOOLEAN:
        if c != 116 and c != 102:
            return E_JSON_TYPE, pos
        code, p = skip_literal(data, pos, end)
        if code != E_OK:
            return code, pos
        ok = append_value(state, a8, a8, out, node, np.int64(1) if c == 116 else np.int64(0))
        return (E_OK if ok else E_OVERFLOW), p
    if kind == JK_INTEGER or kind == JK_NUMBER:
        if c != 45 and (c < 48 or c > 57):
            return E_JSON_TYPE, pos
        code, p, neg, mant, digits, frac, exp, plain = scan_number(data, pos, end)
        if code != E_OK:
            return code, pos
        if kind == JK_INTEGER:
            code, v = number_as_long(neg, mant, digits, frac, exp)
            if code != E_OK:
                return code, pos
            return (E_OK if append_value(state, a64, a8, out, node, v) else E_OVERFLOW), p
        exact, x = number_as_double(neg, mant, digits, frac, exp)
        if not exact:
            d = counters[0]
            if d >= deferred.shape[0]:
                full(out, np.int64(-1), ROOM_SCRATCH, 1)
                return E_OVERFLOW, pos
            deferred[d, D_NODE] = node
            deferred[d, D_INDEX] = state[node, S_LEN]
            deferred[d, D_START] = pos
            deferred[d, D_END] = p
            counters[0] = d + 1
        return (E_OK if append_value(state, f64, a8, out, node, x) else E_OVERFLOW), p
    return E_JSON_TYPE, pos  # null-typed values take only null


def json_record(vals, props, hashes, consts, root, data, start, end, state, pad_nodes, a64, f64, a32, f32, a8, abytes,
                slots, stack, bstack, deferred, counters, out, scratch8):
    """Decodes the JSON text ``data[start:end]`` as value program ``root``; (code, node it failed on)."""
    first_deferred = counters[0]
    sp = 0
    stop = np.int64(0)
    pending = root
    pos = skip_ws(data, start, end)
    while True:
        if pending >= 0:
            v = pending
            pending = -1
            node = vals[v, V_NODE]
            kind = vals[v, V_KIND]
            if pos >= end:
                return E_JSON_SYNTAX, node
            c = data[pos]
            if c == 110:  # null
                code, pos = skip_literal(data, pos, end)
                if code != E_OK:
                    return code, node
                if vals[v, V_NULLABLE] == 0:
                    return E_NULL, node
                if not pad(state, pad_nodes, a64, a32, a8, out, node):
                    return E_OVERFLOW, node
            elif kind == JK_OBJECT or kind == JK_MAP or kind == JK_ARRAY:
                if c != (91 if kind == JK_ARRAY else 123):
                    return E_JSON_TYPE, node
                if sp >= stack.shape[0]:
                    return E_JSON_DEPTH, node
                if kind == JK_OBJECT:
                    if begin(state, a8, node) < 0:
                        full(out, node, ROOM_VALUES, 1)
                        return E_OVERFLOW, node
                    count = vals[v, V_COUNT]
                    stack[sp, JF_SLOT_BASE] = stop
                    for j in range(count):
                        slots[stop + j] = -1
                    stop += count
                elif not open_list(state, a8, out, node):
                    return E_OVERFLOW, node
                stack[sp, JF_KIND] = kind
                stack[sp, JF_VAL] = v
                stack[sp, JF_COUNT] = 0
                stack[sp, JF_EXPECT] = 0
                sp += 1
                pos += 1
            elif kind == JK_JSON:
                code, e = skip_value(data, pos, end, bstack)
                if code != E_OK:
                    return code, node
                if not put_bytes(state, a32, a8, abytes, out, node, data, pos, e - pos):
                    return E_OVERFLOW, node
                pos = e
            else:
                code, pos = put_scalar(kind, node, data, pos, end, state, a64, f64, a32, a8, abytes, out, scratch8,
                                       deferred, counters)
                if code != E_OK:
                    return code, node
        pos = skip_ws(data, pos, end)
        if sp == 0:
            return (E_OK if pos == end else E_TRAILING), np.int64(0)
        top = sp - 1
        kind = stack[top, JF_KIND]
        v = stack[top, JF_VAL]
        node = vals[v, V_NODE]
        if pos >= end:
            return E_JSON_SYNTAX, node
        c = data[pos]
        if c == (93 if kind == JK_ARRAY else 125):
            if kind == JK_OBJECT:
                sb = stack[top, JF_SLOT_BASE]
                base = vals[v, V_SUB]
                for i in range(vals[v, V_COUNT]):
                    if slots[sb + i] < 0:
                        pnode = vals[props[base + i, P_VALUE], V_NODE]
                        if props[base + i, P_REQUIRED] != 0:
                            return E_MISSING_REQUIRED, pnode
                        if not pad(state, pad_nodes, a64, a32, a8, out, pnode):
                            return E_OVERFLOW, pnode
                stop = sb
            else:
                close_list(state, a32, node)
            sp -= 1
            pos += 1
            continue
        if stack[top, JF_COUNT] > 0:
            if c != 44:
                return E_JSON_SYNTAX, node
            pos = skip_ws(data, pos + 1, end)
        stack[top, JF_COUNT] += 1
        if kind == JK_ARRAY:
            pending = vals[v, V_SUB]
            continue
        if pos >= end or data[pos] != 34:
            return E_JSON_SYNTAX, node
        code, s, e, esc = scan_string(data, pos, end)
        if code != E_OK:
            return code, node
        n = e - s
        if esc:
            code, n = unescape(data, s, e, scratch8)
            if code != E_OK:
                return code, node
        pos = skip_ws(data, e + 1, end)
        if pos >= end or data[pos] != 58:
            return E_JSON_SYNTAX, node
        pos = skip_ws(data, pos + 1, end)
        if kind == JK_MAP:
            key = vals[v, V_KEY]
            entries = state[key, S_PARENT]
            if begin(state, a8, entries) < 0:
                full(out, entries, ROOM_VALUES, 1)
                return E_OVERFLOW, entries
            ok = put_bytes(state, a32, a8, abytes, out, key, scratch8, 0, n) if esc else \
                put_bytes(state, a32, a8, abytes, out, key, data, s, n)
            if not ok:
                return E_OVERFLOW, key
            pending = vals[v, V_SUB]
            continue
        base = vals[v, V_SUB]
        count = vals[v, V_COUNT]
        expect = stack[top, JF_EXPECT]
        if esc:
            i = find_property(props, hashes, consts, base, count, vals[v, V_HASH_BASE], vals[v, V_HASH_MASK], expect,
                              scratch8, np.int64(0), n)
        else:
            i = find_property(props, hashes, consts, base, count, vals[v, V_HASH_BASE], vals[v, V_HASH_MASK], expect,
                              data, s, n)
        if i < 0:
            code, pos = skip_value(data, pos, end, bstack)
            if code != E_OK:
                return code, node
            continue
        sb = stack[top, JF_SLOT_BASE]
        pv = props[base + i, P_VALUE]
        if slots[sb + i] >= 0:
            undo_subtree(state, a32, vals[pv, V_NODE], vals[pv, V_END], deferred, counters, first_deferred)
        slots[sb + i] = 1
        stack[top, JF_EXPECT] = i + 1
        pending = pv


def json_decode_rows(vals, props, hashes, consts, root, data, start, end, status, first_row, stop_on_error, state,
                     pad_nodes, a64, f64, a32, f32, a8, abytes, slots, stack, bstack, deferred, counters, out, err_code,
                     err_node, scratch8):
    """Decodes rows ``first_row..``; (next row, outcome) as ``vm/rows.py`` says (a full ``deferred`` is a full
    region too), the node a record failed on noted in ``err_node``."""
    for row in range(first_row, status.shape[0]):
        code = status[row]
        node = np.int64(-1)
        if code == E_OK:
            mark = counters[0]
            code, node = json_record(vals, props, hashes, consts, root, data, start[row], end[row], state, pad_nodes,
                                     a64, f64, a32, f32, a8, abytes, slots, stack, bstack, deferred, counters, out,
                                     scratch8)
            if code != E_OK:
                counters[0] = mark
        nxt, outcome = end_decoded_row(row, status[row], code, node, stop_on_error, state, pad_nodes, a64, a32, a8,
                                       out, err_code, err_node)
        if outcome != GO_ON:
            return nxt, outcome
    return status.shape[0], ROWS_DONE


KERNELS = ("base64_decode", "put_text", "put_scalar", "json_record",
           "json_decode_rows")
