"""The exactly-once sink (deliveryGuarantee=exactly-once) under process crashes: read_committed consumers
(librdkafka and the Java client) see each input record exactly once."""

from __future__ import annotations

import pytest

from . import eos_scenarios as eos
from .scenarios import HEADER


@pytest.mark.timeout(1500)
def test_stream_driver_sigkilled_repeatedly_writes_each_record_once(bootstrap, tmp_path):
    outcome = eos.eos_stream_driver_crashes(bootstrap, str(tmp_path), kills=3)
    print(f"\n{HEADER}\n{outcome.row()}\n{outcome.detail}")
    assert outcome.sent > 0
    assert (outcome.found, outcome.distinct, outcome.lost, outcome.duplicated) == (outcome.sent,) * 2 + (0, 0), \
        outcome.detail
    java = eos.java_read_committed_values(bootstrap, outcome.detail["sink"], outcome.sent)
    assert eos.count_exactly_once(java, outcome.sent, "e") == (outcome.sent, 0, 0)


@pytest.mark.timeout(900)
def test_batch_task_failing_after_writing_is_retried_without_duplicates(bootstrap, tmp_path):
    outcome = eos.eos_batch_task_retry(bootstrap, str(tmp_path))
    print(f"\n{HEADER}\n{outcome.row()}\n{outcome.detail}")
    assert (outcome.found, outcome.distinct, outcome.lost, outcome.duplicated) == (outcome.sent,) * 2 + (0, 0)
    # the failed attempt had written rows (now aborted): the test exercised what it claims
    assert outcome.detail["records_in_log"] > outcome.sent
