"""Decode bytes made by kafka-python's builders; encode and read back with
kafka-python's reader (independent implementations)."""

from __future__ import annotations

import random
import struct

import numpy as np
import pyarrow as pa
import pytest
from kafka.record.default_records import DefaultRecordBatch
from kafka.record.memory_records import MemoryRecords

from spark_kwire.protocol.errors import ProtocolDecodeError
from spark_kwire.protocol.records import (
    HEADERS_TYPE,
    decode_record_set,
    encode_record_batch,
    encode_record_batches,
    split_batches,
)
from spark_kwire.protocol.records.compression import xxh32

from .test_records_helpers import (
    CODECS,
    as_rows,
    control_batch,
    kp_legacy_set,
    kp_v2_batch,
    legacy_set_timestamp_type,
)

pytestmark = pytest.mark.usefixtures("records_kernels")  # each test through both implementations

T0 = 1_700_000_000_000


def _random_records(rng, n, *, with_headers=True):
    recs = []
    for i in range(n):
        key = None if rng.random() < 0.2 else rng.randbytes(rng.randrange(0, 20))
        value = None if rng.random() < 0.1 else rng.randbytes(rng.randrange(0, 300)) * rng.choice([1, 5])
        headers = []
        if with_headers and rng.random() < 0.5:
            for j in range(rng.randrange(1, 4)):
                headers.append((f"h{j}-é", None if rng.random() < 0.3 else rng.randbytes(rng.randrange(0, 10))))
        recs.append((T0 + rng.randrange(-1000, 1000), key, value, headers))
    return recs


def _decode(buf, start=0, **kw):
    kw.setdefault("end_offset", None)
    kw.setdefault("read_committed", False)
    kw.setdefault("aborted_transactions", None)
    kw.setdefault("include_headers", True)
    return decode_record_set(buf, start_offset=start, **kw)


@pytest.mark.parametrize("codec", CODECS)
def test_v2_kafka_python_batches_every_column(codec):
    rng = random.Random(codec)
    buf = b""
    expected = []
    base = 1000
    for _ in range(4):
        recs = _random_records(rng, rng.randrange(1, 40))
        buf += kp_v2_batch(recs, base_offset=base, codec=codec)
        for i, (ts, k, v, h) in enumerate(recs):
            expected.append((base + i, ts, 0, k, v, [(hk.encode(), hv) for hk, hv in h] or None))
        base += len(recs)
    res = _decode(buf)
    assert as_rows(res) == expected
    assert res.next_offset == base
    assert res.bytes_decoded == len(buf) and res.trailing_bytes == 0
    assert res.record_count == len(expected)
    assert res.offset.dtype == np.int64 and res.timestamp.dtype == np.int64 and res.timestamp_type.dtype == np.int32
    assert res.key.type == pa.binary() and res.value.type == pa.binary() and res.headers.type == HEADERS_TYPE
    res.key.validate(full=True)
    res.value.validate(full=True)
    res.headers.validate(full=True)
    # without headers
    res2 = _decode(buf, include_headers=False)
    assert res2.headers is None
    assert as_rows(res2, with_headers=False) == [r[:5] for r in expected]


def test_v2_kafka_python_transactional_and_control_batches():
    rng = random.Random(5)
    pid = 4242
    r1 = _random_records(rng, 3)
    r2 = _random_records(rng, 2)
    buf = (
        kp_v2_batch(r1, base_offset=0, transactional=True, producer_id=pid, producer_epoch=1, base_sequence=0)
        + control_batch(base_offset=3, producer_id=pid, abort=False)
        + kp_v2_batch(r2, base_offset=4, transactional=True, producer_id=pid, producer_epoch=1, base_sequence=3)
        + control_batch(base_offset=6, producer_id=pid, abort=True)
    )
    # read_uncommitted: both transactions' records, never the markers
    res = _decode(buf)
    assert res.offset.tolist() == [0, 1, 2, 4, 5]
    assert res.next_offset == 7
    # read_committed with the second transaction aborted
    res = _decode(buf, read_committed=True, aborted_transactions=[(pid, 4)])
    assert res.offset.tolist() == [0, 1, 2]
    assert res.value.to_pylist() == [r[2] for r in r1]
    assert res.next_offset == 7


@pytest.mark.parametrize("codec", CODECS[:4])  # legacy formats have no zstd
@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_kafka_python_message_sets(magic, codec, monkeypatch):
    if codec == "lz4" and magic == 0:
        # kafka-python writes the KAFKA-3160 broken header checksum for magic 0
        # with the xxhash package; feed it our xxh32 (checked against lz4's
        # own content checksums in test_xxh32_matches_lz4_frames)
        import kafka.codec

        class _X:
            def __init__(self, data):
                self.h = xxh32(bytes(data))

            def digest(self):
                return self.h.to_bytes(4, "big")

        monkeypatch.setattr(kafka.codec, "xxhash", type("xxhash", (), {"xxh32": _X}))
    rng = random.Random(f"{magic}{codec}")
    buf = b""
    expected = []
    base = 50
    for _ in range(3):
        n = rng.randrange(1, 12)
        recs = [(T0 + rng.randrange(1000), k, v) for (_, k, v, _) in _random_records(rng, n, with_headers=False)]
        buf += kp_legacy_set(recs, magic=magic, base_offset=base, codec=codec)
        for i, (ts, k, v) in enumerate(recs):
            expected.append((base + i, ts if magic == 1 else -1, 0 if magic == 1 else -1, k, v, None))
        base += n
    res = _decode(buf)
    assert as_rows(res) == expected
    assert res.next_offset == base
    # start inside a compressed wrapper / message set
    res = _decode(buf, start=expected[2][0] + 0)
    assert as_rows(res) == expected[2:]


def test_kafka3160_frame_really_has_the_broken_checksum(monkeypatch):
    import kafka.codec
    import lz4.frame

    class _X:
        def __init__(self, data):
            self.h = xxh32(bytes(data))

        def digest(self):
            return self.h.to_bytes(4, "big")

    monkeypatch.setattr(kafka.codec, "xxhash", type("xxhash", (), {"xxh32": _X}))
    payload = b"hello kafka 3160 " * 20
    broken = kafka.codec.lz4_encode_old_kafka(payload)
    with pytest.raises(RuntimeError):
        lz4.frame.decompress(broken)  # the LZ4 library refuses it...
    recs = [(T0, b"k", payload)]
    buf = kp_legacy_set(recs, magic=0, base_offset=9, codec="lz4")
    res = _decode(buf)  # ...we accept it for magic 0
    assert res.value.to_pylist() == [payload]
    assert res.offset.tolist() == [9]


def test_xxh32_matches_lz4_frames():
    import lz4.frame

    assert xxh32(b"") == 0x02CC5D05
    rng = random.Random(1)
    for n in list(range(0, 40)) + [100, 1000]:
        data = rng.randbytes(n)
        frame = lz4.frame.compress(data, content_checksum=True)
        assert xxh32(data) == int.from_bytes(frame[-4:], "little")


def test_legacy_magic1_log_append_time_wrapper_overrides_inner_timestamps():
    recs = [(T0 + i, b"k%d" % i, b"v%d" % i) for i in range(4)]
    wrapper = kp_legacy_set(recs, magic=1, base_offset=100, codec="gzip")
    wrapper = legacy_set_timestamp_type(wrapper, 1_234_567)
    res = _decode(wrapper)
    assert res.offset.tolist() == [100, 101, 102, 103]
    assert res.timestamp.tolist() == [1_234_567] * 4
    assert res.timestamp_type.tolist() == [1] * 4


def test_mixed_legacy_and_v2_in_one_fetch():
    legacy = kp_legacy_set([(T0, b"a", b"1"), (T0, b"b", b"2")], magic=1, base_offset=0, codec="snappy")
    v2 = kp_v2_batch([(T0 + 5, b"c", b"3", [])], base_offset=2, codec="lz4")
    res = _decode(legacy + v2)
    assert res.offset.tolist() == [0, 1, 2]
    assert res.value.to_pylist() == [b"1", b"2", b"3"]
    assert res.next_offset == 3


# --- encode -> independent reader -----------------------------------------------
def _columns(rng, n):
    recs = _random_records(rng, n)
    values = pa.array([r[2] for r in recs], type=pa.binary())
    keys = pa.array([r[1] for r in recs], type=pa.binary())
    ts = np.array([r[0] for r in recs], dtype=np.int64)
    headers = pa.array([[{"key": hk, "value": hv} for hk, hv in r[3]] or None for r in recs], type=HEADERS_TYPE)
    return recs, values, keys, ts, headers


@pytest.mark.parametrize("codec", CODECS)
def test_encode_read_by_kafka_python_and_by_us(codec):
    rng = random.Random("enc" + codec)
    recs, values, keys, ts, headers = _columns(rng, 60)
    data = encode_record_batch(values, keys, timestamps_ms=ts, headers=headers, compression=codec,
                               producer_id=77, producer_epoch=2, base_sequence=10, transactional=True,
                               base_offset=500)
    batch = DefaultRecordBatch(data)
    assert batch.validate_crc()
    assert batch.compression_type == {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}[codec]
    assert batch.producer_id == 77 and batch.producer_epoch == 2 and batch.base_sequence == 10
    assert batch.is_transactional and not batch.is_control_batch
    assert batch.base_offset == 500 and batch.last_offset_delta == 59
    got = [(r.offset, r.timestamp, r.key, r.value, [(k, v) for k, v in r.headers]) for r in batch]
    exp = [(500 + i, r[0], r[1], r[2], list(r[3])) for i, r in enumerate(recs)]
    assert got == exp
    assert batch.max_timestamp == max(r[0] for r in recs)
    # and through MemoryRecords (fetch-response framing)
    mr = MemoryRecords(data + data[:30])
    assert mr.next_batch() is not None and not mr.has_next()
    # our decoder
    res = _decode(data + data[:30])
    assert as_rows(res) == [(500 + i, r[0], 0, r[1], r[2], [(hk.encode(), hv) for hk, hv in r[3]] or None)
                            for i, r in enumerate(recs)]
    assert res.trailing_bytes == 30 and res.next_offset == 560


def test_encode_variants_of_input_types():
    vals = ["a", None, "ccc"]
    for arr in (pa.array(vals, pa.binary()), pa.array(vals, pa.large_binary()), pa.array(vals, pa.string()),
                pa.array(vals, pa.large_string()), pa.array(vals, pa.binary_view()),
                pa.chunked_array([pa.array(vals[:1], pa.binary()), pa.array(vals[1:], pa.binary())]),
                pa.array(["x"] + vals, pa.binary()).slice(1)):
        data = encode_record_batch(arr, None, timestamps_ms=7, headers=None)
        got = [(r.key, r.value, r.timestamp) for r in DefaultRecordBatch(data)]
        assert got == [(None, b"a", 7), (None, None, 7), (None, b"ccc", 7)]
    # sliced headers / keys
    recs, values, keys, ts, headers = _columns(random.Random(3), 20)
    data = encode_record_batch(values.slice(5, 10), keys.slice(5, 10), timestamps_ms=ts[5:15],
                               headers=headers.slice(5, 10))
    got = [(r.key, r.value, [(k, v) for k, v in r.headers]) for r in DefaultRecordBatch(data)]
    assert got == [(r[1], r[2], list(r[3])) for r in recs[5:15]]
    with pytest.raises(ValueError):
        encode_record_batch(pa.array([], pa.binary()))
    with pytest.raises(ValueError):
        encode_record_batch(pa.array([b"x"]), transactional=True)
    with pytest.raises(ValueError):
        encode_record_batch(pa.array([b"x"]), compression="brotli")


@pytest.mark.parametrize("codec", ["none", "zstd"])
def test_split_and_encode_batches(codec):
    rng = random.Random(11)
    recs, values, keys, ts, headers = _columns(rng, 500)
    max_bytes = 4000
    bounds = split_batches(values, keys, timestamps_ms=ts, headers=headers, max_batch_bytes=max_bytes)
    assert bounds[0] == 0 and bounds[-1] == 500 and np.all(np.diff(bounds) > 0)
    batches = encode_record_batches(values, keys, timestamps_ms=ts, headers=headers, compression=codec,
                                    max_batch_bytes=max_bytes, producer_id=1, producer_epoch=0, base_sequence=0)
    assert len(batches) == len(bounds) - 1
    seq = 0
    got = []
    for data, first, last in zip(batches, bounds[:-1], bounds[1:]):
        if codec == "none":
            assert len(data) <= max_bytes or last - first == 1
            if last < 500:  # greedy: the next record would not have fitted
                nxt = encode_record_batch(values.slice(first, last - first + 1), keys.slice(first, last - first + 1),
                                          timestamps_ms=ts[first:last + 1], headers=headers.slice(first, last - first + 1))
                assert len(nxt) > max_bytes
        b = DefaultRecordBatch(data)
        assert b.base_sequence == seq
        seq += last - first
        got.extend((r.key, r.value) for r in b)
    assert got == [(r[1], r[2]) for r in recs]
    # the concatenation decodes as one fetch (offsets as a broker would assign them)
    buf = b""
    base = 0
    for data in batches:
        buf += struct.pack(">q", base) + data[8:]
        base += DefaultRecordBatch(data).last_offset_delta + 1
    res = _decode(buf)
    assert res.offset.tolist() == list(range(500))
    assert res.value.to_pylist() == [r[2] for r in recs]


def test_corrupt_kafka_python_batch_names_topic_partition_offset():
    data = bytearray(kp_v2_batch([(T0, b"k", b"v" * 50, [])], base_offset=31337))
    data[-3] ^= 0xFF
    with pytest.raises(ProtocolDecodeError, match=r"'orders'.*partition 4.*31337.*checksum"):
        _decode(bytes(data), topic="orders", partition=4)
