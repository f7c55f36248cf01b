"""The default partitioner's hash, through both kernel implementations, against Java's test vectors and
kafka-python's murmur2 (hypothesis)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.partitioner.default import murmur2 as kp_murmur2

from spark_kwire.protocol.records import murmur2, murmur2_array, partition_for_keys

pytestmark = pytest.mark.usefixtures("records_kernels")

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

JAVA_VECTORS = {  # org.apache.kafka.common.utils.UtilsTest#testMurmur2
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
    b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    b"abc": 479470107,
}


def test_murmur2_known_vectors():
    for data, h in JAVA_VECTORS.items():
        assert murmur2(data) == h
        assert kp_murmur2(data) == h & 0xFFFFFFFF  # kafka-python returns it unsigned
    keys = pa.array(list(JAVA_VECTORS))
    assert murmur2_array(keys).tolist() == list(JAVA_VECTORS.values())


@SETTINGS
@given(st.lists(st.one_of(st.none(), st.binary(max_size=40)), max_size=30), st.integers(1, 1000))
def test_partition_kernel_matches_references(keys, nparts):
    arr = pa.array(keys, type=pa.binary())
    got = partition_for_keys(arr, nparts)
    assert got.dtype == np.int32
    exp_kp = [-1 if k is None else (kp_murmur2(k) & 0x7FFFFFFF) % nparts for k in keys]
    assert got.tolist() == exp_kp
    assert murmur2_array(arr).tolist() == [0 if k is None else murmur2(k) for k in keys]
    # large_binary and sliced arrays
    big = pa.array([b"pad"] + keys, type=pa.large_binary()).slice(1)
    assert partition_for_keys(big, nparts).tolist() == exp_kp
