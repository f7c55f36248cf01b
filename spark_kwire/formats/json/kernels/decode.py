"""The plain-JSON decoding interpreter: one kernel reads JSON text into any Spark schema's columns as ``from_json``
does (Spark 4, PERMISSIVE's partial results).

The text is read once, front to back, containers on ``stack``. A struct's fields are appended as they come (a
field found by name: the next expected one first, then a hash table); a field given twice keeps the last value;
fields that never came are nulls; unknown fields are skipped (their syntax checked). A value that does not fit
its type (``vm_values.py``) nulls the struct field it is in (a scalar in an array or map nulls the whole array
or map, as Spark's converters give up on them; a struct inside keeps its other fields) and the row is noted as
bad (``ctx``) but goes on. Malformed text fails the row: PERMISSIVE gives it a struct of nulls, FAILFAST stops.
A text that is not an object is a bad row of nulls; an empty one a null row.

With a rescued-data column, a mismatch and an unknown field are not errors: their JSON text is kept in that
column, as an object of the struct fields they were found in (``{"user": {"age": "old"}, "extra": 1}``); inside an
array or map, the whole outermost array or map is kept.
"""

from __future__ import annotations

import numpy as np

from ...json_text.kernels.names import find_property, undo_subtree
from ...json_text.kernels.text import decode_escapes, parse_date, parse_date_time
from ...json_text.kernels.write import put_byte, write_escaped
from ...vm.bytes_in import copy_bytes
from ...vm.codes import E_JSON_DEPTH, E_JSON_NOT_OBJECT, E_JSON_SYNTAX, E_JSON_TYPE, E_OK, E_OVERFLOW
from ...vm.column_writes import append_value, begin, close_list, full, open_list, pad, put_bytes, put_dec, rewind
from ...vm.rows import GO_ON, ROWS_DONE, end_decoded_row
from ...vm.slots import ROOM_VALUES, S_LEN, S_PARENT
from ..program import (
    P_NAME, P_NAME_LEN, P_VALUE, PK_ARRAY, PK_BOOLEAN, PK_DATE, PK_DECIMAL, PK_DOUBLE, PK_INT, PK_MAP, PK_STRING,
    PK_STRUCT, PK_TIMESTAMP, V_AUX, V_AUX2, V_COUNT, V_END, V_HASH_BASE, V_HASH_MASK, V_KEY, V_KIND, V_NODE, V_SUB
)
from .lexer import key_end, literal_end, scan_quoted, skip_blank, skip_json
from .values import O_DATE_PATTERN, O_RESCUE, O_TS_PATTERN, double_token, int_token, read_scalar, text_to_decimal

QF_KIND = 0
QF_VAL = 1
QF_SLOT_BASE = 2
QF_COUNT = 3  # members read
QF_EXPECT = 4  # struct: the field expected next
QF_FIELD = 5  # struct: the field being read
QF_VSTART = 6  # struct: where that field's value starts
QF_RESCUE = 7  # struct: its rescued object is open; array, map: it must be rescued whole
QF_WROTE = 8  # struct: entries in its rescued object
FRAME_WORDS = 9
C_DEFERRED = 0  # ctx: deferred values so far
C_RESCUED = 1  # bytes of the record's rescued text
C_BAD = 2  # the record's first mismatch (0: none)
C_BAD_NODE = 3
CTX_WORDS = 4


def open_rescue(stack, k, vals, props, consts, rescue8, ctx):
    """Opens the rescued objects of struct frames 0..k (``{`` then ``"name":{`` per level); False when full."""
    pos = ctx[C_RESCUED]
    cap = rescue8.shape[0]
    for j in range(k + 1):
        if stack[j, QF_RESCUE] != 0:
            continue
        if j == 0:
            pos = put_byte(rescue8, pos, cap, 123)
        else:
            if stack[j - 1, QF_WROTE] != 0:
                pos = put_byte(rescue8, pos, cap, 44)
            stack[j - 1, QF_WROTE] = 1
            prop = vals[stack[j - 1, QF_VAL], V_SUB] + stack[j - 1, QF_FIELD]
            pos = write_escaped(rescue8, pos, cap, consts, props[prop, P_NAME], props[prop, P_NAME_LEN])
            pos = put_byte(rescue8, pos, cap, 58)
            pos = put_byte(rescue8, pos, cap, 123)
        stack[j, QF_RESCUE] = 1
    if pos < 0:
        return False
    ctx[C_RESCUED] = pos
    return True


def rescue_entry(stack, k, vals, props, consts, name, ns, nn, data, vs, ve, rescue8, ctx):
    """Adds ``"name": <data[vs:ve]>`` to the rescued object of struct frame ``k``; False when full."""
    if not open_rescue(stack, k, vals, props, consts, rescue8, ctx):
        return False
    pos = ctx[C_RESCUED]
    cap = rescue8.shape[0]
    if stack[k, QF_WROTE] != 0:
        pos = put_byte(rescue8, pos, cap, 44)
    stack[k, QF_WROTE] = 1
    pos = write_escaped(rescue8, pos, cap, name, ns, nn)
    pos = put_byte(rescue8, pos, cap, 58)
    if pos < 0 or pos + (ve - vs) > cap:
        return False
    copy_bytes(rescue8, pos, data, vs, ve - vs)
    ctx[C_RESCUED] = pos + (ve - vs)
    return True


def outer_container(stack, k):
    """The first array or map frame below struct frame ``k`` (0 when ``k`` is outside every array and map)."""
    for j in range(k):
        if stack[j, QF_KIND] != PK_STRUCT:
            return j
    return 0


def keep_unfitting(stack, k, vals, props, consts, data, vs, ve, rescue8, ctx):
    """Rescues the value of struct frame ``k``'s current field (``data[vs:ve]``), or marks the array or map it is
    in to be rescued whole; False when the rescued text is full."""
    a = outer_container(stack, k)
    if a > 0:
        stack[a, QF_RESCUE] = 1
        return True
    prop = vals[stack[k, QF_VAL], V_SUB] + stack[k, QF_FIELD]
    return rescue_entry(stack, k, vals, props, consts, consts, props[prop, P_NAME], props[prop, P_NAME_LEN], data, vs,
                        ve, rescue8, ctx)


def null_field(stack, k, vals, props, state, a32, pad_nodes, a64, a8, out, deferred, ctx, first_deferred):
    """Makes struct frame ``k``'s current field null, undoing what its value appended; False when full."""
    pv = props[vals[stack[k, QF_VAL], V_SUB] + stack[k, QF_FIELD], P_VALUE]
    fnode = vals[pv, V_NODE]
    if state[fnode, S_LEN] == state[vals[stack[k, QF_VAL], V_NODE], S_LEN]:
        undo_subtree(state, a32, fnode, vals[pv, V_END], deferred, ctx, first_deferred)
    return pad(state, pad_nodes, a64, a32, a8, out, fnode)


def json_value_record(vals, props, hashes, consts, root, data, start, end, flags, opts, patterns, rescue_node, state,
                      pad_nodes, a64, f64, a32, f32, a8, abytes, slots, stack, bstack, deferred, ctx, out, scratch8,
                      rescue8, fields, tscratch, zone_at, zone_offsets):
    """Decodes the JSON text ``data[start:end]`` as value program ``root`` (a struct); (code, node): E_OK when the row
    is written (a mismatch noted in ``ctx``), E_OVERFLOW, or the error that fails the row."""
    first_deferred = ctx[C_DEFERRED]
    ctx[C_RESCUED] = 0
    ctx[C_BAD] = 0
    ctx[C_BAD_NODE] = -1
    rescue = opts[O_RESCUE] != 0
    root_node = vals[root, V_NODE]
    pos = skip_blank(data, start, end, flags)
    if pos < 0:
        return E_JSON_SYNTAX, root_node
    if pos >= end:  # no JSON at all: a null row, as from_json gives
        return (E_OK if pad(state, pad_nodes, a64, a32, a8, out, root_node) else E_OVERFLOW), root_node
    if data[pos] != 123:
        return E_JSON_NOT_OBJECT, root_node
    sp = 0
    stop = np.int64(0)
    pending = root
    while True:
        if pending >= 0:
            v = pending
            pending = -1
            node = vals[v, V_NODE]
            kind = vals[v, V_KIND]
            c = data[pos]
            code = E_OK
            if c == 110:
                q = literal_end(data, pos, end)
                if q < 0:
                    return E_JSON_SYNTAX, node
                if not pad(state, pad_nodes, a64, a32, a8, out, node):
                    return E_OVERFLOW, node
                pos = q
            elif kind == PK_STRUCT or kind == PK_MAP or kind == PK_ARRAY:
                if c != (91 if kind == PK_ARRAY else 123):
                    code = E_JSON_TYPE
                elif sp >= stack.shape[0]:
                    return E_JSON_DEPTH, node
                else:
                    if kind == PK_STRUCT:
                        if begin(state, a8, node) < 0:
                            full(out, node, ROOM_VALUES, 1)
                            return E_OVERFLOW, node
                        stack[sp, QF_SLOT_BASE] = stop
                        for j in range(vals[v, V_COUNT]):
                            slots[stop + j] = -1
                        stop += vals[v, V_COUNT]
                    elif not open_list(state, a8, out, node):
                        return E_OVERFLOW, node
                    stack[sp, QF_KIND] = kind
                    stack[sp, QF_VAL] = v
                    stack[sp, QF_COUNT] = 0
                    stack[sp, QF_EXPECT] = 0
                    stack[sp, QF_FIELD] = -1
                    stack[sp, QF_RESCUE] = 0
                    stack[sp, QF_WROTE] = 0
                    sp += 1
                    pos += 1
            else:
                # the usual values, read here: a call passing the arrays they need costs as much as the reading
                q = np.int64(-1)
                code = E_OK
                if c == 34 and (kind == PK_STRING or kind == PK_TIMESTAMP or kind == PK_DATE or kind == PK_DECIMAL):
                    ok, s, e, esc = scan_quoted(data, pos, end, flags)
                    if ok and not esc:
                        n = e - s
                        done = True
                        if kind == PK_STRING:
                            ok = put_bytes(state, a32, a8, abytes, out, node, data, s, n)
                        elif kind == PK_DECIMAL:
                            ok, lo, hi = text_to_decimal(data, s, e, vals[v, V_AUX], vals[v, V_AUX2])
                            done = ok
                            if ok:
                                ok = put_dec(state, a64, a8, out, node, lo, hi)
                        elif kind == PK_DATE and n == 10 and opts[O_DATE_PATTERN] < 0:
                            code, days = parse_date(data, s, n)
                            done = code == E_OK
                            if done:
                                ok = append_value(state, a32, a8, out, node, days)
                        elif kind == PK_TIMESTAMP and n >= 20 and data[s + 10] == 84 and data[e - 1] == 90 \
                                and opts[O_TS_PATTERN] < 0:
                            code, micros = parse_date_time(data, s, n)  # the ...Z form: Spark's reading alike
                            done = code == E_OK
                            if done:
                                ok = append_value(state, a64, a8, out, node, micros)
                        else:
                            done = False
                        code = E_OK
                        if done:
                            if not ok:
                                return E_OVERFLOW, node
                            q = e + 1
                elif (c == 45 or 48 <= c <= 57) and kind == PK_INT:
                    bits = vals[v, V_AUX]
                    code, x, q = int_token(data, pos, end, flags, bits)
                    if code == E_OK:
                        ok = append_value(state, a64, a8, out, node, x) if bits == 64 else \
                            append_value(state, a32, a8, out, node, x)
                        if not ok:
                            return E_OVERFLOW, node
                    elif code == E_JSON_SYNTAX:
                        return code, node
                    else:
                        q = pos  # a mismatch: the value is skipped below
                elif (c == 45 or 48 <= c <= 57) and kind == PK_DOUBLE:
                    code, x, exact, q = double_token(data, pos, end, flags, False)
                    if code == E_OK and exact:
                        if not append_value(state, f64, a8, out, node, x):
                            return E_OVERFLOW, node
                    else:
                        code = E_OK
                        q = np.int64(-1)
                elif (c == 116 or c == 102) and kind == PK_BOOLEAN:
                    q = literal_end(data, pos, end)
                    if q < 0:
                        return E_JSON_SYNTAX, node
                    if not append_value(state, a8, a8, out, node, np.int64(1) if c == 116 else np.int64(0)):
                        return E_OVERFLOW, node
                if q < 0:  # the rest: every type, every token
                    code, q = read_scalar(vals, v, data, pos, end, flags, state, a64, f64, a32, f32, a8, abytes, out,
                                         scratch8, fields, tscratch, zone_at, zone_offsets, opts, patterns, deferred,
                                         ctx, bstack)
                    if code == E_OVERFLOW or code == E_JSON_SYNTAX or code == E_JSON_DEPTH:
                        return code, node
                if code == E_OK:
                    pos = q
            if code != E_OK:  # a mismatch: the nearest struct's field becomes null, the rest of it is skipped
                k = sp - 1
                while stack[k, QF_KIND] != PK_STRUCT:
                    k -= 1
                code2, pos = skip_json(data, pos, end, flags, bstack, 0)
                if code2 != E_OK:
                    return code2, node
                levels = sp - 1 - k
                if levels > 0:
                    for j in range(levels):
                        bstack[j] = 91 if stack[k + 1 + j, QF_KIND] == PK_ARRAY else 123
                    code2, pos = skip_json(data, pos, end, flags, bstack, levels)
                    if code2 != E_OK:
                        return code2, node
                    sp = k + 1
                if not null_field(stack, k, vals, props, state, a32, pad_nodes, a64, a8, out, deferred, ctx,
                                  first_deferred):
                    return E_OVERFLOW, node
                if rescue:
                    if not keep_unfitting(stack, k, vals, props, consts, data, stack[k, QF_VSTART], pos, rescue8, ctx):
                        return E_OVERFLOW, node
                elif ctx[C_BAD] == 0:
                    ctx[C_BAD] = code
                    ctx[C_BAD_NODE] = node
        pos = skip_blank(data, pos, end, flags)
        if pos < 0:
            return E_JSON_SYNTAX, root_node
        if sp == 0:
            return E_OK, root_node  # what follows the object is not read, as Jackson does not
        top = sp - 1
        kind = stack[top, QF_KIND]
        v = stack[top, QF_VAL]
        node = vals[v, V_NODE]
        if pos >= end:
            return E_JSON_SYNTAX, node
        c = data[pos]
        if c == (93 if kind == PK_ARRAY else 125):
            pos += 1
            if kind == PK_STRUCT:
                sb = stack[top, QF_SLOT_BASE]
                base = vals[v, V_SUB]
                for i in range(vals[v, V_COUNT]):
                    if slots[sb + i] < 0 and not pad(state, pad_nodes, a64, a32, a8, out,
                                                      vals[props[base + i, P_VALUE], V_NODE]):
                        return E_OVERFLOW, node
                stop = sb
                if stack[top, QF_RESCUE] != 0:
                    r = put_byte(rescue8, ctx[C_RESCUED], rescue8.shape[0], 125)
                    if r < 0:
                        return E_OVERFLOW, node
                    ctx[C_RESCUED] = r
                if top == 0 and rescue_node >= 0:
                    ok = put_bytes(state, a32, a8, abytes, out, rescue_node, rescue8, 0, ctx[C_RESCUED]) \
                        if ctx[C_RESCUED] > 0 else pad(state, pad_nodes, a64, a32, a8, out, rescue_node)
                    if not ok:
                        return E_OVERFLOW, node
            else:
                close_list(state, a32, node)
                if stack[top, QF_RESCUE] != 0 and top > 0 and stack[top - 1, QF_KIND] == PK_STRUCT \
                        and outer_container(stack, top - 1) == 0:
                    if not keep_unfitting(stack, top - 1, vals, props, consts, data, stack[top - 1, QF_VSTART], pos,
                                          rescue8, ctx):
                        return E_OVERFLOW, node
            sp -= 1
            continue
        if stack[top, QF_COUNT] > 0:
            if c != 44:
                return E_JSON_SYNTAX, node
            pos = skip_blank(data, pos + 1, end, flags)
            if pos < 0 or pos >= end:
                return E_JSON_SYNTAX, node
        stack[top, QF_COUNT] += 1
        if kind == PK_ARRAY:
            pending = vals[v, V_SUB]
            continue
        ok, s, e, esc, after = key_end(data, pos, end, flags)
        if not ok:
            return E_JSON_SYNTAX, node
        name = data
        ns = s
        nn = e - s
        if esc:
            code, nn = decode_escapes(data, s, e, scratch8, flags, np.int64(63))
            if code != E_OK:
                return E_JSON_SYNTAX, node
            name = scratch8
            ns = 0
        pos = skip_blank(data, after, end, flags)
        if pos < 0 or pos >= end:
            return E_JSON_SYNTAX, node
        if kind == PK_MAP:
            key = vals[v, V_KEY]
            entries = state[key, S_PARENT]
            if begin(state, a8, entries) < 0:
                full(out, entries, ROOM_VALUES, 1)
                return E_OVERFLOW, entries
            if not put_bytes(state, a32, a8, abytes, out, key, name, ns, nn):
                return E_OVERFLOW, key
            pending = vals[v, V_SUB]
            continue
        base = vals[v, V_SUB]
        i = find_property(props, hashes, consts, base, vals[v, V_COUNT], vals[v, V_HASH_BASE], vals[v, V_HASH_MASK],
                          stack[top, QF_EXPECT], name, ns, nn)
        if i < 0:
            code, q = skip_json(data, pos, end, flags, bstack, 0)
            if code != E_OK:
                return code, node
            if rescue:
                a = outer_container(stack, top)
                if a > 0:
                    stack[a, QF_RESCUE] = 1
                elif not rescue_entry(stack, top, vals, props, consts, name, ns, nn, data, pos, q, rescue8, ctx):
                    return E_OVERFLOW, node
            pos = q
            continue
        sb = stack[top, QF_SLOT_BASE]
        pv = props[base + i, P_VALUE]
        if slots[sb + i] >= 0:
            undo_subtree(state, a32, vals[pv, V_NODE], vals[pv, V_END], deferred, ctx, first_deferred)
        slots[sb + i] = 1
        stack[top, QF_EXPECT] = i + 1
        stack[top, QF_FIELD] = i
        stack[top, QF_VSTART] = pos
        pending = pv


def null_fields_row(vals, props, root, rescue_node, state, pad_nodes, a64, a32, a8, out):
    """A row of the root struct with every field null (a record that failed, in PERMISSIVE mode)."""
    node = vals[root, V_NODE]
    if begin(state, a8, node) < 0:
        return full(out, node, ROOM_VALUES, 1)
    base = vals[root, V_SUB]
    for i in range(vals[root, V_COUNT]):
        if not pad(state, pad_nodes, a64, a32, a8, out, vals[props[base + i, P_VALUE], V_NODE]):
            return False
    return rescue_node < 0 or pad(state, pad_nodes, a64, a32, a8, out, rescue_node)


def json_value_rows(vals, props, hashes, consts, root, data, start, end, status, first_row, stop_on_error, flags,
                    opts, patterns, rescue_node, state, pad_nodes, a64, f64, a32, f32, a8, abytes, slots, stack, bstack,
                    deferred, ctx, out, err_code, err_node, scratch8, rescue8, fields, tscratch, zone_at,
                    zone_offsets):
    """Decodes rows ``first_row..``; (next row, outcome) as ``vm/rows.py`` says. PERMISSIVE (not
    ``stop_on_error``): a bad row is written (partly, or all null when malformed) and noted in ``err_code`` /
    ``err_node``; FAILFAST stops at it."""
    for row in range(first_row, status.shape[0]):
        code = status[row]
        node = np.int64(-1)
        if code == E_OK:
            mark = ctx[C_DEFERRED]
            code, node = json_value_record(vals, props, hashes, consts, root, data, start[row], end[row], flags,
                                           opts, patterns, rescue_node, state, pad_nodes, a64, f64, a32, f32, a8,
                                           abytes, slots, stack, bstack, deferred, ctx, out, scratch8, rescue8, fields,
                                           tscratch, zone_at, zone_offsets)
            if code == E_OK and ctx[C_BAD] != 0:
                err_code[row] = ctx[C_BAD]
                err_node[row] = ctx[C_BAD_NODE]
                if stop_on_error:
                    code = ctx[C_BAD]
                    node = ctx[C_BAD_NODE]
            elif code != E_OK and code != E_OVERFLOW and not stop_on_error:
                rewind(state, a32, row)
                ctx[C_DEFERRED] = mark
                err_code[row] = code
                err_node[row] = node
                code = E_OK if null_fields_row(vals, props, root, rescue_node, state, pad_nodes, a64, a32, a8, out) \
                    else E_OVERFLOW
            if code != E_OK:
                ctx[C_DEFERRED] = mark
        nxt, outcome = end_decoded_row(row, status[row], code, node, stop_on_error, state, pad_nodes, a64, a32, a8,
                                       out, err_code, err_node)
        if outcome != GO_ON:
            return nxt, outcome
    return status.shape[0], ROWS_DONE


KERNELS = ("open_rescue", "rescue_entry", "outer_container", "keep_unfitting", "null_field", "json_value_record",
           "null_fields_row", "json_value_rows")
