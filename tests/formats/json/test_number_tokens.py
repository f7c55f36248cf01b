"""The plain JSON kernel's fast path for common number tokens (``plain_number``) against the general reading it
skips (``scan_token``, then ``number_as_long`` / ``number_as_double``): the same outcome, value and end for any
token, valid or not, under Spark's default lexer flags and the lenient ones."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_kwire.formats.json.kernels import values as vm_values
from spark_kwire.formats.json.kernels.lexer import (
    LX_LEADING_ZEROS, LX_NON_NUMERIC, T_INT, T_NAN, T_NEG_INF, T_POS_INF, is_name_byte, scan_token
)
from spark_kwire.formats.json_text.kernels.text import number_as_double, number_as_long
from spark_kwire.formats.vm.codes import E_JSON_NUMBER, E_JSON_SYNTAX, E_JSON_TYPE, E_OK

FLAGS = (LX_NON_NUMERIC, LX_LEADING_ZEROS | LX_NON_NUMERIC)
DIGITS = st.text("0123456789", min_size=0, max_size=24)
TOKEN = st.builds(
    lambda sign, lead, whole, frac, exp, after: sign + lead + whole + frac + exp + after,
    st.sampled_from(["", "", "-", "+"]), st.sampled_from(["", "", "0"]), DIGITS,
    st.one_of(st.just(""), DIGITS.map(lambda d: "." + d)),
    st.one_of(st.just(""), st.builds(lambda e, s, d: e + s + d, st.sampled_from("eE"), st.sampled_from(["", "+", "-"]),
                                     DIGITS)),
    st.sampled_from(["", ",", "}", "]", " ", "a", "_", ".", "-", "x", "e"]))


def general_int(data, flags):
    tk, q, neg, mant, digits, frac, exp = scan_token(data, 0, len(data), flags)
    if tk == 0 or (q < len(data) and is_name_byte(data[q])):
        return E_JSON_SYNTAX, 0, 0
    if tk != T_INT:
        return E_JSON_TYPE, 0, int(q)
    code, x = number_as_long(neg, mant, digits, frac, exp)
    return (E_OK, int(x), int(q)) if code == E_OK else (E_JSON_NUMBER, 0, int(q))


def general_double(data, flags):
    tk, q, neg, mant, digits, frac, exp = scan_token(data, 0, len(data), flags)
    if tk == 0 or (q < len(data) and is_name_byte(data[q])):
        return E_JSON_SYNTAX, 0.0, True, 0
    if tk == T_NAN:
        return E_OK, math.nan, True, int(q)
    if tk in (T_POS_INF, T_NEG_INF):
        return E_OK, (-math.inf if tk == T_NEG_INF else math.inf), True, int(q)
    exact, x = number_as_double(neg, mant, digits, frac, exp)
    return E_OK, float(x), bool(exact), int(q)


def same_double(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))


@settings(max_examples=3000, deadline=None)
@given(token=TOKEN)
def test_fast_number_paths_read_as_the_general_one(token):
    data = np.frombuffer(token.encode(), dtype=np.uint8)
    if len(data) == 0:
        return
    with np.errstate(over="ignore"):
        for flags in FLAGS:
            code, x, end = vm_values.int_token(data, 0, len(data), flags, 64)
            assert (code, int(x) if code == E_OK else 0, int(end) if code != E_JSON_SYNTAX else 0) == \
                general_int(data, flags), token
            code, x, exact, end = vm_values.double_token(data, 0, len(data), flags, False)
            g_code, g_x, g_exact, g_end = general_double(data, flags)
            assert (code, int(end) if code != E_JSON_SYNTAX else 0) == (g_code, g_end), token
            if code == E_OK and g_exact:
                assert exact and same_double(float(x), g_x), token


def test_fast_paths_take_the_common_tokens():
    """The tokens the fast paths are for do not fall through to the general reading (or they would save nothing)."""
    from spark_kwire.formats.json.kernels.lexer import plain_number

    def plain(token: bytes, after: bytes = b","):
        text = token + after
        end, neg, mant, digits, frac = plain_number(np.frombuffer(text, dtype=np.uint8), 0, len(text))
        return int(end), bool(neg), int(mant), int(digits), int(frac)

    assert plain(b"0") == (1, False, 0, 1, 0)
    assert plain(b"-7") == (2, True, 7, 1, 0)
    assert plain(b"123456789012345678") == (18, False, 123456789012345678, 18, 0)
    assert plain(b"51.25", b"}") == (5, False, 5125, 4, 2)
    assert plain(b"-0.5", b"]") == (4, True, 5, 2, 1)
    for token in (b"1e5", b"01", b"1.", b"+1", b"NaN", b"12abc"):  # left to the general reading
        assert plain(token, b"")[0] == -1, token
    for token, value in ((b"51.25", 51.25), (b"-0.5", -0.5), (b"0.1", 0.1), (b"12345678901.2345", 12345678901.2345)):
        code, x, exact, end = vm_values.double_token(np.frombuffer(token, dtype=np.uint8), 0, len(token), 0, False)
        assert (code, float(x), bool(exact), int(end)) == (E_OK, value, True, len(token))
