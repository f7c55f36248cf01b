"""CRC kernels of both implementations against the crc32c and zlib libraries (hypothesis)."""

from __future__ import annotations

import zlib

import crc32c
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kwire.protocol.records import jit
from spark_kwire.protocol.records._arrow import readonly_u8
from spark_kwire.protocol.records.jit import crc as jit_crc

from .conftest import IMPLEMENTATIONS

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("impl", sorted(IMPLEMENTATIONS))
@SETTINGS
@given(st.binary(max_size=300), st.data())
def test_crc_kernels_match_libraries(impl, data, d):
    k = IMPLEMENTATIONS[impl]
    s = d.draw(st.integers(0, len(data)))
    e = d.draw(st.integers(s, len(data)))
    assert k.crc32c_range(readonly_u8(data), s, e) == crc32c.crc32c(data[s:e])
    assert k.crc32_range(readonly_u8(data), s, e) == zlib.crc32(data[s:e])


@SETTINGS
@given(st.binary(max_size=300), st.data())
def test_both_compiled_crc32c_paths_match_the_library(data, d):
    # the table path runs on hosts without SSE4.2: test it here too
    s = d.draw(st.integers(0, len(data)))
    e = d.draw(st.integers(s, len(data)))
    exp = crc32c.crc32c(data[s:e])
    assert jit_crc.crc32c_table_range(readonly_u8(data), s, e) == exp
    if jit.HW_CRC32C:
        assert jit_crc.crc32c_hw_range(readonly_u8(data), s, e) == exp
