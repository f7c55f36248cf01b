"""The pure-Python kernels' whole-array paths (decode_v2_arrays.py, encode_arrays.py, murmur2 by key length)
give exactly what the compiled kernels give, on random rows that reach their corners: null and empty keys and
values, multi-byte varints (long values, timestamps far apart, negative deltas), offset ranges that cut batches,
small batch limits, keys of many lengths; and a mutated batch still gets the compiled kernel's error."""

from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kwire.protocol.errors import ProtocolDecodeError
from spark_kwire.protocol.records import (decode_record_set, encode_record_batches, kernels, murmur2_array,
                                          partition_for_keys, split_batches, warm_up)
from spark_kwire.protocol.records.pure import decode_v2_arrays

pytestmark = pytest.mark.skipif(kernels.IMPLEMENTATION != "numba", reason="compares with the compiled kernels")


@pytest.fixture(autouse=True, scope="module")
def _compiled():
    warm_up()


binaries = st.one_of(st.none(), st.binary(max_size=3), st.binary(min_size=60, max_size=300))
rows = st.lists(st.tuples(binaries, binaries, st.integers(-(2**40), 2**40)), min_size=1, max_size=60)


def both(fn):
    with kernels.using("python"):
        plain = fn()
    with kernels.using("numba"):
        compiled = fn()
    return plain, compiled


def record_set(batches: list[bytes], first_offset: int) -> bytes:
    out, base = [], first_offset
    for b in batches:
        out.append(struct.pack(">q", base) + b[8:])
        base += struct.unpack_from(">i", b, 57)[0]
    return b"".join(out)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows, st.sampled_from([100, 400, 1 << 20]), st.sampled_from(["none", "lz4"]), st.integers(0, 2**40),
       st.data())
def test_encoding_and_decoding_agree_with_the_compiled_kernels(items, max_bytes, codec, first_offset, data):
    keys = pa.array([k for k, _, _ in items], pa.binary())
    values = pa.array([v for _, v, _ in items], pa.binary())
    stamps = np.array([t for _, _, t in items], dtype=np.int64) + 1_700_000_000_000
    plain, compiled = both(lambda: split_batches(values, keys, timestamps_ms=stamps, max_batch_bytes=max_bytes))
    assert plain.tolist() == compiled.tolist()
    plain, compiled = both(lambda: encode_record_batches(values, keys, timestamps_ms=stamps, compression=codec,
                                                         max_batch_bytes=max_bytes, producer_id=5, producer_epoch=0,
                                                         base_sequence=0))
    assert plain == compiled
    buf = record_set(compiled, first_offset)
    start = first_offset + data.draw(st.integers(0, len(items)))
    end = data.draw(st.one_of(st.none(), st.integers(start, first_offset + len(items))))

    def decode():
        res = decode_record_set(buf, start_offset=start, end_offset=end)
        return (res.offset.tolist(), res.timestamp.tolist(), res.key.to_pylist(), res.value.to_pylist(),
                res.next_offset)

    plain, compiled = both(decode)
    assert plain == compiled
    expected = [(k, v) for i, (k, v, _) in enumerate(items)
                if first_offset + i >= start and (end is None or first_offset + i < end)]
    assert list(zip(plain[2], plain[3])) == expected


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.none(), st.binary(max_size=40)), min_size=1, max_size=200), st.integers(1, 1000))
def test_partitions_and_hashes_agree_with_the_compiled_kernels(keys, partitions):
    array = pa.array(keys, pa.binary())
    plain, compiled = both(lambda: partition_for_keys(array, partitions).tolist())
    assert plain == compiled
    plain, compiled = both(lambda: murmur2_array(array).tolist())
    assert plain == compiled


def rows(batch: bytes, room: int = 100):
    a = np.frombuffer(batch, dtype=np.uint8)
    return decode_v2_arrays.rows_of_regions(a, (batch, b""), len(batch), [(0, 61, len(batch), 20, 0, 1, 1, 0)], 0,
                                            2**62, room)


def test_a_batch_with_headers_or_a_broken_record_takes_the_record_by_record_path():
    values = pa.array([b"v" * 100] * 20)
    headers = pa.array([[{"key": "h", "value": b"x"}]] * 20,
                       pa.list_(pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())])))
    with kernels.using("numba"):
        (with_headers,) = encode_record_batches(values, None, timestamps_ms=1, headers=headers)
        (plain_batch,) = encode_record_batches(values, None, timestamps_ms=1)
    assert rows(with_headers) is None
    assert rows(plain_batch).shape == (9, 20)
    assert rows(plain_batch, room=19) is None  # more rows than room: the record-by-record path reports it
    broken = bytearray(plain_batch)
    broken[61 + 2 + 5] = 0x7F  # a key length far past the record's end
    assert rows(bytes(broken)) is None


def test_a_fetch_of_many_small_batches_from_both_buffers_is_read_at_once():
    # 16 KB batches (the Java producer's default), some compressed (their records in the second buffer)
    values = pa.array([b"%05d" % i * 20 for i in range(3000)])
    keys = pa.array([b"k%d" % i for i in range(3000)])
    with kernels.using("numba"):
        batches = encode_record_batches(values, keys, timestamps_ms=5, max_batch_bytes=16384)
        lz4 = encode_record_batches(values, keys, timestamps_ms=5, max_batch_bytes=16384, compression="lz4")
    buf = record_set(batches + lz4, 100)
    calls = []
    original = decode_v2_arrays.rows_of_regions

    def counted(*args):
        calls.append(len(args[3]))
        return original(*args)

    from spark_kwire.protocol.records.pure import regions

    regions.rows_of_regions = counted
    try:
        plain, compiled = both(lambda: decode_record_set(buf, start_offset=150).value.to_pylist())
    finally:
        regions.rows_of_regions = original
    assert plain == compiled and len(plain) == 6000 - 50
    assert calls == [len(batches) + len(lz4)]  # one call for every batch of the fetch


@pytest.mark.parametrize("position", [61, 63, 64, 70, 120])
def test_mutated_records_give_the_compiled_kernels_error(position):
    with kernels.using("numba"):
        (batch,) = encode_record_batches(pa.array([b"v" * 100] * 20), pa.array([b"k%d" % i for i in range(20)]),
                                         timestamps_ms=1)
    broken = bytearray(batch)
    broken[position] ^= 0xFF
    import crc32c

    struct.pack_into(">I", broken, 17, crc32c.crc32c(bytes(broken[21:])))

    def decode():
        try:
            return decode_record_set(bytes(broken), start_offset=0).offset.tolist()
        except ProtocolDecodeError as exc:
            return str(exc)

    plain, compiled = both(decode)
    assert plain == compiled
