"""The Protobuf decoder's single pass, for the records writers usually make (each field once, a oneof set once).

Every field appends to columns of its own, so a message's fields can be appended in the order they arrive:
a scalar as soon as it is read (a later occurrence replaces it: last one wins), a repeated field's items
as they come (its list is opened at the first and closed at the message's end), a message by reading it
right away (a frame pushed on ``stack``). At the message's end, fields that never came get their default
or a null, and missing required fields fail. Two things cannot be done in one pass: merging a singular
message that arrives in several pieces, and a oneof member replacing another; for those the record is
rolled back and ``vm_decode.run_message`` reads it in two steps (``RETRY_TWO_STEPS``). Both give the same
values.
"""

from __future__ import annotations

import numpy as np

from ...vm.bytes_in import as_i32, load_u32_le, load_u64_le, read_uvarint
from ...vm.codes import E_BAD_UTF8, E_BAD_VARINT, E_DEPTH, E_MISSING_REQUIRED, E_OK, E_OVERFLOW, E_TRUNCATED
from ...vm.column_writes import append_value, begin, close_list, full, open_list, pad, put_bytes, rewind
from ...vm.rows import GO_ON, ROWS_DONE, end_decoded_row
from ...vm.slots import K_BINARY, ROOM_VALUES, S_BASE, S_DATA_LEN, S_KIND, S_LEN
from ...vm.utf8 import valid_utf8
from ..opcodes import (
    FL_AUX, FL_AUX2, FL_FLAGS, FL_ITEM, FL_NODE, FL_ONEOF, FL_OP, FL_SUB, FL_WT, FLAG_CLOSED_ENUM, FLAG_IMPLICIT,
    FLAG_INSTANCE, FLAG_PACKABLE, FLAG_REPEATED, FLAG_REQUIRED, FLAG_UTF8, M_FIELD_BASE, M_LOOKUP_BASE, M_LOOKUP_LEN,
    M_NFIELDS, M_NODE, M_NONEOF, OP_BYTES, OP_DURATION, OP_FIXED32, OP_FIXED64, OP_INT32, OP_INT64, OP_MAP, OP_MESSAGE,
    OP_STRING, OP_TIMESTAMP, OP_WRAPPER, WT_LEN, WT_VARINT
)
from .decode import emit_element, emit_single, emit_wrapped, lookup_field, message_verdict, run_message
from .wire import O_END, O_NEXT, O_POS, O_WT, convert, enum_find, micros_of, put_value, read_tag, span, time_fields

RETRY_TWO_STEPS = 90  # not an error: the record needs vm_decode's two steps
Q_MSG = 0
Q_POS = 1
Q_END = 2
Q_SLOT_BASE = 3
Q_CURSOR = 4  # -1 while reading the message's bytes, then the next field to complete
QUEUE_WORDS = 5


def undo_last(state, a32, node):
    """Drops the last element appended to ``node`` (a scalar read again: the last occurrence wins)."""
    k = state[node, S_LEN] - 1
    state[node, S_LEN] = k
    if state[node, S_KIND] == K_BINARY:
        state[node, S_DATA_LEN] = np.int64(a32[state[node, S_BASE] + k])


def start_message(msgs, m, pos, end, stack, sp, stop, slots, state, a8, out):
    """Pushes a frame reading message ``m`` from ``pos`` to ``end``; (code, new slot top)."""
    if sp >= stack.shape[0]:
        return E_DEPTH, stop
    width = msgs[m, M_NFIELDS] + msgs[m, M_NONEOF]
    if stop + width > slots.shape[0]:
        return E_DEPTH, stop
    node = msgs[m, M_NODE]
    if begin(state, a8, node) < 0:
        full(out, node, ROOM_VALUES, 1)
        return E_OVERFLOW, stop
    stack[sp, Q_MSG] = m
    stack[sp, Q_POS] = pos
    stack[sp, Q_END] = end
    stack[sp, Q_SLOT_BASE] = stop
    stack[sp, Q_CURSOR] = -1
    for j in range(width):
        slots[stop + j, 0] = -1
    return E_OK, stop + width


def fast_message(msgs, fields, lookup, enums, consts, root, data, start, end, state, pad_nodes, a64, f64, a32, f32,
                 a8, abytes, occ, slots, stack, gstack, out, scratch8):
    """Decodes ``data[start:end]`` as message program ``root`` in one pass; (code, node): RETRY_TWO_STEPS when
    the record needs two steps (its appends are then to be rolled back)."""
    code, stop = start_message(msgs, root, start, end, stack, 0, np.int64(0), slots, state, a8, out)
    if code != E_OK:
        return code, msgs[root, M_NODE]
    sp = 1
    while sp > 0:
        top = sp - 1
        m = stack[top, Q_MSG]
        fb = msgs[m, M_FIELD_BASE]
        nf = msgs[m, M_NFIELDS]
        sb = stack[top, Q_SLOT_BASE]
        pushed = False
        if stack[top, Q_CURSOR] < 0:
            pos = stack[top, Q_POS]
            stop_at = stack[top, Q_END]
            dense_base = msgs[m, M_LOOKUP_BASE]
            dense_len = msgs[m, M_LOOKUP_LEN]
            while pos < stop_at:
                b = np.int64(data[pos])
                if 8 <= b < 0x80:  # a one-byte tag (fields 1 to 15), the usual case, read here
                    number = b >> 3
                    wt = b & 7
                    pos += 1
                else:
                    code, number, wt, pos = read_tag(data, pos, stop_at)
                    if code != E_OK:
                        return code, msgs[m, M_NODE]
                v = np.int64(0)
                vs = pos
                if wt == WT_VARINT:  # read once: its value is what most fields need
                    if pos < stop_at and data[pos] < 0x80:
                        v = np.int64(data[pos])
                        pos += 1
                    else:
                        v, pos = read_uvarint(data, pos, stop_at)
                        if pos < 0:
                            return (E_TRUNCATED if pos == -1 else E_BAD_VARINT), msgs[m, M_NODE]
                elif wt == WT_LEN and pos < stop_at and data[pos] < 0x80:
                    vs = pos + 1
                    pos = vs + np.int64(data[pos])
                    if pos > stop_at:
                        return E_TRUNCATED, msgs[m, M_NODE]
                else:
                    code, vs, pos = span(data, pos, stop_at, wt, number, gstack)
                    if code != E_OK:
                        return code, msgs[m, M_NODE]
                if number < dense_len:
                    i = lookup[dense_base + number]
                else:
                    i = lookup_field(msgs, lookup, m, number)
                if i < 0:
                    continue
                f = fb + i
                flags = fields[f, FL_FLAGS]
                if wt != fields[f, FL_WT] and not (wt == WT_LEN and (flags & FLAG_PACKABLE) != 0):
                    continue
                op = fields[f, FL_OP]
                node = fields[f, FL_NODE]
                repeated = (flags & FLAG_REPEATED) != 0
                if (flags & FLAG_CLOSED_ENUM) != 0 and not repeated:
                    if enum_find(enums, fields[f, FL_SUB], as_i32(v)) < 0:
                        continue
                seen = slots[sb + i, 0] >= 0
                g = fields[f, FL_ONEOF]
                if g >= 0:
                    current = slots[sb + nf + g, 0]
                    if current >= 0 and current != i:
                        return RETRY_TWO_STEPS, node
                    slots[sb + nf + g, 0] = i
                if op == OP_MESSAGE or op == OP_MAP:
                    if repeated:
                        if not seen:
                            if not open_list(state, a8, out, node):
                                return E_OVERFLOW, node
                            slots[sb + i, 0] = 1
                    elif seen:
                        return RETRY_TWO_STEPS, node  # a message in pieces: merged in two steps
                    else:
                        slots[sb + i, 0] = 1
                    stack[top, Q_POS] = pos
                    code, stop = start_message(msgs, fields[f, FL_SUB], vs, pos, stack, sp, stop, slots, state, a8,
                                               out)
                    if code != E_OK:
                        return code, node
                    sp += 1
                    pushed = True
                    break
                if repeated:
                    if not seen:
                        if not open_list(state, a8, out, node):
                            return E_OVERFLOW, node
                        slots[sb + i, 0] = 1
                    if (op == OP_STRING or op == OP_BYTES) and wt == WT_LEN:  # one string: appended here
                        if op == OP_STRING and (flags & FLAG_UTF8) != 0 and not valid_utf8(data, vs, pos - vs):
                            return E_BAD_UTF8, node
                        if not put_bytes(state, a32, a8, abytes, out, fields[f, FL_ITEM], data, vs, pos - vs):
                            return E_OVERFLOW, node
                        continue
                    occ[0, O_POS] = vs
                    occ[0, O_END] = pos
                    occ[0, O_WT] = wt
                    occ[0, O_NEXT] = -1
                    code = emit_element(f, fields, data, occ, 0, fields[f, FL_ITEM], enums, consts, state, pad_nodes,
                                        a64, a32, a8, abytes, out, scratch8, gstack)
                    if code != E_OK:
                        return code, node
                    continue
                if op == OP_TIMESTAMP or op == OP_DURATION or op == OP_WRAPPER:
                    if seen:
                        return RETRY_TWO_STEPS, node
                    slots[sb + i, 0] = 1
                    occ[0, O_POS] = vs
                    occ[0, O_END] = pos
                    occ[0, O_WT] = wt
                    occ[0, O_NEXT] = -1
                    if op == OP_WRAPPER:
                        code = emit_wrapped(f, fields, data, occ, 0, True, node, enums, consts, state, pad_nodes, a64,
                                            a32, a8, abytes, out, scratch8, gstack)
                    else:
                        micros = np.int64(0)
                        code, seconds, nanos = time_fields(data, vs, pos, fields[f, FL_AUX], fields[f, FL_AUX2],
                                                           np.int64(0), np.int64(0), gstack)
                        if code == E_OK:
                            code, micros = micros_of(seconds, nanos)
                        if code == E_OK and not append_value(state, a64, a8, out, node, micros):
                            code = E_OVERFLOW
                    if code != E_OK:
                        return code, node
                    continue
                if seen:
                    undo_last(state, a32, node)
                    slots[sb + i, 0] = -1
                if op == OP_STRING or op == OP_BYTES:
                    n = pos - vs
                    if n == 0 and (flags & FLAG_IMPLICIT) != 0:
                        continue
                    if op == OP_STRING and (flags & FLAG_UTF8) != 0 and not valid_utf8(data, vs, n):
                        return E_BAD_UTF8, node
                    if not put_bytes(state, a32, a8, abytes, out, node, data, vs, n):
                        return E_OVERFLOW, node
                elif op == OP_INT64 or op == OP_INT32:
                    if op == OP_INT32:
                        v = as_i32(v)
                    if v == 0 and (flags & FLAG_IMPLICIT) != 0:
                        continue
                    ok = append_value(state, a64, a8, out, node, v) if op == OP_INT64 else \
                        append_value(state, a32, a8, out, node, v)
                    if not ok:
                        return E_OVERFLOW, node
                elif op == OP_FIXED64 or op == OP_FIXED32:
                    v = load_u64_le(data, vs) if op == OP_FIXED64 else as_i32(load_u32_le(data, vs))
                    if v == 0 and (flags & FLAG_IMPLICIT) != 0:
                        continue
                    ok = append_value(state, a64, a8, out, node, v) if op == OP_FIXED64 else \
                        append_value(state, a32, a8, out, node, v)
                    if not ok:
                        return E_OVERFLOW, node
                else:
                    if (flags & FLAG_IMPLICIT) != 0 and convert(op, v) == 0:
                        continue
                    code = put_value(op, (flags & FLAG_UTF8) != 0, fields[f, FL_SUB], node, data, vs, pos, wt, enums,
                                     consts, state, a64, a32, a8, abytes, out, scratch8)
                    if code != E_OK:
                        return code, node
                slots[sb + i, 0] = 1
            if pushed:
                continue
            stack[top, Q_CURSOR] = 0
        i = stack[top, Q_CURSOR]
        while i < nf:  # the fields that never came
            if slots[sb + i, 0] >= 0:
                f = fb + i
                if (fields[f, FL_FLAGS] & FLAG_REPEATED) != 0:
                    close_list(state, a32, fields[f, FL_NODE])
                i += 1
                continue
            f = fb + i
            flags = fields[f, FL_FLAGS]
            op = fields[f, FL_OP]
            node = fields[f, FL_NODE]
            if (flags & FLAG_REQUIRED) != 0:
                return E_MISSING_REQUIRED, node
            if (flags & FLAG_REPEATED) != 0:
                if not open_list(state, a8, out, node):
                    return E_OVERFLOW, node
                close_list(state, a32, node)
            elif op == OP_MESSAGE:
                if (flags & FLAG_INSTANCE) != 0:  # a map value: the empty message
                    stack[top, Q_CURSOR] = i + 1
                    code, stop = start_message(msgs, fields[f, FL_SUB], np.int64(0), np.int64(0), stack, sp, stop,
                                               slots, state, a8, out)
                    if code != E_OK:
                        return code, node
                    sp += 1
                    pushed = True
                    break
                if not pad(state, pad_nodes, a64, a32, a8, out, node):
                    return E_OVERFLOW, node
            else:
                code = emit_single(f, fields, data, occ, np.int64(-1), np.int64(-1), enums, consts, state, pad_nodes,
                                   a64, a32, a8, abytes, out, scratch8, gstack)
                if code != E_OK:
                    return code, node
            i += 1
        if pushed:
            continue
        stop = sb
        sp -= 1
    return E_OK, np.int64(-1)


def pb_decode_rows(msgs, fields, lookup, enums, consts, wtree, entries, which, index_offsets, indexes, root, data,
                   start, end, status, first_row, stop_on_error, two_steps_only, state, pad_nodes, a64, f64, a32, f32,
                   a8, abytes, occ, slots, stack, gstack, out, err_code, err_node, scratch8):
    """Decodes rows ``first_row..``; (next row, outcome) as ``vm/rows.py`` says (a full ``occ`` is a full region
    too), the node a record failed on noted in ``err_node``. ``two_steps_only`` skips the single pass (tests
    compare both)."""
    for row in range(first_row, which.shape[0]):
        code = status[row]
        node = np.int64(-1)
        if code == E_OK:
            code = message_verdict(wtree, entries[which[row]], indexes, index_offsets[row], index_offsets[row + 1])
            if code == E_OK:
                code = RETRY_TWO_STEPS
                if not two_steps_only:
                    code, node = fast_message(msgs, fields, lookup, enums, consts, root, data, start[row], end[row],
                                              state, pad_nodes, a64, f64, a32, f32, a8, abytes, occ, slots, stack,
                                              gstack, out, scratch8)
                if code == RETRY_TWO_STEPS:
                    rewind(state, a32, row)
                    code, node = run_message(msgs, fields, lookup, enums, consts, root, data, start[row], end[row],
                                             state, pad_nodes, a64, f64, a32, f32, a8, abytes, occ, slots, stack,
                                             gstack, out, scratch8)
        nxt, outcome = end_decoded_row(row, status[row], code, node, stop_on_error, state, pad_nodes, a64, a32, a8,
                                       out, err_code, err_node)
        if outcome != GO_ON:
            return nxt, outcome
    return which.shape[0], ROWS_DONE


KERNELS = ("undo_last", "start_message", "fast_message", "pb_decode_rows")
