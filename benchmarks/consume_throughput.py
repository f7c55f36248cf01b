"""Consuming a topic: kwire's client (fetch + decode into Arrow columns) vs confluent-kafka (librdkafka).

Writes N records of 100 B into a topic (lz4, 8 partitions) with librdkafka, then reads all of it back,
alternating, with kwire's fetch_range (every partition in turn, no Spark) and with a
confluent-kafka Consumer (assign + poll/consume until the end), and prints records/s and the ratio.
    python benchmarks/consume_throughput.py [--records 2000000] [--runs 3] [--bootstrap host:port]
"""

from __future__ import annotations

import time

from _common import broker, parse_args, report, timed


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


def consume_kwire(bootstrap: str, topic: str, expected: int) -> None:
    from spark_kwire import admin
    from spark_kwire.client import fetch_range, list_offsets

    with admin.connect(bootstrap) as client:
        tps = [(topic, p) for p in client.partitions_for(topic)]
        ends = list_offsets(client, tps, "latest")
        total = value_bytes = 0
        for (t, p) in tps:
            for decoded in fetch_range(client, t, p, 0, ends[(t, p)][0]):
                total += decoded.record_count
                value_bytes += len(decoded.value.buffers()[2] or b"")
    assert total == expected, total


def consume_librdkafka(bootstrap: str, topic: str, expected: int, partitions: int) -> None:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-{time.time()}",
                         "enable.auto.commit": False, "enable.partition.eof": True,
                         "fetch.max.bytes": 52428800, "max.partition.fetch.bytes": 4194304})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    total, eof = 0, set()
    while len(eof) < partitions:
        for msg in consumer.consume(10000, timeout=1.0):
            if msg.error():
                eof.add(msg.partition())
            else:
                total += 1
    consumer.close()
    assert total == expected, total


def main() -> None:
    args = parse_args(__doc__, 2_000_000)
    from spark_kwire.protocol.records import warm_up

    warm_up()
    with broker(args) as bootstrap:
        topic = f"bench-consume-{args.records}"
        produce(bootstrap, topic, args)
        consume_kwire(bootstrap, topic, args.records)  # warm-up
        seconds = {"confluent-kafka": [], "kwire": []}
        for _ in range(args.runs):
            seconds["confluent-kafka"].append(timed(lambda: consume_librdkafka(bootstrap, topic, args.records, args.partitions)))
            seconds["kwire"].append(timed(lambda: consume_kwire(bootstrap, topic, args.records)))
        report(f"Consume {args.records:,} records x {args.record_size} B, {args.partitions} partitions, "
               f"{args.compression}, one process", args.records, seconds, baseline="confluent-kafka")


if __name__ == "__main__":
    main()
