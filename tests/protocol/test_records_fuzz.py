"""Fuzzing decode_record_set: random and mutated bytes give either a result
(identical to the test oracle's) or ProtocolDecodeError, never another
exception, a crash or a hang; through both kernel implementations, which must
give identical results and identical error messages."""

from __future__ import annotations

import struct
import time
import zlib

import crc32c
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kwire.protocol.errors import ProtocolDecodeError
from spark_kwire.protocol.records import decode_record_set, warm_up
from spark_kwire.protocol.records.kernels import using

from .conftest import IMPLEMENTATIONS
from .test_records_decode import decode_all
from .test_records_helpers import build_record_set, entry

MAX_SECONDS = 2.0  # per input (they take milliseconds; generous for loaded CI machines)


@pytest.fixture(autouse=True, scope="module")
def _compiled():
    warm_up()  # numba compilation must not count against the time limit


def recrc(buf: bytes) -> bytes:
    """Recomputes the checksum of every complete top-level entry, so that
    mutations reach the record parsers instead of stopping at the CRC."""
    b = bytearray(buf)
    p = 0
    n = len(b)
    while p + 17 <= n:
        size = struct.unpack_from(">i", b, p + 8)[0]
        if size < 14 or p + 12 + size > n:
            break
        end = p + 12 + size
        if b[p + 16] == 2 and size >= 49:
            struct.pack_into(">I", b, p + 17, crc32c.crc32c(bytes(b[p + 21:end])))
        elif b[p + 16] in (0, 1):
            struct.pack_into(">I", b, p + 12, zlib.crc32(bytes(b[p + 16:end])))
        p = end
    return bytes(b)


def timed_decode(buf):
    """Decodes with each implementation within the time limit; both must agree."""
    outcomes = []
    for name in sorted(IMPLEMENTATIONS):
        with using(name):
            t = time.perf_counter()
            try:
                res = decode_record_set(buf, start_offset=0, end_offset=None, read_committed=True,
                                        aborted_transactions=[(1, 0)], include_headers=True)
                outcomes.append((res.offset.tolist(), res.key.to_pylist(), res.value.to_pylist(),
                                 res.headers.to_pylist(), res.next_offset))
            except ProtocolDecodeError as exc:
                outcomes.append(str(exc))
            assert time.perf_counter() - t < MAX_SECONDS, name
    assert outcomes[0] == outcomes[1]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400))
def test_random_bytes(data):
    timed_decode(data)
    timed_decode(recrc(data))


mutation = st.tuples(
    st.sampled_from(["flip", "set", "truncate", "insert", "delete", "int32", "varint"]),
    st.integers(0, 10_000),
    st.integers(0, 255),
)


def mutate(buf: bytes, muts) -> bytes:
    b = bytearray(buf)
    for op, pos, val in muts:
        if not b:
            break
        p = pos % len(b)
        if op == "flip":
            b[p] ^= 1 << (val % 8)
        elif op == "set":
            b[p] = val
        elif op == "truncate":
            del b[p:]
        elif op == "insert":
            b[p:p] = bytes([val]) * (1 + val % 4)
        elif op == "delete":
            del b[p:p + 1 + val % 4]
        elif op == "int32" and p + 4 <= len(b):
            choices = [0, 1, -1, 13, 14, 48, 49, 61, 2**31 - 1, -(2**31), val, 1000 + val]
            struct.pack_into(">i", b, p, choices[val % len(choices)])
        elif op == "varint":
            b[p:p + 1] = [b"\xff" * 10, b"\x01", b"\x00", b"\x7f", b"\x80\x80\x80\x80\x10"][val % 5]
    return bytes(b)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(entry, min_size=1, max_size=4), st.lists(mutation, min_size=1, max_size=4), st.booleans(),
       st.integers(0, 12))
def test_mutated_record_sets_agree_with_reference(entries, muts, fix_crc, start):
    buf, _ = build_record_set(entries)
    bad = mutate(buf, muts)
    if fix_crc:
        bad = recrc(bad)
    t = time.perf_counter()
    decode_all(bad, start, None, True, [(1, 0), (2, 3)])
    assert time.perf_counter() - t < 3 * MAX_SECONDS  # both implementations and the oracle
