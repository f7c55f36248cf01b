"""The Protobuf encoding interpreter: one kernel writes any (Arrow type, message) pair's rows as Protobuf.

``pb_encode_rows`` writes, for each row of the input columns (``input_columns.py``), the Confluent header and
the message, fields in the struct's order. A nested message's length is not known before it is written: one
byte is kept for it, and when the message turns out to be 128 bytes or longer, its bytes move to make room
for the longer length (a frame per open message remembers where its length goes). A row that cannot be
written (a null list element, a string that names no enum value, a number out of its type's range) is rolled
back, becomes a null value and is reported (``err_code``, ``err_field``).
"""

from __future__ import annotations

import numpy as np

from ...vm.bytes_out import write_bytes, write_le, write_uvarint
from ...vm.codes import E_DEPTH, E_NOT_A_SYMBOL, E_NULL, E_OK, E_OVERFLOW, E_VALUE_RANGE
from ...vm.rows import GO_ON, ROWS_DONE, close_encoded_row, is_null, open_encoded_row
from ...vm.slots import S_BASE, S_DATA_BASE
from ..opcodes import (
    EF_AUX, EF_DEFAULT, EF_FLAGS, EF_ITEM, EF_NODE, EF_OP, EF_PACKED_TAG, EF_SUB, EF_TAG, EFLAG_CLOSED_ENUM,
    EFLAG_IMPLICIT, EFLAG_NULL_DEFAULT, EFLAG_REPEATED, EFLAG_REQUIRED, EOP_BOOL, EOP_BYTES, EOP_DURATION, EOP_EMPTY,
    EOP_ENUM_NAME, EOP_F32_DOUBLE, EOP_FIXED32, EOP_FIXED64, EOP_I32, EOP_I32_FIXED64, EOP_I32_Z64, EOP_MAP,
    EOP_MESSAGE, EOP_MILLIS, EOP_TIMESTAMP, EOP_U32, EOP_U32_OF_I64, EOP_U64_OF_DEC, EOP_WRAPPER, EOP_Z32, EOP_Z64,
    M_FIELD_BASE, M_NFIELDS
)

EFR_MSG = 0
EFR_IDX = 1
EFR_CURSOR = 2
EFR_PATCH = 3  # where the message's length goes (-1: the top message, which has none)
EFR_NEXT = 4  # a repeated message field being written: its next element (-1 outside one)
EFR_END = 5
ENCODE_FRAME_WORDS = 6
MICROS = np.int64(1000000)


def number_of(op, node, idx, state, a64, a32, a8):
    """The integer an integer/bool/fixed op reads (float bits for float columns)."""
    base = state[node, S_BASE]
    if op == EOP_I32 or op == EOP_U32 or op == EOP_Z32 or op == EOP_I32_Z64 or op == EOP_I32_FIXED64 \
            or op == EOP_FIXED32:
        return np.int64(a32[base + idx])
    if op == EOP_BOOL:
        return np.int64(a8[base + idx])
    return a64[base + idx]


ENUM_HEAD = 4  # count, open, prefix offset, prefix length


def enum_number(enums, consts, table, abytes, start, n):
    """The number of the enum value named ``abytes[start:start+n]``; (found, number). An open enum also takes
    ``UNKNOWN_ENUM_VALUE_<Enum>_<n>``, the name its unknown numbers are read as."""
    count = enums[table]
    for k in range(count):
        q = table + ENUM_HEAD + 3 * k
        if enums[q + 1] == n:
            same = True
            off = enums[q]
            for j in range(n):
                if abytes[start + j] != consts[off + j]:
                    same = False
                    break
            if same:
                return True, enums[q + 2]
    plen = enums[table + 3]
    if enums[table + 1] == 0 or n <= plen or n > plen + 11:
        return False, np.int64(0)
    off = enums[table + 2]
    for j in range(plen):
        if abytes[start + j] != consts[off + j]:
            return False, np.int64(0)
    p = start + plen
    negative = abytes[p] == 45
    if negative:
        p += 1
    if p >= start + n:
        return False, np.int64(0)
    v = np.int64(0)
    while p < start + n:
        d = np.int64(abytes[p]) - 48
        if d < 0 or d > 9:
            return False, np.int64(0)
        v = v * 10 + d
        p += 1
    v = -v if negative else v
    if v < -2147483648 or v > 2147483647:
        return False, np.int64(0)
    return True, v


def enum_has(enums, table, number):
    for k in range(enums[table]):
        if enums[table + ENUM_HEAD + 3 * k + 2] == number:
            return True
    return False


def patch_length(out, at, pos, cap):
    """Writes the length of ``out[at+1:pos]`` at ``at`` (one byte was kept), moving the bytes when it needs more;
    the new end, or -1 when the buffer is too small."""
    n = pos - at - 1
    size = 1
    t = n
    while t >= 0x80:
        t >>= 7
        size += 1
    if size > 1:
        if pos + size - 1 > cap:
            return np.int64(-1)
        for j in range(pos - 1, at, -1):
            out[j + size - 1] = out[j]
    write_uvarint(out, at, cap + 10, n)
    return pos + size - 1


def write_scalar(op, f, fields, node, idx, enums, consts, state, a64, f64, a32, f32, a8, abytes, out, pos, cap,
                 scratch64, scratch_f64):
    """Writes one value (no tag) of a scalar op at ``pos``; (code, new position)."""
    if op == EOP_BYTES or op == EOP_ENUM_NAME:
        base = state[node, S_BASE] + idx
        start = np.int64(a32[base])
        n = np.int64(a32[base + 1]) - start
        data = state[node, S_DATA_BASE] + start
        if op == EOP_ENUM_NAME:
            found, number = enum_number(enums, consts, fields[f, EF_SUB], abytes, data, n)
            if not found:
                return E_NOT_A_SYMBOL, pos
            return E_OK, write_uvarint(out, pos, cap, number)
        pos = write_uvarint(out, pos, cap, n)
        if pos < 0:
            return E_OVERFLOW, pos
        return E_OK, write_bytes(out, pos, cap, abytes, data, n)
    if op == EOP_U64_OF_DEC:
        q = state[node, S_BASE] + 2 * idx
        if a64[q + 1] != 0:
            return E_VALUE_RANGE, pos
        return E_OK, write_uvarint(out, pos, cap, a64[q])
    if op == EOP_F32_DOUBLE:
        scratch_f64[0] = np.float64(f32[state[node, S_BASE] + idx])
        return E_OK, write_le(out, pos, cap, scratch64[0], 8)
    v = number_of(op, node, idx, state, a64, a32, a8)
    if op == EOP_FIXED32:
        return E_OK, write_le(out, pos, cap, v, 4)
    if op == EOP_FIXED64 or op == EOP_I32_FIXED64:
        return E_OK, write_le(out, pos, cap, v, 8)
    if op == EOP_U32:
        v &= 0xFFFFFFFF
    elif op == EOP_Z32:
        v = ((v << 1) ^ (v >> 31)) & 0xFFFFFFFF
    elif op == EOP_Z64 or op == EOP_I32_Z64:
        v = (v << 1) ^ (v >> 63)
    elif op == EOP_U32_OF_I64:
        if v < 0 or v > 0xFFFFFFFF:
            return E_VALUE_RANGE, pos
    elif op == EOP_MILLIS:
        v = v // 1000
    if (fields[f, EF_FLAGS] & EFLAG_CLOSED_ENUM) != 0 and not enum_has(enums, fields[f, EF_SUB], v):
        return E_VALUE_RANGE, pos
    return E_OK, write_uvarint(out, pos, cap, v)


def is_zero(op, node, idx, state, a64, a32, a8):
    """Whether a scalar is its type's zero (implicit-presence fields do not write those)."""
    if op == EOP_BYTES:
        base = state[node, S_BASE] + idx
        return a32[base + 1] == a32[base]
    if op == EOP_ENUM_NAME or op == EOP_F32_DOUBLE:
        return False  # the name of the zero value is compared as a number once found; -0.0 is not zero bits
    if op == EOP_U64_OF_DEC:
        q = state[node, S_BASE] + 2 * idx
        return a64[q] == 0 and a64[q + 1] == 0
    return number_of(op, node, idx, state, a64, a32, a8) == 0


def write_time(op, node, idx, state, a64, out, pos, cap):
    """The fields of a Timestamp (seconds rounded down, nanos >= 0) or Duration (both toward zero)."""
    us = a64[state[node, S_BASE] + idx]
    seconds = us // MICROS
    if op == EOP_DURATION and us < 0 and seconds * MICROS != us:
        seconds += 1
    nanos = (us - seconds * MICROS) * 1000
    if seconds != 0:
        pos = write_uvarint(out, pos, cap, np.int64(8))
        if pos >= 0:
            pos = write_uvarint(out, pos, cap, seconds)
    if nanos != 0 and pos >= 0:
        pos = write_uvarint(out, pos, cap, np.int64(16))
        if pos >= 0:
            pos = write_uvarint(out, pos, cap, nanos)
    return pos


def write_field(f, fields, node, idx, enums, consts, state, a64, f64, a32, f32, a8, abytes, out, pos, cap, scratch64,
                scratch_f64):
    """One singular, non-null, non-message field with its tag (nothing for an implicit zero); (code, position)."""
    op = fields[f, EF_OP]
    if op == EOP_EMPTY:
        return E_OK, pos
    flags = fields[f, EF_FLAGS]
    if (flags & EFLAG_IMPLICIT) != 0 and is_zero(op, node, idx, state, a64, a32, a8):
        return E_OK, pos
    pos = write_uvarint(out, pos, cap, fields[f, EF_TAG])
    if pos < 0:
        return E_OVERFLOW, pos
    if op == EOP_TIMESTAMP or op == EOP_DURATION or op == EOP_WRAPPER:
        at = pos
        if pos + 1 > cap:
            return E_OVERFLOW, pos
        pos += 1
        if op == EOP_WRAPPER:
            inner = fields[f, EF_SUB]
            if not is_zero(inner, node, idx, state, a64, a32, a8):
                pos = write_uvarint(out, pos, cap, fields[f, EF_AUX])
                if pos < 0:
                    return E_OVERFLOW, pos
                code, pos = write_scalar(inner, f, fields, node, idx, enums, consts, state, a64, f64, a32, f32, a8,
                                         abytes, out, pos, cap, scratch64, scratch_f64)
                if code != E_OK:
                    return code, pos
        else:
            pos = write_time(op, node, idx, state, a64, out, pos, cap)
        if pos < 0:
            return E_OVERFLOW, pos
        pos = patch_length(out, at, pos, cap)
        return (E_OK if pos >= 0 else E_OVERFLOW), pos
    code, pos = write_scalar(op, f, fields, node, idx, enums, consts, state, a64, f64, a32, f32, a8, abytes, out, pos,
                             cap, scratch64, scratch_f64)
    if code == E_OK and pos < 0:
        return E_OVERFLOW, pos
    return code, pos


def write_default(f, fields, out, pos, cap):
    """A null value written as its field's default: map entry values (a message: empty) and required scalars."""
    op = fields[f, EF_OP]
    pos = write_uvarint(out, pos, cap, fields[f, EF_TAG])
    if pos < 0:
        return pos
    v = fields[f, EF_DEFAULT]
    if op == EOP_BYTES or op == EOP_MESSAGE or op == EOP_TIMESTAMP or op == EOP_DURATION or op == EOP_WRAPPER \
            or op == EOP_EMPTY:
        return write_uvarint(out, pos, cap, np.int64(0))
    if op == EOP_FIXED32:
        return write_le(out, pos, cap, v, 4)
    if op == EOP_FIXED64 or op == EOP_I32_FIXED64 or op == EOP_F32_DOUBLE:
        return write_le(out, pos, cap, v, 8)
    if op == EOP_Z32:
        v = ((v << 1) ^ (v >> 31)) & 0xFFFFFFFF
    elif op == EOP_Z64 or op == EOP_I32_Z64:
        v = (v << 1) ^ (v >> 63)
    return write_uvarint(out, pos, cap, v)


def write_repeated(f, fields, node, idx, enums, consts, state, a64, f64, a32, f32, a8, abytes, out, pos, cap,
                   scratch64, scratch_f64):
    """All elements of a repeated scalar field (a packed run where the field packs); (code, position)."""
    if is_null(state, a8, node, idx):
        return E_OK, pos
    base = state[node, S_BASE] + idx
    first = np.int64(a32[base])
    last = np.int64(a32[base + 1])
    if first == last:
        return E_OK, pos
    item = fields[f, EF_ITEM]
    op = fields[f, EF_OP]
    packed = fields[f, EF_PACKED_TAG]
    at = np.int64(-1)
    if packed >= 0:
        pos = write_uvarint(out, pos, cap, packed)
        if pos < 0 or pos + 1 > cap:
            return E_OVERFLOW, pos
        at = pos
        pos += 1
    for j in range(first, last):
        if is_null(state, a8, item, j):
            return E_NULL, pos
        if op == EOP_TIMESTAMP or op == EOP_DURATION or op == EOP_WRAPPER:
            code, pos = write_field(f, fields, item, j, enums, consts, state, a64, f64, a32, f32, a8, abytes, out, pos,
                                    cap, scratch64, scratch_f64)
            if code != E_OK:
                return code, pos
            continue
        if packed < 0:
            pos = write_uvarint(out, pos, cap, fields[f, EF_TAG])
            if pos < 0:
                return E_OVERFLOW, pos
        code, pos = write_scalar(op, f, fields, item, j, enums, consts, state, a64, f64, a32, f32, a8, abytes, out,
                                 pos, cap, scratch64, scratch_f64)
        if code != E_OK:
            return code, pos
        if pos < 0:
            return E_OVERFLOW, pos
    if at >= 0:
        pos = patch_length(out, at, pos, cap)
        if pos < 0:
            return E_OVERFLOW, pos
    return E_OK, pos


def encode_message(msgs, fields, enums, consts, root, row, state, a64, f64, a32, f32, a8, abytes, out, pos, cap, stack,
                   scratch64, scratch_f64):
    """Writes element ``row`` of the root struct as message program ``root``; (code, field row, position)."""
    stack[0, EFR_MSG] = root
    stack[0, EFR_IDX] = row
    stack[0, EFR_CURSOR] = 0
    stack[0, EFR_PATCH] = -1
    stack[0, EFR_NEXT] = -1
    sp = 1
    while sp > 0:
        top = sp - 1
        m = stack[top, EFR_MSG]
        idx = stack[top, EFR_IDX]
        nf = msgs[m, M_NFIELDS]
        fb = msgs[m, M_FIELD_BASE]
        child = np.int64(-1)
        child_idx = np.int64(0)
        f = np.int64(-1)
        while stack[top, EFR_CURSOR] < nf:
            f = fb + stack[top, EFR_CURSOR]
            op = fields[f, EF_OP]
            flags = fields[f, EF_FLAGS]
            node = fields[f, EF_NODE]
            if (flags & EFLAG_REPEATED) != 0:
                if op == EOP_MESSAGE or op == EOP_MAP:
                    nxt = stack[top, EFR_NEXT]
                    if nxt < 0:
                        if is_null(state, a8, node, idx):
                            stack[top, EFR_CURSOR] += 1
                            continue
                        base = state[node, S_BASE] + idx
                        nxt = np.int64(a32[base])
                        stack[top, EFR_END] = np.int64(a32[base + 1])
                    if nxt >= stack[top, EFR_END]:
                        stack[top, EFR_NEXT] = -1
                        stack[top, EFR_CURSOR] += 1
                        continue
                    stack[top, EFR_NEXT] = nxt + 1
                    if op == EOP_MESSAGE and is_null(state, a8, fields[f, EF_ITEM], nxt):
                        return E_NULL, f, pos
                    child = fields[f, EF_SUB]
                    child_idx = nxt
                    break
                code, pos = write_repeated(f, fields, node, idx, enums, consts, state, a64, f64, a32, f32, a8, abytes,
                                           out, pos, cap, scratch64, scratch_f64)
                if code != E_OK:
                    return code, f, pos
                stack[top, EFR_CURSOR] += 1
                continue
            stack[top, EFR_CURSOR] += 1
            if is_null(state, a8, node, idx):
                if (flags & EFLAG_NULL_DEFAULT) != 0 or ((flags & EFLAG_REQUIRED) != 0 and op != EOP_MESSAGE):
                    pos = write_default(f, fields, out, pos, cap)
                    if pos < 0:
                        return E_OVERFLOW, f, pos
                elif (flags & EFLAG_REQUIRED) != 0:
                    return E_NULL, f, pos
                continue
            if op == EOP_MESSAGE:
                child = fields[f, EF_SUB]
                child_idx = idx
                break
            code, pos = write_field(f, fields, node, idx, enums, consts, state, a64, f64, a32, f32, a8, abytes, out,
                                    pos, cap, scratch64, scratch_f64)
            if code != E_OK:
                return code, f, pos
        if child >= 0:
            if sp >= stack.shape[0]:
                return E_DEPTH, f, pos
            pos = write_uvarint(out, pos, cap, fields[f, EF_TAG])
            if pos < 0 or pos + 1 > cap:
                return E_OVERFLOW, f, pos
            stack[sp, EFR_MSG] = child
            stack[sp, EFR_IDX] = child_idx
            stack[sp, EFR_CURSOR] = 0
            stack[sp, EFR_PATCH] = pos
            stack[sp, EFR_NEXT] = -1
            pos += 1
            sp += 1
            continue
        at = stack[top, EFR_PATCH]
        if at >= 0:
            pos = patch_length(out, at, pos, cap)
            if pos < 0:
                return E_OVERFLOW, np.int64(-1), pos
        sp -= 1
    return E_OK, np.int64(-1), pos


def pb_encode_rows(msgs, fields, enums, consts, root, header, first_row, stop_on_error, state, a64, f64, a32, f32, a8,
                   abytes, out, offsets, valid, stack, err_code, err_field, scratch64, scratch_f64):
    """Encodes rows ``first_row..`` (the root struct's elements) after ``header`` each; (next row, outcome) as
    ``vm/rows.py`` says, the field a row failed on noted in ``err_field``."""
    cap = out.shape[0]
    pos = offsets[first_row]
    for row in range(first_row, offsets.shape[0] - 1):
        code, f, pos = open_encoded_row(state, a8, row, header, out, pos, cap)
        if code == E_OK:
            code, f, pos = encode_message(msgs, fields, enums, consts, root, row, state, a64, f64, a32, f32, a8,
                                          abytes, out, pos, cap, stack, scratch64, scratch_f64)
        pos, nxt, outcome = close_encoded_row(row, code, f, pos, stop_on_error, offsets, valid, err_code, err_field)
        if outcome != GO_ON:
            return nxt, outcome
    return offsets.shape[0] - 1, ROWS_DONE


KERNELS = ("number_of", "enum_number", "enum_has", "patch_length", "write_scalar", "is_zero", "write_time",
           "write_field", "write_default", "write_repeated", "encode_message", "pb_encode_rows")
