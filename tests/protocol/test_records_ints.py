"""Varints of both kernel implementations against the test oracle (hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kwire.protocol.records._arrow import readonly_u8

from . import reference_records as R
from .conftest import IMPLEMENTATIONS

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BOTH = pytest.mark.parametrize("impl", sorted(IMPLEMENTATIONS))


@BOTH
@SETTINGS
@given(st.binary(max_size=14), st.integers(0, 3), st.sampled_from(["int", "long"]))
def test_read_varint_matches_reference(impl, data, pos, kind):
    k = IMPLEMENTATIONS[impl]
    kern, ref = (k.read_varint, R.ref_read_varint) if kind == "int" else (k.read_varlong, R.ref_read_varlong)
    v, p = kern(readonly_u8(data), pos, len(data))
    try:
        rv, rp = ref(data, pos)
    except R.RefDecodeError:
        assert p == -1
    else:
        assert (v, p) == (rv, rp)


@BOTH
@SETTINGS
@given(st.integers(-(2**63), 2**63 - 1))
def test_write_varint_and_size_match_reference(impl, v):
    k = IMPLEMENTATIONS[impl]
    enc = R.ref_encode_varint(v)
    out = np.zeros(12, dtype=np.uint8)
    end = k.write_varint(out, 1, v)
    assert bytes(out[1:end]) == enc
    assert k.varint_size(v) == len(enc)
    back, p = R.ref_read_varlong(enc, 0)
    assert back == v and p == len(enc)
    if -(2**31) <= v < 2**31:
        assert R.ref_read_varint(enc, 0) == (v, len(enc))


def test_varint_known_encodings():
    # values from the Kafka protocol guide's zig-zag examples
    assert R.ref_encode_varint(0) == b"\x00"
    assert R.ref_encode_varint(-1) == b"\x01"
    assert R.ref_encode_varint(1) == b"\x02"
    assert R.ref_encode_varint(-64) == b"\x7f"
    assert R.ref_encode_varint(64) == b"\x80\x01"
    assert R.ref_encode_varint(2**31 - 1) == b"\xfe\xff\xff\xff\x0f"
