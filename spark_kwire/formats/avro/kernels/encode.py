"""The Avro encoding interpreter: one kernel runs the encoding program of any (Arrow type, Avro schema) pair.

``encode_rows`` writes, for each row of the input columns (``input_columns.py``), the Confluent header and
the Avro encoding of the row into one output buffer, with Arrow-style offsets. A row that cannot be written
(a null where the schema has none, a string that is no enum symbol, bytes of the wrong size for a fixed) is
rolled back, becomes a null value and is reported (``err_code``, ``err_pc``). When the output buffer is
full the kernel returns; the caller grows it and calls again from that row.

Every node of the input is indexed by the current element: the row for nodes outside lists, the item
inside an array or map (a frame per array level remembers the outer index).
"""

from __future__ import annotations

import numpy as np

from ...vm.bytes_out import write_bytes, write_le, write_long
from ...vm.codes import E_DEPTH, E_FIXED_SIZE, E_NO_MEMBER, E_NOT_A_SYMBOL, E_NULL, E_OK, E_OVERFLOW, E_VALUE_RANGE
from ...vm.rows import GO_ON, ROWS_DONE, close_encoded_row, is_null, open_encoded_row
from ...vm.slots import S_BASE, S_DATA_BASE
from ..opcodes import (
    E_ARRAY, E_BOOL, E_BYTES, E_CONST, E_DEC_BYTES, E_DEC_FIXED, E_DOUBLE, E_ENUM, E_FIXED, E_FLOAT, E_FLOAT_DOUBLE,
    E_INT, E_LONG, E_MEMBERS, E_OPTIONAL, E_RETURN, E_STRUCT
)

F_CALL = 0
F_ITEMS = 1
FR_KIND = 0
FR_RET = 1
FR_IDX = 2  # the index to restore on return
FR_NEXT = 3
FR_END = 4
FR_ITEM = 5
FRAME_WORDS = 6


def decimal_size(lo, hi):
    """The fewest bytes of the big-endian two's complement of the 128-bit (lo, hi), as Java's
    BigInteger.toByteArray writes it."""
    n = 16
    while n > 1:
        # byte n-1 (from the low end, 0-based) and the top bit of byte n-2
        top = n - 1
        b = (hi >> (8 * (top - 8))) & 0xFF if top >= 8 else (lo >> (8 * top)) & 0xFF
        nxt = n - 2
        below = (hi >> (8 * (nxt - 8))) & 0xFF if nxt >= 8 else (lo >> (8 * nxt)) & 0xFF
        if (b == 0 and below < 0x80) or (b == 0xFF and below >= 0x80):
            n -= 1
        else:
            break
    return n


def decimal_byte(lo, hi, i):
    """Byte ``i`` (0 = lowest) of the 128-bit (lo, hi), sign-extended beyond 16 bytes."""
    if i >= 16:
        return (hi >> 63) & 0xFF
    if i >= 8:
        return (hi >> (8 * (i - 8))) & 0xFF
    return (lo >> (8 * i)) & 0xFF


def write_decimal(out, pos, cap, lo, hi, n):
    if pos + n > cap:
        return np.int64(-1)
    for i in range(n):
        out[pos + i] = np.uint8(decimal_byte(lo, hi, n - 1 - i))
    return pos + n


def same_bytes(a, a_start, b, b_start, n):
    for i in range(n):
        if a[a_start + i] != b[b_start + i]:
            return False
    return True


def run_row(prog, tables, consts, pc, idx, state, a64, f64, a32, f32, a8, abytes, out, pos, cap, stack,
            scratch64, scratch_f64):
    """Encodes element ``idx`` with the program at ``pc`` from ``out[pos]``; (code, pc of the failing
    instruction, new position)."""
    sp = 0
    while True:
        at = pc
        p = pc * 4
        op = prog[p]
        a = prog[p + 1]
        b = prog[p + 2]
        c = prog[p + 3]
        pc += 1
        if op == E_LONG or op == E_INT:
            if is_null(state, a8, a, idx):
                return E_NULL, at, pos
            if op == E_LONG:
                v = a64[state[a, S_BASE] + idx]
                if b != 1:
                    v = v // b
            else:
                v = np.int64(a32[state[a, S_BASE] + idx])
            pos = write_long(out, pos, cap, v)
        elif op == E_BYTES or op == E_FIXED:
            if is_null(state, a8, a, idx):
                return E_NULL, at, pos
            base = state[a, S_BASE] + idx
            start = np.int64(a32[base])
            n = np.int64(a32[base + 1]) - start
            if op == E_BYTES:
                pos = write_long(out, pos, cap, n)
            elif n != b:
                return E_FIXED_SIZE, at, pos
            if pos >= 0:
                pos = write_bytes(out, pos, cap, abytes, state[a, S_DATA_BASE] + start, n)
        elif op == E_OPTIONAL:
            null_index = b & 0xFFFF
            value_index = (b >> 16) - 1
            if is_null(state, a8, a, idx):
                pos = write_long(out, pos, cap, null_index)
                pc += c
            elif value_index >= 0:
                pos = write_long(out, pos, cap, value_index)
        elif op == E_STRUCT:
            if is_null(state, a8, a, idx):
                return E_NULL, at, pos
        elif op == E_DOUBLE or op == E_FLOAT:
            if is_null(state, a8, a, idx):
                return E_NULL, at, pos
            if op == E_DOUBLE:
                pos = write_le(out, pos, cap, a64[state[a, S_BASE] + idx], 8)
            else:
                pos = write_le(out, pos, cap, np.int64(a32[state[a, S_BASE] + idx]), 4)
        elif op == E_RETURN:
            if sp == 0:
                return E_OK, at, pos
            top = sp - 1
            if stack[top, FR_KIND] == F_ITEMS:
                nxt = stack[top, FR_NEXT]
                if nxt < stack[top, FR_END]:
                    idx = nxt
                    stack[top, FR_NEXT] = nxt + 1
                    pc = stack[top, FR_ITEM]
                    continue
                pos = write_long(out, pos, cap, 0)
            idx = stack[top, FR_IDX]
            pc = stack[top, FR_RET]
            sp = top
        elif op == E_ARRAY:
            if is_null(state, a8, a, idx):
                return E_NULL, at, pos
            base = state[a, S_BASE] + idx
            first = np.int64(a32[base])
            count = np.int64(a32[base + 1]) - first
            pos = write_long(out, pos, cap, count)
            if count > 0 and pos >= 0:
                if sp >= stack.shape[0]:
                    return E_DEPTH, at, pos
                stack[sp, FR_KIND] = F_ITEMS
                stack[sp, FR_RET] = pc
                stack[sp, FR_IDX] = idx
                stack[sp, FR_NEXT] = first + 1
                stack[sp, FR_END] = first + count
                stack[sp, FR_ITEM] = b
                sp += 1
                idx = first
                pc = b
        elif op == E_CONST:
            pos = write_bytes(out, pos, cap, consts, a, b)
        elif op == E_BOOL:
            if is_null(state, a8, a, idx):
                return E_NULL, at, pos
            pos = write_le(out, pos, cap, np.int64(a8[state[a, S_BASE] + idx]), 1)
        elif op == E_FLOAT_DOUBLE:
            if is_null(state, a8, a, idx):
                return E_NULL, at, pos
            scratch_f64[0] = np.float64(f32[state[a, S_BASE] + idx])
            pos = write_le(out, pos, cap, scratch64[0], 8)
        elif op == E_ENUM:
            if is_null(state, a8, a, idx):
                return E_NULL, at, pos
            base = state[a, S_BASE] + idx
            start = state[a, S_DATA_BASE] + np.int64(a32[base])
            n = np.int64(a32[base + 1]) - np.int64(a32[base])
            found = -1
            for i in range(c):
                if tables[b + 2 * i + 1] == n and same_bytes(abytes, start, consts, tables[b + 2 * i], n):
                    found = i
                    break
            if found < 0:
                return E_NOT_A_SYMBOL, at, pos
            pos = write_long(out, pos, cap, found)
        elif op == E_DEC_BYTES or op == E_DEC_FIXED:
            if is_null(state, a8, a, idx):
                return E_NULL, at, pos
            q = state[a, S_BASE] + 2 * idx
            lo = a64[q]
            hi = a64[q + 1]
            n = decimal_size(lo, hi)
            if op == E_DEC_BYTES:
                pos = write_long(out, pos, cap, n)
            else:
                if n > b:
                    return E_VALUE_RANGE, at, pos
                n = b
            if pos >= 0:
                pos = write_decimal(out, pos, cap, lo, hi, n)
        elif op == E_MEMBERS:
            chosen = -1
            for i in range(c):
                if not is_null(state, a8, tables[b + 3 * i], idx):
                    chosen = i
                    break
            if chosen < 0 or is_null(state, a8, a, idx):
                null_index = tables[b + 3 * c]
                if null_index < 0:
                    return E_NO_MEMBER if chosen < 0 else E_NULL, at, pos
                pos = write_long(out, pos, cap, null_index)
            else:
                pos = write_long(out, pos, cap, tables[b + 3 * chosen + 1])
                if sp >= stack.shape[0]:
                    return E_DEPTH, at, pos
                stack[sp, FR_KIND] = F_CALL
                stack[sp, FR_RET] = pc
                stack[sp, FR_IDX] = idx
                sp += 1
                pc = tables[b + 3 * chosen + 2]
        else:
            return E_DEPTH, at, pos  # not an instruction: a broken program
        if pos < 0:
            return E_OVERFLOW, at, pos


def encode_rows(prog, tables, consts, entry, header, first_row, stop_on_error, state, a64, f64, a32, f32, a8,
                abytes, out, offsets, valid, stack, err_code, err_pc, scratch64, scratch_f64):
    """Encodes rows ``first_row..`` (the root node's elements) after ``header`` each; (next row, outcome) as
    ``vm/rows.py`` says, the failing instruction noted in ``err_pc``. ``offsets[row + 1]`` is where the row's
    value ends."""
    cap = out.shape[0]
    pos = offsets[first_row]
    for row in range(first_row, offsets.shape[0] - 1):
        code, pc, pos = open_encoded_row(state, a8, row, header, out, pos, cap)
        if code == E_OK:
            code, pc, pos = run_row(prog, tables, consts, entry, row, state, a64, f64, a32, f32, a8, abytes, out,
                                    pos, cap, stack, scratch64, scratch_f64)
        pos, nxt, outcome = close_encoded_row(row, code, pc, pos, stop_on_error, offsets, valid, err_code, err_pc)
        if outcome != GO_ON:
            return nxt, outcome
    return offsets.shape[0] - 1, ROWS_DONE


KERNELS = ("decimal_size", "decimal_byte", "write_decimal", "same_bytes", "run_row", "encode_rows")
