"""Numbers as Java 17 prints them, inside the kernels: a double's decimal digits (the shortest that read back as the
same double) laid out as ``toString`` lays them out: plain from 1e-3 up to 1e7 (``100.0``, ``0.001``), else
``d.dddE±n`` (``1.0E10``, ``1.0E-4``).

Java 17's ``Double.toString`` (``FloatingDecimal``, the JVM Spark 4 runs on most) prints a whole number from 2^53
up to 2^63 with its exact digits, rounded off only past 2^57 (``2.82879384806159008E17``, not the shortest
``2.82879384806159E17``), a float from 2^24 likewise; kwire does the same (:func:`java17_whole_digits`). Its rare
other departures from the shortest digits (``9.999999999999999E22`` for 1e23) are not followed; Java 19 and later
print the shortest digits throughout.
"""

from __future__ import annotations

import math

import numpy as np

from .write import write_decimal_int, write_word
from .text import number_as_double


def number_digits(text, s, e, dig):
    """(count, exponent) of a number's text (``[-]digits[.digits][e[+-]digits]``): its significant digits into
    ``dig`` as ASCII (no leading or trailing zeros; count 0 for zero) and the power of ten of the first."""
    n = np.int64(0)
    point = False
    sci = np.int64(0)
    zeros = np.int64(0)  # fraction zeros before the first significant digit
    q = s
    while q < e:
        ch = np.int64(text[q])
        if ch == 46:
            point = True
        elif ch == 101 or ch == 69:
            q += 1
            sign = np.int64(1)
            if text[q] == 45 or text[q] == 43:
                sign = np.int64(-1) if text[q] == 45 else np.int64(1)
                q += 1
            v = np.int64(0)
            while q < e:
                if v < 100000000:
                    v = v * 10 + (np.int64(text[q]) - 48)
                q += 1
            sci += sign * v
            break
        elif 48 <= ch <= 57:
            if n == 0 and ch == 48:
                if point:
                    zeros += 1
            else:
                if n == 0:
                    sci = np.int64(-1) - zeros if point else np.int64(-1)
                if not point:
                    sci += 1
                if n < dig.shape[0]:
                    dig[n] = ch
                n += 1
        q += 1
    if n > dig.shape[0]:
        n = np.int64(dig.shape[0])
    while n > 0 and dig[n - 1] == 48:
        n -= 1
    return n, sci


def shortest_digits(dig, n, sci, x):
    """The fewest leading digits of ``dig[:n]`` (rounded) that read back as the double ``x``; rounding may carry
    into a new first digit (then ``sci`` grows). (count, exponent)."""
    limit = n if n < 17 else np.int64(17)
    for p in range(1, limit + 1):
        mant = np.int64(0)
        for k in range(p):
            mant = mant * 10 + (np.int64(dig[k]) - 48)
        if p < n and dig[p] >= 53:  # round half up on the next digit (the read back decides)
            mant += 1
        exact, y = number_as_double(False, -mant, np.int64(p), np.int64(0), sci - p + 1)
        if exact and y == x:
            e = sci
            digits = np.int64(p)
            if mant >= np.int64(10) ** p:  # 9.99 -> 10.0
                e += 1
            for k in range(p - 1, -1, -1):
                dig[k] = 48 + mant % 10
                mant //= 10
            while digits > 1 and dig[digits - 1] == 48:
                digits -= 1
            return digits, e
    return (n if n < 17 else np.int64(17)), sci


# FloatingDecimal.insignificantDigitsNumber: the decimal digits of 2^i, less one
INSIGNIFICANT = np.array([0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 8, 8, 8, 9,
                          9, 9, 9, 10, 10, 10, 11, 11, 11, 12, 12, 12, 12, 13, 13, 13, 14, 14, 14, 15, 15, 15, 15, 16,
                          16, 16, 17, 17, 17, 18, 18, 18, 19], dtype=np.int64)


def java17_whole_digits(x, single, dig):
    """(count, exponent) of the digits Java 17 prints for a whole ``x`` of at least 2^53 (2^24 for a float) and
    below 2^63: its exact value, the last digits rounded off (half up) past 2^57 (2^26), trailing zeros dropped;
    count 0 for any other ``x``."""
    a = abs(x)
    significant = 24 if single else 53
    if not (2.0 ** significant <= a < 9.223372036854775807e18):
        return np.int64(0), np.int64(0)
    if single and a != np.floor(a):
        return np.int64(0), np.int64(0)
    _m, e = math.frexp(a)
    bin_exp = e - 1
    v = np.int64(a)
    p2 = bin_exp - significant - 1
    drop = INSIGNIFICANT[p2] if 1 < p2 < INSIGNIFICANT.shape[0] else np.int64(0)
    scale = np.int64(0)
    if drop > 0:
        pow10 = np.int64(10) ** drop
        residue = v % pow10
        v //= pow10
        scale = drop
        if residue >= pow10 // 2:
            v += 1
    while v % 10 == 0:
        v //= 10
        scale += 1
    n = np.int64(0)
    t = v
    while t > 0:
        t //= 10
        n += 1
    t = v
    for k in range(n - 1, -1, -1):
        dig[k] = 48 + t % 10
        t //= 10
    return n, n - 1 + scale


def write_java_digits(out, pos, cap, neg, dig, n, sci):
    """A double given by its digits (``dig[:n]``, ASCII; n 0 for zero) and the power of ten of the first, as
    Java's ``toString`` prints it."""
    if pos < 0 or pos + n + 28 > cap:
        return np.int64(-1)
    if neg:
        out[pos] = 45
        pos += 1
    if n == 0:
        return write_word(out, pos, cap, np.int64(0x302E30), 3)  # 0.0
    if -3 <= sci < 7:
        if sci < 0:
            out[pos] = 48
            out[pos + 1] = 46
            pos += 2
            for _ in range(-sci - 1):
                out[pos] = 48
                pos += 1
            for k in range(n):
                out[pos + k] = dig[k]
            return pos + n
        for k in range(sci + 1):
            out[pos + k] = dig[k] if k < n else 48
        pos += sci + 1
        out[pos] = 46
        pos += 1
        if n <= sci + 1:
            out[pos] = 48
            return pos + 1
        for k in range(sci + 1, n):
            out[pos] = dig[k]
            pos += 1
        return pos
    return write_scientific(out, pos, cap, dig, n, sci, True)


def write_scientific(out, pos, cap, dig, n, exponent, point_zero):
    """``d.dddEn`` of the digits ``dig[:n]``: a single digit as ``d.0E`` (``point_zero``, as doubles print) or
    ``dE`` (as BigDecimal prints)."""
    out[pos] = dig[0]
    pos += 1
    if n > 1 or point_zero:
        out[pos] = 46
        pos += 1
    if n == 1 and point_zero:
        out[pos] = 48
        pos += 1
    for k in range(1, n):
        out[pos] = dig[k]
        pos += 1
    out[pos] = 69
    return write_decimal_int(out, pos + 1, cap, exponent)


def write_non_finite(out, pos, cap, neg, nan):
    """NaN and the infinities as Jackson writes them (strings): ``"NaN"``, ``"Infinity"``, ``"-Infinity"``."""
    if pos < 0 or pos + 12 > cap:
        return np.int64(-1)
    if nan:
        return write_word(out, pos, cap, np.int64(0x224E614E22), 5)
    out[pos] = 34
    pos += 1
    if neg:
        out[pos] = 45
        pos += 1
    pos = write_word(out, pos, cap, np.int64(0x7974696E69666E49), 8)
    out[pos] = 34
    return pos + 1


def write_java_number(out, pos, cap, text, s, e, dig, single):
    """A double (a float: ``single``) as Java prints it, from Arrow's shortest text of it (``1e+10``, ``0.001``,
    ``-0``, ``nan``, ``inf``)."""
    neg = text[s] == 45
    p = s + 1 if neg else s
    if text[p] == 110 or text[p] == 105:
        return write_non_finite(out, pos, cap, neg, text[p] == 110)
    n, sci = number_digits(text, p, e, dig)
    if sci >= 7:  # perhaps one of the whole numbers Java 17 prints all of: its value, from its (short) digits
        mant = np.int64(0)
        for k in range(n):
            mant = mant * 10 + (np.int64(dig[k]) - 48)
        exact, x = number_as_double(False, -mant, n, np.int64(0), sci - n + 1)
        if single:
            x = np.float64(np.float32(x))  # the float the shortest digits stand for
        if exact:
            m, e10 = java17_whole_digits(x, single, dig)
            if m > 0:
                n, sci = m, e10
            else:
                n, sci = number_digits(text, p, e, dig)
    return write_java_digits(out, pos, cap, neg, dig, n, sci)


KERNELS = ("number_digits", "shortest_digits", "java17_whole_digits", "write_java_digits", "write_scientific",
           "write_non_finite",
           "write_java_number")
