"""read_committed's aborted-transaction filter of both kernel implementations against the test oracle."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spark_kwire.protocol.records import layout as L

from . import reference_records as R
from .conftest import IMPLEMENTATIONS

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

batch_desc = st.tuples(st.sampled_from([1, 2, 2, 2]), st.integers(-1, 3), st.booleans(), st.booleans(), st.booleans(),
                       st.integers(1, 5))


@pytest.mark.parametrize("impl", sorted(IMPLEMENTATIONS))
@SETTINGS
@given(st.lists(batch_desc, max_size=30), st.lists(st.tuples(st.integers(0, 3), st.integers(0, 80)), max_size=6))
def test_txn_filter_kernel_matches_reference(impl, descs, aborted):
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
    ctrl = np.array([L.CTRL_ABORT if b["ctrl_abort"] else L.CTRL_COMMIT for b in batches], dtype=np.int64)
    ab = np.array(aborted, dtype=np.int64).reshape(-1, 2)
    order = np.argsort(ab[:, 1], kind="stable")
    keep = np.ones(m, dtype=np.bool_)
    st_, _ = IMPLEMENTATIONS[impl].txn_filter(magic, attr, pid, last, ctrl, np.ascontiguousarray(ab[order, 0]),
                                              np.ascontiguousarray(ab[order, 1]), np.unique(ab[:, 0]), keep)
    assert st_ == L.OK
    assert (~keep).tolist() == ref


@pytest.mark.parametrize("impl", sorted(IMPLEMENTATIONS))
@pytest.mark.parametrize("bad", [L.CTRL_MALFORMED, L.CTRL_UNPARSED])
def test_txn_filter_refuses_an_unreadable_control_batch(impl, bad):
    one = np.ones(1, dtype=np.int64)
    keep = np.ones(2, dtype=np.bool_)
    st_, idx = IMPLEMENTATIONS[impl].txn_filter(
        np.array([2, 2]), np.array([0x10, 0x30]), np.array([1, 1]), np.array([0, 1]), np.array([L.CTRL_UNKNOWN, bad]),
        one, np.zeros(1, dtype=np.int64), one, keep)
    assert (st_, idx) == (L.E_CONTROL, 1)
