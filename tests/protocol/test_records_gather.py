"""Pass 3 of both kernel implementations: gathering key/value slices into Arrow buffers (hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kwire.protocol.records._arrow import readonly_u8

from .conftest import IMPLEMENTATIONS

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("impl", sorted(IMPLEMENTATIONS))
@pytest.mark.parametrize("offset_type", [np.int32, np.int64])
@SETTINGS
@given(st.binary(min_size=1, max_size=100), st.binary(max_size=100), st.data())
def test_gather_binary_matches_slicing(impl, offset_type, a, b, d):
    both = a + b
    n = d.draw(st.integers(0, 20))
    pos, ln, exp = [], [], []
    for _ in range(n):
        p = d.draw(st.integers(0, len(both) - 1))
        in_a = p < len(a)
        lim = (len(a) if in_a else len(both)) - p
        length = d.draw(st.integers(-1, lim))
        pos.append(p)
        ln.append(length)
        exp.append(None if length < 0 else both[p:p + length])
    offsets = np.zeros(n + 1, dtype=offset_type)
    total = sum(max(x, 0) for x in ln)
    data = np.zeros(total, dtype=np.uint8)
    written = IMPLEMENTATIONS[impl].gather_binary(readonly_u8(a), readonly_u8(b), np.array(pos, np.int64),
                                                  np.array(ln, np.int64), offsets, data)
    assert written == total
    got = [None if ln[i] < 0 else bytes(data[offsets[i]:offsets[i + 1]]) for i in range(n)]
    assert got == exp
