"""The producer's accumulator and idempotence state (no broker): rows of several appends share a batch, full
batches are encoded at once, the rest waits open; batches are cut by batch.size and stamped once with the
producer id, epoch and dense per-partition sequence numbers, read back by kafka-python's record parser."""

from __future__ import annotations

import threading

import pyarrow as pa
import pytest
from kafka.record.default_records import DefaultRecordBatch

from spark_kwire.client.producer.accumulator import RecordAccumulator, batch_record_count
from spark_kwire.client.producer.idempotence import SEQUENCE_MASK, IdempotenceState


def _values(n: int, tag: str) -> pa.Array:
    return pa.array([f"{tag}-{i:05d}".encode() * 8 for i in range(n)], pa.binary())


def _parsed(batches):
    return [DefaultRecordBatch(bytearray(b.payload)) for b in batches]


def _drain(accumulator: RecordAccumulator) -> dict:
    out = {}
    for tp in accumulator.ready_partitions():
        while (batch := accumulator.pop_ready(tp)) is not None:
            out.setdefault(tp, []).append(batch)
    return out


def test_batches_carry_the_producer_id_and_dense_sequences_per_partition():
    state = IdempotenceState(True)
    state.producer_id, state.producer_epoch = 4242, 3
    accumulator = RecordAccumulator(compression="lz4", batch_size=4096, idempotence=state)
    accumulator.append("t", 0, _values(700, "a"))
    accumulator.append("t", 1, _values(50, "b"))
    accumulator.append("t", 0, _values(300, "c"))
    assert accumulator.ready_records > 0  # partition 0 filled whole batches: encoded at once
    assert 0 < accumulator.pending_records < 1050 and accumulator.pending_bytes > 0
    accumulator.close_open()
    assert accumulator.pending_records == 0 and accumulator.pending_bytes == 0
    batches = _drain(accumulator)
    assert accumulator.ready_records == 0 and _drain(accumulator) == {}
    expected_values = {0: [v for tag, n in (("a", 700), ("c", 300)) for v in _values(n, tag).to_pylist()],
                       1: _values(50, "b").to_pylist()}
    for (topic, partition), expected in {("t", 0): 1000, ("t", 1): 50}.items():
        queue = batches[(topic, partition)]
        parsed = _parsed(queue)
        assert len(parsed) > (1 if partition == 0 else 0)  # batch.size cut partition 0 into several
        assert {(p.producer_id, p.producer_epoch) for p in parsed} == {(4242, 3)}
        sequences = [p.base_sequence for p in parsed]
        counts = [p.records_count for p in parsed]
        assert sequences == [sum(counts[:i]) for i in range(len(counts))] and sum(counts) == expected
        assert [b.base_sequence for b in queue] == sequences and [b.count for b in queue] == counts
        assert [batch_record_count(b.payload) for b in queue] == counts
        assert all(len(b.payload) <= 4096 for b in queue)
        assert [r.value for p in parsed for r in p] == expected_values[partition]
    assert state.next_sequence(("t", 0)) == 1000 and state.next_sequence(("t", 1)) == 50


def test_rows_of_small_appends_share_one_batch_until_it_is_full():
    state = IdempotenceState(False)
    accumulator = RecordAccumulator(compression="none", batch_size=64 * 1024, idempotence=state)
    for i in range(20):
        accumulator.append("t", 0, _values(10, f"s{i}"), timestamps_ms=1_700_000_000_000 + i)
    assert accumulator.pending_records == 200 and accumulator.ready_records == 0
    held = accumulator.held_bytes
    assert held == accumulator.pending_bytes > 0
    assert accumulator.open_partitions() == [("t", 0)]
    assert accumulator.close_open() == 1
    (batch,) = _drain(accumulator)[("t", 0)]
    (parsed,) = _parsed([batch])
    assert parsed.records_count == 200
    # each append's rows keep the timestamp they were given
    assert [r.timestamp for r in parsed] == [1_700_000_000_000 + i // 10 for i in range(200)]
    assert accumulator.held_bytes == len(batch.payload)  # encoded bytes are held until the sender releases them
    accumulator.release(len(batch.payload))
    assert accumulator.held_bytes == 0


def test_closing_every_open_partition_wakes_the_sender_once_with_all_of_them_ready():
    """A flush's batches leave together: the sender, woken at the first ready partition, would send that one
    alone and the rest in a second request."""
    ready_when_woken = []
    accumulator = RecordAccumulator(compression="none", batch_size=64 * 1024, idempotence=IdempotenceState(False))
    accumulator.on_ready = lambda: ready_when_woken.append(sorted(accumulator.ready_partitions()))
    for partition in range(4):
        accumulator.append("t", partition, _values(30, f"p{partition}"))
    assert accumulator.close_open() == 4
    assert ready_when_woken == [[("t", p) for p in range(4)]]
    accumulator.append("t", 0, _values(400_000 // 80, "full"))  # a full batch is handed over at once
    assert len(ready_when_woken) == 2


def test_closing_many_partitions_shows_the_sender_each_batch_size_of_them_as_it_is_ready():
    """A flush of more than batch.size is sent while the rest is encoded, in requests of at least batch.size:
    shown everything at once, the sender idled until the last partition was encoded (64-partition writes got
    slower, issue 45); shown each partition, it sent one at a time."""
    batch_size = 64 * 1024
    accumulator = RecordAccumulator(compression="none", batch_size=batch_size, idempotence=IdempotenceState(False))
    seen_when_woken = []  # the partitions the sender can see, at each wake-up
    accumulator.on_ready = lambda: seen_when_woken.append(accumulator.ready_partitions())
    for partition in range(16):
        accumulator.append("t", partition, _values(250, f"p{partition:02d}"))  # ~20 KB each: none is full
    assert accumulator.ready_records == 0 and seen_when_woken == []
    assert accumulator.close_open() == 16
    sizes = {tp: sum(len(b.payload) for b in batches) for tp, batches in _drain(accumulator).items()}
    assert sum(sizes.values()) > 3 * batch_size
    assert len(seen_when_woken) >= 3 and sorted(seen_when_woken[-1]) == sorted(sizes)
    groups = [[tp for tp in now if tp not in before] for before, now in zip([[]] + seen_when_woken, seen_when_woken)]
    assert [tp for group in groups for tp in group] == [("t", p) for p in range(16)]
    for group in groups[:-1]:  # each one a batch.size, and not more than the partition that completed it
        group_bytes = sum(sizes[tp] for tp in group)
        assert batch_size <= group_bytes < batch_size + sizes[group[-1]]


def test_sequences_wrap_to_zero_after_the_int32_maximum():
    state = IdempotenceState(True)
    state.producer_id, state.producer_epoch = 1, 0
    state.advance(("t", 0), SEQUENCE_MASK - 4)  # the next base sequence is 2**31 - 5
    accumulator = RecordAccumulator(compression="none", batch_size=1 << 20, idempotence=state)
    accumulator.append("t", 0, _values(10, "w"))
    accumulator.close_open()
    (batch,) = _drain(accumulator)[("t", 0)]
    assert batch.base_sequence == 2**31 - 5 and _parsed([batch])[0].base_sequence == 2**31 - 5
    assert state.next_sequence(("t", 0)) == 5


def test_without_idempotence_batches_carry_no_producer_id():
    state = IdempotenceState(False)
    accumulator = RecordAccumulator(compression="gzip", batch_size=1 << 20, idempotence=state)
    accumulator.append("t", 2, _values(20, "n"), keys=pa.array([b"k"] * 20, pa.binary()))
    accumulator.append("t", 2, _values(5, "m"))  # no keys: null keys in the shared batch
    accumulator.close_open()
    (parsed,) = _parsed(_drain(accumulator)[("t", 2)])
    assert (parsed.producer_id, parsed.base_sequence) == (-1, -1) and not state.needs_producer_id
    assert [r.key for r in parsed] == [b"k"] * 20 + [None] * 5


def test_appends_racing_with_a_closing_thread_keep_sequence_order():
    """The sender closes lingering batches while the caller appends to the same partitions: each partition's
    batches still become ready in sequence order, with every row once."""
    state = IdempotenceState(True)
    state.producer_id, state.producer_epoch = 9, 0
    accumulator = RecordAccumulator(compression="none", batch_size=2048, idempotence=state)
    stop = threading.Event()

    def closer():
        while not stop.is_set():
            accumulator.close_open()

    thread = threading.Thread(target=closer)
    thread.start()
    try:
        for i in range(300):
            accumulator.append("t", i % 3, pa.array([f"{i:04d}-{j}".encode() for j in range(7)], pa.binary()))
    finally:
        stop.set()
        thread.join()
    accumulator.close_open()
    for p, batches in _drain(accumulator).items():
        sequences = [b.base_sequence for b in batches]
        assert sequences == [sum(b.count for b in batches[:i]) for i in range(len(batches))]
        values = [r.value for parsed in _parsed(batches) for r in parsed]
        assert values == [f"{i:04d}-{j}".encode() for i in range(p[1], 300, 3) for j in range(7)]


def test_rows_that_cannot_be_encoded_name_the_partition():
    accumulator = RecordAccumulator(compression="none", batch_size=1024, idempotence=IdempotenceState(False))
    with pytest.raises(ValueError, match="cannot encode records for t-3: values must be a binary or string"):
        accumulator.append("t", 3, pa.array([1, 2, 3], pa.int64()))
    assert accumulator.pending_records == 0 and accumulator.held_bytes == 0
