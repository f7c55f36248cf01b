"""Decimal text to the nearest double inside the kernels: the Eisel-Lemire algorithm (as fast_float and Go's
strconv use it), for mantissas of up to 19 digits and any exponent; it gives up (the caller then asks Python's
``float``) only on the rare inputs it cannot round with certainty. Everything here is unsigned 64-bit
arithmetic (mixing signed and unsigned would make numba compute in floats)."""

from __future__ import annotations

import math

import numpy as np

SMALLEST_POWER = -342
LARGEST_POWER = 308
U1 = np.uint64(1)
U0 = np.uint64(0)
LOW32 = np.uint64(0xFFFFFFFF)
ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
MASK_9 = np.uint64(0x1FF)
MANTISSA_MASK = np.uint64((1 << 52) - 1)


def _powers_of_five() -> tuple[np.ndarray, np.ndarray]:
    """128-bit approximations of 5^q (q from -342 to 308), most significant bit set: truncated for q >= 0, one more
    than the truncation of 2^b / 5^-q for q < 0 (the table Eisel-Lemire's proofs are made with)."""
    hi, lo = [], []
    for q in range(SMALLEST_POWER, LARGEST_POWER + 1):
        if q < 0:
            power5 = 5 ** -q
            z = power5.bit_length()
            b = z + 127 if q >= -27 else 2 * z + 128
            c = 2 ** b // power5 + 1
            while c >= 1 << 128:
                c //= 2
        else:
            c = 5 ** q
            while c < 1 << 127:
                c *= 2
            while c >= 1 << 128:
                c //= 2
        hi.append(c >> 64)
        lo.append(c & ((1 << 64) - 1))
    return np.array(hi, dtype=np.uint64), np.array(lo, dtype=np.uint64)


POW5_HI, POW5_LO = _powers_of_five()


def mul_64(a, b):
    """(high, low) 64-bit halves of the 128-bit product of two unsigned 64-bit numbers."""
    a_lo = a & LOW32
    a_hi = a >> np.uint64(32)
    b_lo = b & LOW32
    b_hi = b >> np.uint64(32)
    p0 = a_lo * b_lo
    p1 = a_lo * b_hi
    p2 = a_hi * b_lo
    p3 = a_hi * b_hi
    mid = (p0 >> np.uint64(32)) + (p1 & LOW32) + (p2 & LOW32)
    low = (p0 & LOW32) | (mid << np.uint64(32))
    high = p3 + (p1 >> np.uint64(32)) + (p2 >> np.uint64(32)) + (mid >> np.uint64(32))
    return high, low


def leading_zeros(w):
    n = np.uint64(0)
    if w >> np.uint64(32) == U0:
        n += np.uint64(32)
        w <<= np.uint64(32)
    if w >> np.uint64(48) == U0:
        n += np.uint64(16)
        w <<= np.uint64(16)
    if w >> np.uint64(56) == U0:
        n += np.uint64(8)
        w <<= np.uint64(8)
    if w >> np.uint64(60) == U0:
        n += np.uint64(4)
        w <<= np.uint64(4)
    if w >> np.uint64(62) == U0:
        n += np.uint64(2)
        w <<= np.uint64(2)
    if w >> np.uint64(63) == U0:
        n += U1
    return n


def eisel_lemire(w, q):
    """(ok, bits) of the double nearest to w * 10^q (w > 0, an unsigned 64-bit mantissa); ok is False when the
    algorithm cannot decide (then another method must)."""
    if q < SMALLEST_POWER:
        return True, U0
    if q > LARGEST_POWER:
        return True, np.uint64(0x7FF0000000000000)
    lz = leading_zeros(w)
    w = w << lz
    index = q - SMALLEST_POWER
    high, low = mul_64(w, POW5_HI[index])
    if high & MASK_9 == MASK_9:
        high2, low2 = mul_64(w, POW5_LO[index])
        low = low + high2
        if high2 > low:
            high += U1
        if high & MASK_9 == MASK_9 and low == ALL_ONES:
            return False, U0
    upper = high >> np.uint64(63)
    shift = upper + np.uint64(9)
    mantissa = high >> shift
    power2 = (((152170 + 65536) * q) >> 16) + 63 + np.int64(upper) - np.int64(lz) + 1023
    if power2 <= 0:
        if -power2 + 1 >= 64:
            return True, U0
        mantissa >>= np.uint64(-power2 + 1)
        mantissa += mantissa & U1
        mantissa >>= U1
        exponent = U0 if mantissa < (U1 << np.uint64(52)) else U1
        return True, (exponent << np.uint64(52)) | (mantissa & MANTISSA_MASK)
    if low <= U1 and -4 <= q <= 23 and mantissa & np.uint64(3) == U1:
        if (mantissa << shift) == high:
            mantissa &= ~U1
    mantissa += mantissa & U1
    mantissa >>= U1
    if mantissa >= (np.uint64(2) << np.uint64(52)):
        mantissa = U1 << np.uint64(52)
        power2 += 1
    if power2 >= 0x7FF:
        return True, np.uint64(0x7FF0000000000000)
    return True, (np.uint64(power2) << np.uint64(52)) | (mantissa & MANTISSA_MASK)




def bits_to_double(bits):
    """The double whose IEEE 754 bits are ``bits`` (positive, finite or infinite), computed exactly."""
    exponent = int((bits >> np.uint64(52)) & np.uint64(0x7FF))
    mantissa = bits & MANTISSA_MASK
    if exponent == 0x7FF:
        return np.inf
    if exponent == 0:
        return math.ldexp(np.float64(mantissa), -1074)
    return math.ldexp(np.float64(mantissa | (U1 << np.uint64(52))), exponent - 1075)


KERNELS = ("mul_64", "leading_zeros", "eisel_lemire", "bits_to_double")
