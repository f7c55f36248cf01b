"""The Protobuf decoding interpreter: one kernel, compiled once, decodes any message into its Spark shape.

Protobuf fields arrive in any order, repeated ones possibly interleaved with others, a singular message
possibly in several pieces to merge. So each message is read in two steps. The scan walks its bytes (all
its pieces) once, looks each field number up in the message's table and notes where each occurrence is
(``occ``: position, end, wire type, next occurrence of the same field): a scalar keeps its last one, a
message or repeated field the chain of all of them; unknown numbers, and wire types the field cannot have,
are skipped, as protobuf runtimes skip them; a oneof member clears the member set before it. The emit step
then appends every field of the reader's message in order: a scalar from its last occurrence (or its
default, or null), a repeated field from its chain (packed runs unpacked), a message by running the same
two steps on its chain (a frame pushed on ``stack``; its notes sit above its parent's in ``occ`` and
``slots``, dropped when it ends). Nothing raises: a bad record reports its code and the node it was on.
"""

from __future__ import annotations

import numpy as np

from ...vm.bytes_in import as_i32, read_uvarint
from ...vm.codes import E_DEPTH, E_MESSAGE_INDEX, E_MISSING_REQUIRED, E_OK, E_OTHER_MESSAGE, E_OVERFLOW, E_TRUNCATED
from ...vm.column_writes import append_value, begin, close_list, full, open_list, pad
from ...vm.slots import ROOM_SCRATCH, ROOM_VALUES
from ..opcodes import (
    FL_AUX, FL_AUX2, FL_DEF_A, FL_DEF_B, FL_FLAGS, FL_ITEM, FL_NODE, FL_ONEOF, FL_OP, FL_SUB, FL_WT, FLAG_CLOSED_ENUM,
    FLAG_DEFAULT, FLAG_EMIT_ZERO, FLAG_IMPLICIT, FLAG_INSTANCE, FLAG_PACKABLE, FLAG_REPEATED, FLAG_REQUIRED, FLAG_UTF8,
    M_FIELD_BASE, M_LOOKUP_BASE, M_LOOKUP_LEN, M_NFIELDS, M_NODE, M_NONEOF, M_SORTED_BASE, M_SORTED_LEN, OP_BYTES,
    OP_DURATION, OP_ENUM_NAME, OP_MAP, OP_MESSAGE, OP_NULL, OP_STRING, OP_TIMESTAMP, OP_WRAPPER, WT_I32, WT_LEN,
    WT_VARINT
)
from .wire import (
    O_END, O_NEXT, O_POS, O_WT, convert, enum_find, find_wrapped, put_converted, put_enum_name, put_len, put_value,
    raw_value, read_tag, read_time, span
)

S_FIRST = 0
S_LAST = 1
FR_MSG = 0
FR_HEAD = 1
FR_SINGLE = 2
FR_OCC_BASE = 3
FR_SLOT_BASE = 4
FR_CURSOR = 5  # next field to emit; -1 before the scan
FR_ITER = 6  # the occurrence of a repeated message being read; -1 outside one
FRAME_WORDS = 7


def lookup_field(msgs, lookup, m, number):
    """The position of field ``number`` in message ``m``, or -1 when the reader has no such field."""
    if number < msgs[m, M_LOOKUP_LEN]:
        return lookup[msgs[m, M_LOOKUP_BASE] + number]
    lo = np.int64(0)
    hi = msgs[m, M_SORTED_LEN]
    base = msgs[m, M_SORTED_BASE]
    while lo < hi:
        mid = (lo + hi) >> 1
        v = lookup[base + 2 * mid]
        if v == number:
            return lookup[base + 2 * mid + 1]
        if v < number:
            lo = mid + 1
        else:
            hi = mid
    return np.int64(-1)


def scan(msgs, fields, lookup, enums, buf, m, head, single, sb, occ, otop, slots, gstack, out):
    """Notes the occurrences of message ``m``'s fields in its pieces; (code, node, new top of ``occ``)."""
    nf = msgs[m, M_NFIELDS]
    fb = msgs[m, M_FIELD_BASE]
    oneofs = sb + nf
    node = msgs[m, M_NODE]
    s = head
    while s >= 0:
        pos = occ[s, O_POS]
        end = occ[s, O_END]
        while pos < end:
            code, number, wt, pos = read_tag(buf, pos, end)
            if code != E_OK:
                return code, node, otop
            code, vs, pos = span(buf, pos, end, wt, number, gstack)
            if code != E_OK:
                return code, node, otop
            i = lookup_field(msgs, lookup, m, number)
            if i < 0:
                continue
            f = fb + i
            flags = fields[f, FL_FLAGS]
            if wt != fields[f, FL_WT] and not (wt == WT_LEN and (flags & FLAG_PACKABLE) != 0):
                continue  # a wire type the field cannot have: an unknown field
            repeated = (flags & FLAG_REPEATED) != 0
            if (flags & FLAG_CLOSED_ENUM) != 0 and not repeated:
                if enum_find(enums, fields[f, FL_SUB], as_i32(raw_value(buf, vs, pos, wt))) < 0:
                    continue  # not a value of the closed enum: an unknown field
            g = fields[f, FL_ONEOF]
            if g >= 0:
                current = slots[oneofs + g, S_FIRST]
                if current >= 0 and current != i:
                    slots[sb + current, S_FIRST] = -1
                    slots[sb + current, S_LAST] = -1
                slots[oneofs + g, S_FIRST] = i
            last = slots[sb + i, S_LAST]
            op = fields[f, FL_OP]
            merges = op == OP_MESSAGE or op == OP_TIMESTAMP or op == OP_DURATION or op == OP_WRAPPER
            if last >= 0 and not repeated and not merges:
                occ[last, O_POS] = vs
                occ[last, O_END] = pos
                occ[last, O_WT] = wt
                continue
            if otop >= occ.shape[0]:
                out[0] = -1
                out[1] = ROOM_SCRATCH
                out[2] = 1
                return E_OVERFLOW, node, otop
            occ[otop, O_POS] = vs
            occ[otop, O_END] = pos
            occ[otop, O_WT] = wt
            occ[otop, O_NEXT] = -1
            if last >= 0:
                occ[last, O_NEXT] = otop
            else:
                slots[sb + i, S_FIRST] = otop
            slots[sb + i, S_LAST] = otop
            otop += 1
        if single:
            break
        s = occ[s, O_NEXT]
    for i in range(nf):
        if (fields[fb + i, FL_FLAGS] & FLAG_REQUIRED) != 0 and slots[sb + i, S_FIRST] < 0:
            return E_MISSING_REQUIRED, fields[fb + i, FL_NODE], otop
    return E_OK, node, otop


def put_absent(f, fields, consts, enums, node, state, pad_nodes, a64, a32, a8, abytes, out, scratch8):
    """A field with no value: its default when it has one, else null. (code)"""
    if (fields[f, FL_FLAGS] & FLAG_DEFAULT) == 0:
        return E_OK if pad(state, pad_nodes, a64, a32, a8, out, node) else E_OVERFLOW
    op = fields[f, FL_OP]
    if op == OP_WRAPPER:
        op = fields[f, FL_SUB]
    if op == OP_STRING or op == OP_BYTES:
        return put_len(op, False, node, consts, fields[f, FL_DEF_A], fields[f, FL_DEF_B], state, a32, a8, abytes, out)
    if op == OP_TIMESTAMP or op == OP_DURATION:
        return E_OK if append_value(state, a64, a8, out, node, np.int64(0)) else E_OVERFLOW
    if op == OP_ENUM_NAME:
        ok = put_enum_name(enums, consts, fields[f, FL_SUB], fields[f, FL_DEF_A], node, state, a32, a8, abytes, out,
                           scratch8)
    else:
        ok = put_converted(op, node, fields[f, FL_DEF_A], state, a64, a32, a8, out)
    return E_OK if ok else E_OVERFLOW


def emit_wrapped(f, fields, buf, occ, head, single, node, enums, consts, state, pad_nodes, a64, a32, a8, abytes,
                 out, scratch8, gstack):
    """An unwrapped wrapper message (google.protobuf.Int32Value...): its value, or null (zero with
    emit.default.values) when it holds none or a zero."""
    inner = fields[f, FL_SUB]
    inner_wt = fields[f, FL_AUX]
    code, found, vs, ve = find_wrapped(buf, occ, head, single, inner_wt, gstack)
    if code != E_OK:
        return code
    if found:
        if inner == OP_STRING or inner == OP_BYTES:
            zero = ve == vs
        else:
            zero = convert(inner, raw_value(buf, vs, ve, inner_wt)) == 0
        if not zero:
            utf8 = (fields[f, FL_FLAGS] & FLAG_UTF8) != 0
            return put_value(inner, utf8, 0, node, buf, vs, ve, inner_wt, enums, consts, state, a64, a32, a8,
                             abytes, out, scratch8)
    if (fields[f, FL_FLAGS] & FLAG_EMIT_ZERO) != 0:
        if inner == OP_STRING or inner == OP_BYTES:
            return put_len(inner, False, node, consts, np.int64(0), np.int64(0), state, a32, a8, abytes, out)
        return E_OK if put_converted(inner, node, np.int64(0), state, a64, a32, a8, out) else E_OVERFLOW
    return E_OK if pad(state, pad_nodes, a64, a32, a8, out, node) else E_OVERFLOW


def emit_element(f, fields, buf, occ, s, node, enums, consts, state, pad_nodes, a64, a32, a8, abytes, out,
                 scratch8, gstack):
    """One occurrence of a repeated (non-message) field: a value, or a packed run of them."""
    op = fields[f, FL_OP]
    flags = fields[f, FL_FLAGS]
    pos = occ[s, O_POS]
    end = occ[s, O_END]
    wt = occ[s, O_WT]
    if op == OP_TIMESTAMP or op == OP_DURATION:
        code, micros = read_time(buf, occ, s, True, fields[f, FL_AUX], fields[f, FL_AUX2], gstack)
        if code != E_OK:
            return code
        return E_OK if append_value(state, a64, a8, out, node, micros) else E_OVERFLOW
    if op == OP_WRAPPER:
        return emit_wrapped(f, fields, buf, occ, s, True, node, enums, consts, state, pad_nodes, a64, a32, a8,
                            abytes, out, scratch8, gstack)
    utf8 = (flags & FLAG_UTF8) != 0
    closed = (flags & FLAG_CLOSED_ENUM) != 0
    table = fields[f, FL_SUB]
    ewt = fields[f, FL_WT]
    if wt == ewt:
        if closed and enum_find(enums, table, as_i32(raw_value(buf, pos, end, wt))) < 0:
            return E_OK  # an unknown value of a closed enum is dropped from the list
        return put_value(op, utf8, table, node, buf, pos, end, wt, enums, consts, state, a64, a32, a8, abytes, out,
                         scratch8)
    while pos < end:  # a packed run
        if ewt == WT_VARINT:
            v, p = read_uvarint(buf, pos, end)
            if p < 0:
                return E_TRUNCATED
        elif ewt == WT_I32:
            p = pos + 4
        else:
            p = pos + 8
        if p > end:
            return E_TRUNCATED
        if not (closed and enum_find(enums, table, as_i32(raw_value(buf, pos, p, ewt))) < 0):
            code = put_value(op, utf8, table, node, buf, pos, p, ewt, enums, consts, state, a64, a32, a8, abytes,
                             out, scratch8)
            if code != E_OK:
                return code
        pos = p
    return E_OK


def emit_single(f, fields, buf, occ, first, last, enums, consts, state, pad_nodes, a64, a32, a8, abytes, out,
                scratch8, gstack):
    """A singular field that is not a plain message: a scalar, a Timestamp/Duration, a wrapper."""
    op = fields[f, FL_OP]
    flags = fields[f, FL_FLAGS]
    node = fields[f, FL_NODE]
    if op == OP_NULL:
        return E_OK if pad(state, pad_nodes, a64, a32, a8, out, node) else E_OVERFLOW
    if op == OP_TIMESTAMP or op == OP_DURATION or op == OP_WRAPPER:
        if first < 0 and (flags & FLAG_INSTANCE) == 0:
            return E_OK if pad(state, pad_nodes, a64, a32, a8, out, node) else E_OVERFLOW
        if op == OP_WRAPPER:
            return emit_wrapped(f, fields, buf, occ, first, False, node, enums, consts, state, pad_nodes, a64, a32,
                                a8, abytes, out, scratch8, gstack)
        code, micros = read_time(buf, occ, first, False, fields[f, FL_AUX], fields[f, FL_AUX2], gstack)
        if code != E_OK:
            return code
        return E_OK if append_value(state, a64, a8, out, node, micros) else E_OVERFLOW
    if last >= 0:
        pos = occ[last, O_POS]
        end = occ[last, O_END]
        wt = occ[last, O_WT]
        if (flags & FLAG_IMPLICIT) == 0:
            present = True
        elif op == OP_STRING or op == OP_BYTES:
            present = end > pos
        else:
            present = convert(op, raw_value(buf, pos, end, wt)) != 0
        if present:
            return put_value(op, (flags & FLAG_UTF8) != 0, fields[f, FL_SUB], node, buf, pos, end, wt, enums, consts,
                             state, a64, a32, a8, abytes, out, scratch8)
    return put_absent(f, fields, consts, enums, node, state, pad_nodes, a64, a32, a8, abytes, out, scratch8)


def push(msgs, m, head, single, stack, sp, otop, stop, slots, state, a8, out):
    """Starts message ``m`` (appends its struct element, reserves its notes); (code, new slot top)."""
    if sp >= stack.shape[0]:
        return E_DEPTH, stop
    width = msgs[m, M_NFIELDS] + msgs[m, M_NONEOF]
    if stop + width > slots.shape[0]:
        return E_DEPTH, stop
    node = msgs[m, M_NODE]
    if begin(state, a8, node) < 0:
        full(out, node, ROOM_VALUES, 1)
        return E_OVERFLOW, stop
    stack[sp, 0] = m
    stack[sp, FR_HEAD] = head
    stack[sp, FR_SINGLE] = single
    stack[sp, FR_OCC_BASE] = otop
    stack[sp, FR_SLOT_BASE] = stop
    stack[sp, FR_CURSOR] = -1
    stack[sp, FR_ITER] = -1
    for j in range(width):
        slots[stop + j, S_FIRST] = -1
        slots[stop + j, S_LAST] = -1
    return E_OK, stop + width


def run_message(msgs, fields, lookup, enums, consts, root, data, start, end, state, pad_nodes, a64, f64, a32, f32, a8,
                abytes, occ, slots, stack, gstack, out, scratch8):
    """Decodes one payload ``data[start:end]`` as message program ``root``; (code, node it failed on)."""
    occ[0, O_POS] = start
    occ[0, O_END] = end
    occ[0, O_WT] = WT_LEN
    occ[0, O_NEXT] = -1
    code, stop = push(msgs, root, np.int64(0), np.int64(1), stack, 0, np.int64(1), np.int64(0), slots, state, a8, out)
    if code != E_OK:
        return code, msgs[root, M_NODE]
    otop = np.int64(1)
    sp = 1
    while sp > 0:
        top = sp - 1
        m = stack[top, 0]
        nf = msgs[m, M_NFIELDS]
        fb = msgs[m, M_FIELD_BASE]
        sb = stack[top, FR_SLOT_BASE]
        if stack[top, FR_CURSOR] < 0:
            code, node, otop = scan(msgs, fields, lookup, enums, data, m, stack[top, FR_HEAD], stack[top, FR_SINGLE],
                                    sb, occ, otop, slots, gstack, out)
            if code != E_OK:
                return code, node
            stack[top, FR_CURSOR] = 0
        pushed = False
        while stack[top, FR_CURSOR] < nf:
            i = stack[top, FR_CURSOR]
            f = fb + i
            op = fields[f, FL_OP]
            flags = fields[f, FL_FLAGS]
            node = fields[f, FL_NODE]
            first = slots[sb + i, S_FIRST]
            if op == OP_MESSAGE or op == OP_MAP:
                if (flags & FLAG_REPEATED) != 0:
                    it = stack[top, FR_ITER]
                    if it < 0:
                        if not open_list(state, a8, out, node):
                            return E_OVERFLOW, node
                        it = first
                    else:
                        it = occ[it, O_NEXT]
                    if it < 0:
                        close_list(state, a32, node)
                        stack[top, FR_ITER] = -1
                        stack[top, FR_CURSOR] = i + 1
                        continue
                    stack[top, FR_ITER] = it
                    code, stop = push(msgs, fields[f, FL_SUB], it, np.int64(1), stack, sp, otop, stop, slots, state,
                                      a8, out)
                else:
                    stack[top, FR_CURSOR] = i + 1
                    if first < 0 and (flags & FLAG_INSTANCE) == 0:
                        if not pad(state, pad_nodes, a64, a32, a8, out, node):
                            return E_OVERFLOW, node
                        continue
                    code, stop = push(msgs, fields[f, FL_SUB], first, np.int64(0), stack, sp, otop, stop, slots,
                                      state, a8, out)
                if code != E_OK:
                    return code, node
                sp += 1
                pushed = True
                break
            if (flags & FLAG_REPEATED) != 0:
                if not open_list(state, a8, out, node):
                    return E_OVERFLOW, node
                item = fields[f, FL_ITEM]
                s = first
                while s >= 0:
                    code = emit_element(f, fields, data, occ, s, item, enums, consts, state, pad_nodes, a64, a32, a8,
                                        abytes, out, scratch8, gstack)
                    if code != E_OK:
                        return code, node
                    s = occ[s, O_NEXT]
                close_list(state, a32, node)
            else:
                code = emit_single(f, fields, data, occ, first, slots[sb + i, S_LAST], enums, consts, state,
                                   pad_nodes, a64, a32, a8, abytes, out, scratch8, gstack)
                if code != E_OK:
                    return code, node
            stack[top, FR_CURSOR] = i + 1
        if pushed:
            continue
        otop = stack[top, FR_OCC_BASE]
        stop = stack[top, FR_SLOT_BASE]
        sp -= 1
    return E_OK, np.int64(-1)


def message_verdict(wtree, root, indexes, first, last):
    """Whether the message-index path ``indexes[first:last]`` names, in the writer's file (its tree at ``root``),
    the message the reader reads: E_OK, E_OTHER_MESSAGE or E_MESSAGE_INDEX."""
    node = root
    for j in range(first, last):
        idx = indexes[j]
        if idx < 0 or idx >= wtree[node + 1]:
            return E_MESSAGE_INDEX
        node = wtree[node + 2 + idx]
    if wtree[node] == 1:
        return E_OK
    return E_OTHER_MESSAGE if wtree[node] == 0 else E_MESSAGE_INDEX


KERNELS = ("lookup_field", "scan", "put_absent", "emit_wrapped", "emit_element", "emit_single", "push", "run_message",
           "message_verdict")
