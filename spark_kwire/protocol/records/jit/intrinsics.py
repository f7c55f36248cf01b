"""LLVM-level building blocks numba does not offer: memcpy between uint8 arrays, unaligned 8-byte loads and
the SSE4.2 CRC-32C instruction. Callers guarantee every range is valid: nothing here checks bounds."""

from __future__ import annotations

import platform

import llvmlite.binding as llvm_binding
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .cache import kernel


@intrinsic
def _memcpy_u8(typingctx, dst, dst_off, src, src_off, n):
    sig = types.void(dst, dst_off, src, src_off, n)

    def codegen(context, builder, signature, args):
        dst_v, doff, src_v, soff, n_v = args
        dary = context.make_array(signature.args[0])(context, builder, dst_v)
        sary = context.make_array(signature.args[2])(context, builder, src_v)
        dptr = builder.gep(dary.data, [doff])
        sptr = builder.gep(sary.data, [soff])
        cgutils.raw_memcpy(builder, dptr, sptr, n_v, 1)
        return context.get_dummy_value()

    return sig, codegen


# numba's slice assignment is ~3x slower for the short copies of keys and values
@kernel
def copy_bytes(dst, dst_off, src, src_off, n):
    """dst[dst_off:dst_off+n] = src[src_off:src_off+n] (ranges already checked)."""
    _memcpy_u8(dst, np.int64(dst_off), src, np.int64(src_off), np.int64(n))


@intrinsic
def load_u64_le(typingctx, arr, off):
    """Unaligned 8-byte little-endian load from a uint8 array (caller checks bounds)."""
    sig = types.int64(arr, types.int64)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        ptr = builder.gep(ary.data, [args[1]])
        p64 = builder.bitcast(ptr, ir.IntType(64).as_pointer())
        return builder.load(p64, align=1)

    return sig, codegen


def _host_has_sse42() -> bool:
    try:
        return (platform.machine().lower() in ("x86_64", "amd64")
                and "+sse4.2" in llvm_binding.get_host_cpu_features().flatten())
    except Exception:  # pragma: no cover - exotic hosts
        return False


# numba compiles for the host CPU (and keys its cache by CPU name and features), so the choice made here at
# import is the one baked into the compiled kernels.
HW_CRC32C = _host_has_sse42()


@intrinsic
def hw_crc32c_u64(typingctx, crc, v):
    """One step of the SSE4.2 CRC-32C instruction over 8 bytes (only when HW_CRC32C)."""
    sig = types.int64(types.int64, types.int64)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i64, i64]),
                                            "llvm.x86.sse42.crc32.64.64")
        return builder.call(fn, args)

    return sig, codegen


@intrinsic
def hw_crc32c_u8(typingctx, crc, v):
    """One step of the SSE4.2 CRC-32C instruction over 1 byte (only when HW_CRC32C)."""
    sig = types.int64(types.int64, types.int64)

    def codegen(context, builder, signature, args):
        i32 = ir.IntType(32)
        i8 = ir.IntType(8)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i32, [i32, i8]),
                                            "llvm.x86.sse42.crc32.32.8")
        c = builder.trunc(args[0], i32)
        b = builder.trunc(args[1], i8)
        return builder.zext(builder.call(fn, [c, b]), ir.IntType(64))

    return sig, codegen
