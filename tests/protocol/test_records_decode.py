"""decode_record_set end to end, through both kernel implementations and the test oracle: all three must
agree on every record set hypothesis builds (every codec, headers, transactions and control batches,
legacy magic 0/1 with compressed wrappers, offset ranges, truncation), and the two implementations must
fail with the same message where they fail."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kwire.protocol.errors import ProtocolDecodeError
from spark_kwire.protocol.records import decode_record_set
from spark_kwire.protocol.records.kernels import using

from . import reference_records as R
from .conftest import IMPLEMENTATIONS
from .test_records_helpers import CODECS, build_record_set, entry, spec_v2_batch


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


def _outcome(buf, start, end, rc, aborted):
    """("ok", records, next_offset, bytes_decoded, codecs) or ("error", message) of decode_record_set."""
    try:
        res = decode_record_set(buf, start_offset=start, end_offset=end, read_committed=rc,
                                aborted_transactions=aborted, include_headers=True)
    except ProtocolDecodeError as exc:
        return ("error", str(exc))
    return ("ok", canon(res), res.next_offset, res.bytes_decoded, res.codecs)


def decode_all(buf, start, end, rc, aborted):
    """Decodes with both implementations and the oracle; asserts they agree; returns the outcome."""
    try:
        ref = R.ref_decode_record_set(buf, start_offset=start, end_offset=end, read_committed=rc,
                                      aborted_transactions=aborted)
    except (R.RefDecodeError, ProtocolDecodeError):  # the oracle calls decompress, which raises the latter
        ref = None
    outcomes = {}
    for name in sorted(IMPLEMENTATIONS):
        with using(name):
            outcomes[name] = _outcome(buf, start, end, rc, aborted)
    assert outcomes["numba"] == outcomes["python"]
    got = outcomes["numba"]
    if got[0] == "error":
        assert ref is None, f"kernels raised where the oracle decoded: {got[1]}"
        return got
    assert ref is not None, "kernels decoded where the oracle raised"
    assert got[1] == ref_canon(ref)
    assert got[2] == ref["next_offset"]
    assert got[3] == ref["bytes_decoded"]
    return got


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(entry, max_size=6), st.data())
def test_decode_matches_reference_decoder(entries, d):
    buf, total = build_record_set(entries)
    start = d.draw(st.integers(0, total + 1))
    end = d.draw(st.one_of(st.none(), st.integers(0, total + 1)))
    rc = d.draw(st.booleans())
    aborted = d.draw(st.lists(st.tuples(st.integers(0, 2), st.integers(0, total + 1)), max_size=3))
    cut = d.draw(st.integers(0, 30))
    got = decode_all(buf[: max(len(buf) - cut, 0)], start, end, rc, aborted)
    if cut == 0 and got[0] == "ok":
        assert got[3] == len(buf)


@pytest.mark.usefixtures("records_kernels")
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


@pytest.mark.usefixtures("records_kernels")
def test_timestamps_wrap_like_int64():
    # timestamp deltas past the int64 range wrap in both implementations, as Java's long arithmetic does
    recs = [(0, 0, None, b"a", []), (1, 2, None, b"b", [])]
    buf = spec_v2_batch(recs, base_offset=5, base_ts=2**63 - 1, max_ts=2**63 - 1)
    res = decode_record_set(buf, start_offset=0, include_headers=False)
    assert res.offset.tolist() == [5, 6]
    assert res.timestamp.tolist() == [2**63 - 1, -(2**63) + 1]
