"""The v2 records encoder and batch splitter of both kernel implementations against the test oracle
(hypothesis)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kwire.protocol.records import HEADERS_TYPE, encode_record_batch, split_batches
from spark_kwire.protocol.records.encoding import _Columns

from . import reference_records as R

pytestmark = pytest.mark.usefixtures("records_kernels")

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

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
    # a slice of the rows, as the producer encodes one batch of many
    if len(rs) > 2:
        first, last = 1, len(rs) - 1
        base_ts = int(ts[first])
        out = np.zeros(cols.size(first, last, base_ts) + 3, dtype=np.uint8)
        end = cols.encode_into(out, 3, first, last, base_ts)
        assert bytes(out[3:end]) == R.ref_encode_records([r[0] for r in rs[first:last]], [r[1] for r in rs[first:last]],
                                                           ts[first:last].tolist(), [r[3] for r in rs[first:last]],
                                                           base_ts)
        assert end == out.shape[0]
    # whole batch: header fields + CRC, decodable by the reference decoder
    data = encode_record_batch(values, keys, timestamps_ms=ts, headers=headers)
    assert data[61:] == R.ref_encode_records([r[0] for r in rs], [r[1] for r in rs], ts.tolist(),
                                             [r[3] for r in rs], int(ts[0]))
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


def test_timestamp_deltas_wrap_like_int64():
    # deltas past the int64 range wrap in both implementations (as Java's long arithmetic does)
    ts = np.array([2**63 - 1, -(2**63)], dtype=np.int64)
    values = pa.array([b"a", b"b"])
    cols = _Columns(values, None, ts, None)
    size = cols.size(0, 2, int(ts[0]))
    out = np.zeros(size, dtype=np.uint8)
    assert cols.encode_into(out, 0, 0, 2, int(ts[0])) == size
    wrapped = R.ref_encode_records([b"a", b"b"], [None, None], [2**63 - 1, 2**63 - 1 + 1], [None, None], 2**63 - 1)
    assert bytes(out) == wrapped
