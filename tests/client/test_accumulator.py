"""The producer's accumulator and idempotence state (no broker): batches cut by batch.size, stamped once with
the producer id, epoch and dense per-partition sequence numbers, read back by kafka-python's record parser."""

from __future__ import annotations

import pyarrow as pa
import pytest
from kafka.record.default_records import DefaultRecordBatch

from spark_kwire.client.accumulator import RecordAccumulator, batch_record_count
from spark_kwire.client.idempotence import SEQUENCE_MASK, IdempotenceState


def _values(n: int, tag: str) -> pa.Array:
    return pa.array([f"{tag}-{i:05d}".encode() * 8 for i in range(n)], pa.binary())


def _parsed(batches):
    return [DefaultRecordBatch(bytearray(b.payload)) for b in batches]


def test_batches_carry_the_producer_id_and_dense_sequences_per_partition():
    state = IdempotenceState(True)
    state.producer_id, state.producer_epoch = 4242, 3
    accumulator = RecordAccumulator(compression="lz4", batch_size=4096, idempotence=state)
    accumulator.append("t", 0, _values(700, "a"))
    accumulator.append("t", 1, _values(50, "b"))
    accumulator.append("t", 0, _values(300, "c"))
    assert accumulator.pending_records == 1050 and accumulator.pending_bytes > 0
    batches = accumulator.drain()
    assert accumulator.pending_records == 0 and accumulator.pending_bytes == 0 and accumulator.drain() == {}
    for (topic, partition), expected in {("t", 0): 1000, ("t", 1): 50}.items():
        queue = list(batches[(topic, partition)])
        parsed = _parsed(queue)
        assert len(parsed) > (1 if partition == 0 else 0)  # batch.size cut partition 0 into several
        assert {(p.producer_id, p.producer_epoch) for p in parsed} == {(4242, 3)}
        sequences = [p.base_sequence for p in parsed]
        counts = [p.records_count for p in parsed]
        assert sequences == [sum(counts[:i]) for i in range(len(counts))] and sum(counts) == expected
        assert [b.base_sequence for b in queue] == sequences and [b.count for b in queue] == counts
        assert [batch_record_count(b.payload) for b in queue] == counts
        values = [r.value for p in parsed for r in p]
        assert len(values) == expected
    assert state.next_sequence(("t", 0)) == 1000 and state.next_sequence(("t", 1)) == 50


def test_sequences_wrap_to_zero_after_the_int32_maximum():
    state = IdempotenceState(True)
    state.producer_id, state.producer_epoch = 1, 0
    state.advance(("t", 0), SEQUENCE_MASK - 4)  # the next base sequence is 2**31 - 5
    accumulator = RecordAccumulator(compression="none", batch_size=1 << 20, idempotence=state)
    accumulator.append("t", 0, _values(10, "w"))
    (batch,) = accumulator.drain()[("t", 0)]
    assert batch.base_sequence == 2**31 - 5 and _parsed([batch])[0].base_sequence == 2**31 - 5
    assert state.next_sequence(("t", 0)) == 5


def test_without_idempotence_batches_carry_no_producer_id():
    state = IdempotenceState(False)
    accumulator = RecordAccumulator(compression="gzip", batch_size=1 << 20, idempotence=state)
    accumulator.append("t", 2, _values(20, "n"), keys=pa.array([b"k"] * 20, pa.binary()))
    (parsed,) = _parsed(accumulator.drain()[("t", 2)])
    assert (parsed.producer_id, parsed.base_sequence) == (-1, -1) and not state.needs_producer_id
    assert [r.key for r in parsed] == [b"k"] * 20


def test_restore_puts_undelivered_batches_back_ahead_of_newer_ones():
    state = IdempotenceState(True)
    state.producer_id, state.producer_epoch = 7, 0
    accumulator = RecordAccumulator(compression="none", batch_size=1024, idempotence=state)
    accumulator.append("t", 0, _values(40, "old"))
    drained = accumulator.drain()
    accumulator.append("t", 0, _values(10, "new"))
    accumulator.restore(drained)
    sequences = [b.base_sequence for b in accumulator.drain()[("t", 0)]]
    assert sequences == sorted(sequences) and sequences[0] == 0


def test_rows_that_cannot_be_encoded_name_the_partition():
    accumulator = RecordAccumulator(compression="none", batch_size=1024, idempotence=IdempotenceState(False))
    with pytest.raises(ValueError, match="cannot encode records for t-3"):
        accumulator.append("t", 3, pa.array([1, 2, 3], pa.int64()))
