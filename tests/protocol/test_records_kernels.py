"""Numba kernels against their plain-Python references (hypothesis)."""

from __future__ import annotations

import zlib

import crc32c
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.partitioner.default import murmur2 as kp_murmur2

from spark_kwire.protocol.records import (
    HEADERS_TYPE,
    decode_record_set,
    encode_record_batch,
    murmur2,
    murmur2_array,
    partition_for_keys,
    split_batches,
)
from spark_kwire.protocol.records import kernels as K
from spark_kwire.protocol.records.jit import crc as jit_crc
from spark_kwire.protocol.records import reference as R
from spark_kwire.protocol.records._arrow import readonly_u8
from spark_kwire.protocol.records.batch import _Columns

from .test_records_helpers import CODECS, control_batch, kp_legacy_set, spec_v2_batch

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def ro(b: bytes) -> np.ndarray:
    return readonly_u8(b)


# --- varints ------------------------------------------------------------------
@SETTINGS
@given(st.binary(max_size=14), st.integers(0, 3), st.sampled_from(["int", "long"]))
def test_read_varint_matches_reference(data, pos, kind):
    kern, ref = (K.read_varint, R.ref_read_varint) if kind == "int" else (K.read_varlong, R.ref_read_varlong)
    v, p = kern(ro(data), pos, len(data))
    try:
        rv, rp = ref(data, pos)
    except R.RefDecodeError:
        assert p == -1
    else:
        assert (v, p) == (rv, rp)


@SETTINGS
@given(st.integers(-(2**63), 2**63 - 1))
def test_write_varint_and_size_match_reference(v):
    enc = R.ref_encode_varint(v)
    out = np.zeros(12, dtype=np.uint8)
    end = K.write_varint(out, 1, v)
    assert bytes(out[1:end]) == enc
    assert K.varint_size(v) == len(enc)
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


# --- crc --------------------------------------------------------------------------
@SETTINGS
@given(st.binary(max_size=300), st.data())
def test_crc_kernels_match_libraries(data, d):
    s = d.draw(st.integers(0, len(data)))
    e = d.draw(st.integers(s, len(data)))
    exp = crc32c.crc32c(data[s:e])
    assert K.crc32c_range(ro(data), s, e) == exp
    assert jit_crc.crc32c_table_range(ro(data), s, e) == exp
    if K.HW_CRC32C:
        assert jit_crc.crc32c_hw_range(ro(data), s, e) == exp
    assert K.crc32_range(ro(data), s, e) == zlib.crc32(data[s:e])


# --- murmur2 ------------------------------------------------------------------------
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
    exp = [-1 if k is None else (murmur2(k) & 0x7FFFFFFF) % nparts for k in keys]
    assert got.tolist() == exp
    exp_kp = [-1 if k is None else (kp_murmur2(k) & 0x7FFFFFFF) % nparts for k in keys]
    assert got.tolist() == exp_kp
    # large_binary and sliced arrays
    big = pa.array([b"pad"] + keys, type=pa.large_binary()).slice(1)
    assert partition_for_keys(big, nparts).tolist() == exp


# --- encoder ----------------------------------------------------------------------------
header_lists = st.lists(st.tuples(st.binary(max_size=6).map(lambda b: b.hex().encode()),
                                  st.one_of(st.none(), st.binary(max_size=8))), max_size=3)
rows = st.lists(
    st.tuples(st.one_of(st.none(), st.binary(max_size=200)), st.one_of(st.none(), st.binary(max_size=20)),
              st.integers(-(2**40), 2**40), header_lists),
    min_size=1, max_size=25,
)


def _cols(rs):
    values = pa.array([r[0] for r in rs], pa.binary())
    keys = pa.array([r[1] for r in rs], pa.binary())
    ts = np.array([r[2] for r in rs], dtype=np.int64)
    headers = pa.array([[{"key": k.decode(), "value": v} for k, v in r[3]] for r in rs], HEADERS_TYPE)
    return values, keys, ts, headers


@SETTINGS
@given(rows)
def test_encode_records_kernel_matches_reference(rs):
    values, keys, ts, headers = _cols(rs)
    cols = _Columns(values, keys, ts, headers)
    base_ts = int(ts[0])
    size = cols.size(0, len(rs), base_ts)
    out = np.zeros(size, dtype=np.uint8)
    assert cols.encode_into(out, 0, 0, len(rs), base_ts) == size
    ref = R.ref_encode_records([r[0] for r in rs], [r[1] for r in rs], ts.tolist(), [r[3] for r in rs], base_ts)
    assert bytes(out) == ref
    # whole batch: header fields + CRC, decodable by the reference decoder
    data = encode_record_batch(values, keys, timestamps_ms=ts, headers=headers)
    assert data[61:] == ref
    got = R.ref_decode_record_set(data, start_offset=0)["records"]
    assert [(g[3], g[4], g[1], g[5]) for g in got] == [(r[1], r[0], r[2], r[3]) for r in rs]


@SETTINGS
@given(rows, st.integers(62, 600))
def test_split_points_kernel_matches_reference(rs, max_bytes):
    values, keys, ts, headers = _cols(rs)
    bounds = split_batches(values, keys, timestamps_ms=ts, headers=headers, max_batch_bytes=max_bytes)

    enc = R.ref_encode_varint

    def exact(i, first):
        value, key, _, hs = rs[i]
        body = 1 + len(enc(int(ts[i]) - int(ts[first]))) + len(enc(i - first))
        for f in (key, value):
            body += len(enc(-1)) if f is None else len(enc(len(f))) + len(f)
        body += len(enc(len(hs)))
        for hk, hv in hs:
            body += len(enc(len(hk))) + len(hk) + (1 if hv is None else len(enc(len(hv))) + len(hv))
        return len(enc(body)) + body

    assert bounds.tolist() == R.ref_split_points(exact, len(rs), max_bytes)


# --- read_committed filter ----------------------------------------------------------
batch_desc = st.tuples(st.sampled_from([1, 2, 2, 2]), st.integers(-1, 3), st.booleans(), st.booleans(), st.booleans(),
                       st.integers(1, 5))


@SETTINGS
@given(st.lists(batch_desc, max_size=30), st.lists(st.tuples(st.integers(0, 3), st.integers(0, 80)), max_size=6))
def test_txn_filter_kernel_matches_reference(descs, aborted):
    batches = []
    off = 0
    for magic, pid, txn, ctrl, abort, n in descs:
        batches.append(dict(magic=magic, pid=pid, first=off, last_offset=off + n - 1, transactional=txn,
                            control=ctrl and magic == 2, ctrl_abort=abort))
        off += n
    ref = R.ref_txn_filter(batches, aborted)
    m = len(batches)
    magic = np.array([b["magic"] for b in batches], dtype=np.int64)
    attr = np.array([(0x10 if b["transactional"] else 0) | (0x20 if b["control"] else 0) for b in batches], np.int64)
    pid = np.array([b["pid"] for b in batches], dtype=np.int64)
    last = np.array([b["last_offset"] for b in batches], dtype=np.int64)
    ctrl = np.array([K.CTRL_ABORT if b["ctrl_abort"] else K.CTRL_COMMIT for b in batches], dtype=np.int64)
    ab = np.array(aborted, dtype=np.int64).reshape(-1, 2)
    order = np.argsort(ab[:, 1], kind="stable")
    keep = np.ones(m, dtype=np.bool_)
    st_, _ = K.txn_filter(magic, attr, pid, last, ctrl, np.ascontiguousarray(ab[order, 0]),
                          np.ascontiguousarray(ab[order, 1]), np.unique(ab[:, 0]), keep)
    assert st_ == K.OK
    assert (~keep).tolist() == ref


# --- gather ---------------------------------------------------------------------------
@SETTINGS
@given(st.binary(min_size=1, max_size=100), st.binary(max_size=100), st.data())
def test_gather_binary_matches_slicing(a, b, d):
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
    offsets = np.zeros(n + 1, dtype=np.int32)
    total = sum(max(x, 0) for x in ln)
    data = np.zeros(total, dtype=np.uint8)
    K.gather_binary(ro(a), ro(b), np.array(pos, np.int64), np.array(ln, np.int32), offsets, data)
    got = [None if ln[i] < 0 else bytes(data[offsets[i]:offsets[i + 1]]) for i in range(n)]
    assert got == exp


# --- end to end: decode_record_set vs the reference decoder -----------------------------
record = st.tuples(st.one_of(st.none(), st.binary(max_size=30)), st.one_of(st.none(), st.binary(max_size=60)),
                   st.lists(st.tuples(st.sampled_from([b"a", b"bb", "ü".encode()]),
                                      st.one_of(st.none(), st.binary(max_size=5))), max_size=2),
                   st.integers(-5000, 5000))
entry = st.one_of(
    st.tuples(st.just("v2"), st.lists(record, max_size=6), st.sampled_from(CODECS), st.booleans(), st.booleans(),
              st.integers(0, 2)),
    st.tuples(st.just("ctrl"), st.booleans(), st.integers(0, 2)),
    st.tuples(st.just("legacy"), st.lists(record, min_size=1, max_size=4), st.sampled_from(CODECS[:3]),
              st.integers(0, 1)),
)


def build_record_set(entries):
    buf = b""
    off = 0
    for ent in entries:
        if ent[0] == "v2":
            _, recs, codec, txn, lat, pid = ent
            if not recs:
                buf += spec_v2_batch([], base_offset=off, last_offset_delta=0, codec=codec)
                off += 1
                continue
            rr = [(i, r[3], r[0], r[1], r[2]) for i, r in enumerate(recs)]
            buf += spec_v2_batch(rr, base_offset=off, codec=codec, transactional=txn, log_append_time=lat,
                                 producer_id=pid if txn else -1, producer_epoch=0 if txn else -1,
                                 base_sequence=0 if txn else -1)
            off += len(recs)
        elif ent[0] == "ctrl":
            _, abort, pid = ent
            buf += control_batch(base_offset=off, producer_id=pid, abort=abort)
            off += 1
        else:
            _, recs, codec, magic = ent
            buf += kp_legacy_set([(1_600_000_000_000 + r[3], r[0], r[1]) for r in recs], magic=magic,
                                 base_offset=off, codec=codec)
            off += len(recs)
    return buf, off


def canon(res):
    hs = res.headers.to_pylist()
    out = []
    for i, (k, v) in enumerate(zip(res.key.to_pylist(), res.value.to_pylist())):
        h = hs[i]
        out.append((int(res.offset[i]), int(res.timestamp[i]), int(res.timestamp_type[i]), k, v,
                    None if h is None else [(x["key"].encode(), x["value"]) for x in h]))
    return out


def ref_canon(ref):
    return [(o, t, tt, k, v, h or None) for (o, t, tt, k, v, h) in ref["records"]]


def decode_both(buf, start, end, rc, aborted):
    try:
        ref = R.ref_decode_record_set(buf, start_offset=start, end_offset=end, read_committed=rc,
                                      aborted_transactions=aborted)
    except R.RefDecodeError:
        ref = None
    except Exception as exc:  # noqa: BLE001 - the reference calls decompress, which raises ProtocolDecodeError
        from spark_kwire.protocol.errors import ProtocolDecodeError

        assert isinstance(exc, ProtocolDecodeError)
        ref = None
    from spark_kwire.protocol.errors import ProtocolDecodeError

    try:
        res = decode_record_set(buf, start_offset=start, end_offset=end, read_committed=rc,
                                aborted_transactions=aborted, include_headers=True)
    except ProtocolDecodeError:
        assert ref is None, "kernel raised where the reference decoded"
        return None
    assert ref is not None, "kernel decoded where the reference raised"
    assert canon(res) == ref_canon(ref)
    assert res.next_offset == ref["next_offset"]
    assert res.bytes_decoded == ref["bytes_decoded"]
    return res


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(entry, max_size=6), st.data())
def test_decode_matches_reference_decoder(entries, d):
    buf, total = build_record_set(entries)
    start = d.draw(st.integers(0, total + 1))
    end = d.draw(st.one_of(st.none(), st.integers(0, total + 1)))
    rc = d.draw(st.booleans())
    aborted = d.draw(st.lists(st.tuples(st.integers(0, 2), st.integers(0, total + 1)), max_size=3))
    cut = d.draw(st.integers(0, 30))
    res = decode_both(buf[: max(len(buf) - cut, 0)], start, end, rc, aborted)
    if cut == 0 and res is not None:
        assert res.bytes_decoded == len(buf)


@pytest.mark.parametrize("codec", CODECS)
def test_log_append_time_batch(codec):
    recs = [(i, 10 * i, b"k", b"v%d" % i, []) for i in range(3)]
    buf = spec_v2_batch(recs, base_offset=5, base_ts=1000, max_ts=99_999, log_append_time=True, codec=codec)
    res = decode_record_set(buf, start_offset=0, end_offset=None, read_committed=False, aborted_transactions=None,
                            include_headers=False)
    assert res.timestamp.tolist() == [99_999] * 3
    assert res.timestamp_type.tolist() == [1] * 3
    buf = spec_v2_batch(recs, base_offset=5, base_ts=1000, max_ts=99_999, codec=codec)
    res = decode_record_set(buf, start_offset=0, include_headers=False)
    assert res.timestamp.tolist() == [1000, 1010, 1020]
    assert res.timestamp_type.tolist() == [0] * 3
