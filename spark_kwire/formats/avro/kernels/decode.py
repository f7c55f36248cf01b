"""The Avro decoding interpreter: one kernel, compiled once, runs the program of any (writer, reader) pair.

``decode_rows`` walks the rows of a batch; each framed row runs the program of its writer schema
(``entries[which[row]]``) over its payload, appending to the output columns (``vm/column_writes.py``). A
record that fails is rolled back and becomes a null row, its error code and the failing instruction noted
(``err_code``, ``err_pc``): nothing raises here. When an output region fills up, the record is rolled back
and the kernel returns so that the caller grows the region and calls again from that row.

Subprograms (array items, union branches, defaults) run on an explicit frame stack, so the interpreter
never recurses: F_CALL returns to the caller, F_ARRAY / F_SKIP loop over the items of a block and read the
next block's count, F_CONST reads a default's bytes from ``consts`` and then returns to the payload.
"""

from __future__ import annotations

import numpy as np

from ...vm.bytes_in import I64_MIN, as_i32, load_u32_le, load_u64_le, read_int, read_long, skip_varint
from ...vm.codes import (
    E_BAD_BOOL, E_BAD_COUNT, E_BAD_ENUM, E_BAD_LENGTH, E_BAD_UNION, E_BAD_VARINT, E_DECIMAL_RANGE, E_DEPTH,
    E_ENUM_SYMBOL, E_OK, E_OVERFLOW, E_TIMESTAMP_RANGE, E_TRAILING, E_TRUNCATED, E_UNION_BRANCH
)
from ...vm.column_writes import append_value, begin, close_list, full, open_list, pad, put_bytes, put_dec, put_null
from ...vm.rows import GO_ON, ROWS_DONE, end_decoded_row
from ...vm.slots import ROOM_VALUES
from ..opcodes import (
    D_ARRAY, D_BOOL, D_BYTES, D_DEC_BYTES, D_DEC_FIXED, D_DEFAULT, D_DOUBLE, D_ENUM, D_FIXED, D_FLOAT, D_FLOAT_DOUBLE,
    D_INT, D_INT_DOUBLE, D_INT_FLOAT, D_INT_LONG, D_LONG, D_LONG_DOUBLE, D_LONG_FLOAT, D_NULL, D_OPTIONAL, D_PAD,
    D_RECORD, D_RETURN, D_SKIP_ARRAY, D_SKIP_BYTES, D_SKIP_FIXED, D_SKIP_VARINT, D_UNION
)

# frames
F_CALL = 0
F_ARRAY = 1
F_SKIP = 2
F_CONST = 3
FR_KIND = 0
FR_RET = 1
FR_NODE = 2
FR_ITEM = 3
FR_REM = 4
FR_MIN = 5
FR_OP = 6
FR_POS = 7
FR_END = 8
FR_SRC = 9
FRAME_WORDS = 10

MAX_ZERO_BYTE_ITEMS = 1 << 24  # items per block when an item may take no bytes at all (nulls, empty records)
TIME_SCALE_LIMIT = np.int64(9223372036854775807)

_POW10 = [10**p for p in range(39)]
POW10_HI = np.array([v >> 64 for v in _POW10], dtype=np.int64)
POW10_LO = np.array([(v & (2**64 - 1)) - (2**64 if v & (2**63) else 0) for v in _POW10], dtype=np.int64)


def varint_error(pos):
    return E_TRUNCATED if pos == -1 else E_BAD_VARINT


def block_count(buf, pos, end, min_bytes, skip_sized):
    """(items, position, code) of the next array/map block; with ``skip_sized``, blocks that give their size
    in bytes are stepped over whole and the next block is read."""
    while True:
        count, pos = read_long(buf, pos, end)
        if pos < 0:
            return np.int64(0), pos, varint_error(pos)
        if count >= 0:
            break
        if count == I64_MIN:
            return np.int64(0), pos, E_BAD_COUNT
        count = -count
        size, pos = read_long(buf, pos, end)
        if pos < 0:
            return np.int64(0), pos, varint_error(pos)
        if size < 0 or size > end - pos:
            return np.int64(0), pos, E_BAD_COUNT
        if not skip_sized:
            break
        pos += size
    if min_bytes > 0:
        if count > (end - pos) // min_bytes:
            return np.int64(0), pos, E_BAD_COUNT
    elif count > MAX_ZERO_BYTE_ITEMS:
        return np.int64(0), pos, E_BAD_COUNT
    return count, pos, E_OK


def read_decimal(buf, pos, n, precision):
    """(low, high, ok): the big-endian two's complement ``buf[pos:pos+n]`` as a 128-bit integer; ok is False
    when it needs more than 128 bits or more than ``precision`` digits."""
    if n == 0:
        return np.int64(0), np.int64(0), True
    neg = buf[pos] >= 0x80
    fill = np.int64(-1) if neg else np.int64(0)
    extra = n - 16
    if extra > 0:
        for i in range(extra):
            if np.int64(buf[pos + i]) != (fill & 0xFF):
                return np.int64(0), np.int64(0), False
        if (buf[pos + extra] >= 0x80) != neg:
            return np.int64(0), np.int64(0), False
        pos += extra
        n = 16
    hi = fill
    lo = fill
    for i in range(n):
        hi = (hi << 8) | ((lo >> 56) & 0xFF)
        lo = (lo << 8) | np.int64(buf[pos + i])
    mhi = hi
    mlo = lo
    if neg:
        mlo = -lo
        mhi = ~hi + (np.int64(1) if lo == 0 else np.int64(0))
        if mhi < 0:
            return lo, hi, False
    phi = POW10_HI[precision]
    plo = POW10_LO[precision]
    ok = mhi < phi or (mhi == phi and (mlo ^ I64_MIN) < (plo ^ I64_MIN))
    return lo, hi, ok


def run_record(prog, tables, consts, data, pos, end, pc, state, pad_nodes, a64, f64, a32, f32, a8, abytes, stack,
               out, scratch32, scratch_f32):
    """Runs the program at ``pc`` over ``data[pos:end]``; (code, pc of the failing instruction)."""
    buf = data
    src = 0
    sp = 0
    while True:
        at = pc
        p = pc * 4
        op = prog[p]
        a = prog[p + 1]
        b = prog[p + 2]
        c = prog[p + 3]
        pc += 1
        if op == D_LONG:
            v, pos = read_long(buf, pos, end)
            if pos < 0:
                return varint_error(pos), at
            if b != 1:
                limit = TIME_SCALE_LIMIT // b
                if v > limit or v < -limit:
                    return E_TIMESTAMP_RANGE, at
                v *= b
            if not append_value(state, a64, a8, out, a, v):
                return E_OVERFLOW, at
        elif op == D_BYTES:
            n, pos = read_long(buf, pos, end)
            if pos < 0:
                return varint_error(pos), at
            if n < 0:
                return E_BAD_LENGTH, at
            if n > end - pos:
                return E_TRUNCATED, at
            if not put_bytes(state, a32, a8, abytes, out, a, buf, pos, n):
                return E_OVERFLOW, at
            pos += n
        elif op == D_INT:
            v, pos = read_int(buf, pos, end)
            if pos < 0:
                return varint_error(pos), at
            if not append_value(state, a32, a8, out, a, v):
                return E_OVERFLOW, at
        elif op == D_OPTIONAL:
            v, pos = read_long(buf, pos, end)
            if pos < 0:
                return varint_error(pos), at
            if v == b:
                if not pad(state, pad_nodes, a64, a32, a8, out, a):
                    return E_OVERFLOW, at
                pc += c
            elif v != 1 - b:
                return E_BAD_UNION, at
        elif op == D_RECORD:
            if begin(state, a8, a) < 0:
                full(out, a, ROOM_VALUES, 1)
                return E_OVERFLOW, at
        elif op == D_DOUBLE:
            if end - pos < 8:
                return E_TRUNCATED, at
            if not append_value(state, a64, a8, out, a, load_u64_le(buf, pos)):
                return E_OVERFLOW, at
            pos += 8
        elif op == D_RETURN:
            if sp == 0:
                if src == 0 and pos != end:
                    return E_TRAILING, at
                return E_OK, at
            sp -= 1
            kind = stack[sp, FR_KIND]
            if kind == F_CALL:
                pc = stack[sp, FR_RET]
            elif kind == F_CONST:
                pos = stack[sp, FR_POS]
                end = stack[sp, FR_END]
                src = stack[sp, FR_SRC]
                buf = data if src == 0 else consts
                pc = stack[sp, FR_RET]
            else:
                remaining = stack[sp, FR_REM] - 1
                if remaining > 0:
                    stack[sp, FR_REM] = remaining
                    pc = stack[sp, FR_ITEM]
                    sp += 1
                    continue
                count, pos, code = block_count(buf, pos, end, stack[sp, FR_MIN], kind == F_SKIP)
                if code != E_OK:
                    return code, stack[sp, FR_OP]
                if count == 0:
                    if kind == F_ARRAY:
                        close_list(state, a32, stack[sp, FR_NODE])
                    pc = stack[sp, FR_RET]
                else:
                    stack[sp, FR_REM] = count
                    pc = stack[sp, FR_ITEM]
                    sp += 1
        elif op == D_ARRAY or op == D_SKIP_ARRAY:
            if op == D_ARRAY and not open_list(state, a8, out, a):
                return E_OVERFLOW, at
            count, pos, code = block_count(buf, pos, end, c, op == D_SKIP_ARRAY)
            if code != E_OK:
                return code, at
            if count == 0:
                if op == D_ARRAY:
                    close_list(state, a32, a)
                continue
            if sp >= stack.shape[0]:
                return E_DEPTH, at
            stack[sp, FR_KIND] = F_ARRAY if op == D_ARRAY else F_SKIP
            stack[sp, FR_RET] = pc
            stack[sp, FR_NODE] = a
            stack[sp, FR_ITEM] = b
            stack[sp, FR_REM] = count
            stack[sp, FR_MIN] = c
            stack[sp, FR_OP] = at
            sp += 1
            pc = b
        elif op == D_UNION:
            v, pos = read_long(buf, pos, end)
            if pos < 0:
                return varint_error(pos), at
            if v < 0 or v >= b:
                return E_BAD_UNION, at
            target = tables[a + v]
            if target < 0:
                return E_UNION_BRANCH, at
            if sp >= stack.shape[0]:
                return E_DEPTH, at
            stack[sp, FR_KIND] = F_CALL
            stack[sp, FR_RET] = pc
            sp += 1
            pc = target
        elif op == D_PAD:
            if not pad(state, pad_nodes, a64, a32, a8, out, a):
                return E_OVERFLOW, at
        elif op == D_INT_LONG or op == D_INT_FLOAT or op == D_INT_DOUBLE:
            v, pos = read_int(buf, pos, end)
            if pos < 0:
                return varint_error(pos), at
            if op == D_INT_LONG:
                ok = append_value(state, a64, a8, out, a, v * b)
            elif op == D_INT_FLOAT:
                ok = append_value(state, f32, a8, out, a, np.float32(v))
            else:
                ok = append_value(state, f64, a8, out, a, np.float64(v))
            if not ok:
                return E_OVERFLOW, at
        elif op == D_LONG_FLOAT or op == D_LONG_DOUBLE:
            v, pos = read_long(buf, pos, end)
            if pos < 0:
                return varint_error(pos), at
            if op == D_LONG_FLOAT:
                ok = append_value(state, f32, a8, out, a, np.float32(v))
            else:
                ok = append_value(state, f64, a8, out, a, np.float64(v))
            if not ok:
                return E_OVERFLOW, at
        elif op == D_FLOAT or op == D_FLOAT_DOUBLE:
            if end - pos < 4:
                return E_TRUNCATED, at
            bits = as_i32(load_u32_le(buf, pos))
            pos += 4
            if op == D_FLOAT:
                ok = append_value(state, a32, a8, out, a, bits)
            else:
                scratch32[0] = bits
                ok = append_value(state, f64, a8, out, a, np.float64(scratch_f32[0]))
            if not ok:
                return E_OVERFLOW, at
        elif op == D_BOOL:
            if pos >= end:
                return E_TRUNCATED, at
            v = buf[pos]
            if v > 1:
                return E_BAD_BOOL, at
            pos += 1
            if not append_value(state, a8, a8, out, a, v):
                return E_OVERFLOW, at
        elif op == D_FIXED:
            if b > end - pos:
                return E_TRUNCATED, at
            if not put_bytes(state, a32, a8, abytes, out, a, buf, pos, b):
                return E_OVERFLOW, at
            pos += b
        elif op == D_ENUM:
            v, pos = read_int(buf, pos, end)
            if pos < 0:
                return varint_error(pos), at
            if v < 0 or v >= c:
                return E_BAD_ENUM, at
            offset = tables[b + 2 * v]
            if offset < 0:
                return E_ENUM_SYMBOL, at
            if not put_bytes(state, a32, a8, abytes, out, a, consts, offset, tables[b + 2 * v + 1]):
                return E_OVERFLOW, at
        elif op == D_DEC_BYTES or op == D_DEC_FIXED:
            if op == D_DEC_BYTES:
                n, pos = read_long(buf, pos, end)
                if pos < 0:
                    return varint_error(pos), at
                if n < 0:
                    return E_BAD_LENGTH, at
                precision = b
            else:
                n = b
                precision = c
            if n > end - pos:
                return E_TRUNCATED, at
            lo, hi, ok = read_decimal(buf, pos, n, precision)
            if not ok:
                return E_DECIMAL_RANGE, at
            pos += n
            if not put_dec(state, a64, a8, out, a, lo, hi):
                return E_OVERFLOW, at
        elif op == D_NULL:
            if not put_null(state, a8, out, a):
                return E_OVERFLOW, at
        elif op == D_SKIP_VARINT:
            pos = skip_varint(buf, pos, end)
            if pos < 0:
                return varint_error(pos), at
        elif op == D_SKIP_FIXED:
            if a > end - pos:
                return E_TRUNCATED, at
            pos += a
        elif op == D_SKIP_BYTES:
            n, pos = read_long(buf, pos, end)
            if pos < 0:
                return varint_error(pos), at
            if n < 0:
                return E_BAD_LENGTH, at
            if n > end - pos:
                return E_TRUNCATED, at
            pos += n
        elif op == D_DEFAULT:
            if sp >= stack.shape[0]:
                return E_DEPTH, at
            stack[sp, FR_KIND] = F_CONST
            stack[sp, FR_RET] = pc
            stack[sp, FR_POS] = pos
            stack[sp, FR_END] = end
            stack[sp, FR_SRC] = src
            sp += 1
            buf = consts
            src = 1
            pos = b
            end = b + c
            pc = a
        else:
            return E_DEPTH, at  # not an instruction: a broken program


def decode_rows(prog, tables, consts, entries, which, data, start, end, status, first_row, stop_on_error, state,
                pad_nodes, a64, f64, a32, f32, a8, abytes, stack, out, err_code, err_pc, scratch32, scratch_f32):
    """Decodes rows ``first_row..`` of a batch; (next row, outcome) as ``vm/rows.py`` says, the failing
    instruction noted in ``err_pc``."""
    for row in range(first_row, which.shape[0]):
        code = status[row]
        pc = np.int64(-1)
        if code == E_OK:
            code, pc = run_record(prog, tables, consts, data, start[row], end[row], entries[which[row]], state,
                                  pad_nodes, a64, f64, a32, f32, a8, abytes, stack, out, scratch32, scratch_f32)
        nxt, outcome = end_decoded_row(row, status[row], code, pc, stop_on_error, state, pad_nodes, a64, a32, a8, out,
                                       err_code, err_pc)
        if outcome != GO_ON:
            return nxt, outcome
    return which.shape[0], ROWS_DONE


KERNELS = ("varint_error", "block_count", "read_decimal", "run_record", "decode_rows")
