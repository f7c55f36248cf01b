"""Consuming a topic without Spark: kwire's client vs confluent-kafka (librdkafka), like with like.

Writes N keyed records of 100 B into a topic (lz4, 8 partitions) with librdkafka, then reads all of it back
with both clients, alternating, both warmed by one untimed read first. Two comparisons, each ending with
the same result on both sides (asserted equal):

* "Arrow columns": the whole topic as a pyarrow Table of partition, offset, timestamp (ms), key, value.
  kwire's KafkaClient.fetch_range decodes record batches straight into Arrow columns; confluent-kafka's
  Consumer hands out one Message per record, whose fields are collected into the same columns.
* "every record in Python": each record's key and value as Python bytes, summed into a checksum (count,
  key bytes, value bytes). kwire converts its columns to Python objects; confluent-kafka reads each
  Message's key() and value().

    python benchmarks/consume_throughput.py [--records 2000000] [--runs 3] [--bootstrap host:port]
"""

from __future__ import annotations

import time

from _common import broker, parse_args, print_machine, report, timed

COLUMNS = ["partition", "offset", "timestamp", "key", "value"]


def produce(bootstrap: str, topic: str, args) -> None:
    from confluent_kafka import Producer

    from spark_kwire import admin

    admin.create_topic(bootstrap, topic, partitions=args.partitions)
    producer = Producer({"bootstrap.servers": bootstrap, "compression.type": args.compression,
                         "linger.ms": 20, "batch.size": 1_000_000, "queue.buffering.max.messages": 1_000_000})
    value = b"x" * args.record_size
    for i in range(args.records):
        while True:
            try:
                producer.produce(topic, value=value, key=str(i).encode())
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(120) == 0


# -- kwire ------------------------------------------------------------------------------------------------------
def _kwire_chunks(bootstrap: str, topic: str):
    """(partition, decoded chunk) for the whole topic, every partition in turn."""
    from spark_kwire import admin
    from spark_kwire.client import fetch_range, list_offsets

    with admin.connect(bootstrap) as client:
        tps = [(topic, p) for p in client.partitions_for(topic)]
        ends = list_offsets(client, tps, "latest")
        for t, p in tps:
            for decoded in fetch_range(client, t, p, 0, ends[(t, p)][0]):
                yield p, decoded


def kwire_arrow(bootstrap: str, topic: str):
    import numpy as np
    import pyarrow as pa

    tables = []
    for p, d in _kwire_chunks(bootstrap, topic):
        n = len(d.offset)
        tables.append(pa.table([pa.array(np.full(n, p, dtype=np.int32)), pa.array(np.asarray(d.offset, dtype=np.int64)),
                                pa.array(np.asarray(d.timestamp, dtype=np.int64)), d.key, d.value], names=COLUMNS))
    return pa.concat_tables(tables)


def kwire_python(bootstrap: str, topic: str) -> tuple[int, int, int]:
    count = key_bytes = value_bytes = 0
    for _p, d in _kwire_chunks(bootstrap, topic):
        for key, value in zip(d.key.to_pylist(), d.value.to_pylist()):
            count += 1
            key_bytes += len(key) if key is not None else 0
            value_bytes += len(value) if value is not None else 0
    return count, key_bytes, value_bytes


# -- confluent-kafka --------------------------------------------------------------------------------------------
def _librdkafka_messages(bootstrap: str, topic: str, partitions: int):
    """Batches of Messages of the whole topic: like kwire, it looks the end offsets up first and stops on
    reaching them (waiting for end-of-partition events would add a fetch.wait.max.ms per partition)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-{time.time()}",
                         "enable.auto.commit": False, "fetch.max.bytes": 52428800,
                         "max.partition.fetch.bytes": 4194304})
    try:
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in range(partitions)}
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions) if ends[p] > 0])
        remaining = {p for p in range(partitions) if ends[p] > 0}
        while remaining:
            batch = [m for m in consumer.consume(10000, timeout=1.0) if not m.error()]
            yield batch
            remaining -= {m.partition() for m in batch if m.offset() == ends[m.partition()] - 1}
    finally:
        consumer.close()


def librdkafka_arrow(bootstrap: str, topic: str, partitions: int):
    import pyarrow as pa

    columns = {name: [] for name in COLUMNS}
    for batch in _librdkafka_messages(bootstrap, topic, partitions):
        for m in batch:
            columns["partition"].append(m.partition())
            columns["offset"].append(m.offset())
            columns["timestamp"].append(m.timestamp()[1])
            columns["key"].append(m.key())
            columns["value"].append(m.value())
    types = [pa.int32(), pa.int64(), pa.int64(), pa.binary(), pa.binary()]
    return pa.table([pa.array(columns[n], t) for n, t in zip(COLUMNS, types)], names=COLUMNS)


def librdkafka_python(bootstrap: str, topic: str, partitions: int) -> tuple[int, int, int]:
    count = key_bytes = value_bytes = 0
    for batch in _librdkafka_messages(bootstrap, topic, partitions):
        for m in batch:
            key, value = m.key(), m.value()
            count += 1
            key_bytes += len(key) if key is not None else 0
            value_bytes += len(value) if value is not None else 0
    return count, key_bytes, value_bytes


def _sorted(table):
    return table.sort_by([("partition", "ascending"), ("offset", "ascending")])


def main() -> None:
    args = parse_args(__doc__, 2_000_000)
    print_machine()
    from spark_kwire.protocol.records import warm_up

    warm_up()
    with broker(args) as bootstrap:
        topic = f"bench-consume-{args.records}"
        produce(bootstrap, topic, args)
        contenders = {
            "Arrow columns": {
                "confluent-kafka": lambda: librdkafka_arrow(bootstrap, topic, args.partitions),
                "kwire": lambda: kwire_arrow(bootstrap, topic),
            },
            "every record in Python": {
                "confluent-kafka": lambda: librdkafka_python(bootstrap, topic, args.partitions),
                "kwire": lambda: kwire_python(bootstrap, topic),
            },
        }
        for what, readers in contenders.items():
            # Warm-up, untimed, and the check that both sides produce the same result.
            theirs, ours = readers["confluent-kafka"](), readers["kwire"]()
            if what == "Arrow columns":
                assert theirs.num_rows == args.records and _sorted(theirs).equals(_sorted(ours)), what
            else:
                assert theirs == ours and theirs[0] == args.records, (what, theirs, ours)
            del theirs, ours
            seconds = {name: [] for name in readers}
            for _ in range(args.runs):
                for name, read in readers.items():
                    seconds[name].append(timed(read))
            report(f"Consume {args.records:,} records x {args.record_size} B, {args.partitions} partitions, "
                   f"{args.compression}, one process, into {what}", args.records, seconds, baseline="confluent-kafka")


if __name__ == "__main__":
    main()
