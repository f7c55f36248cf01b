"""Producing to a topic: kwire's Producer vs confluent-kafka (librdkafka), like with like, idempotent, acks=all.

Sends N keyed records of 100 B (lz4, 8 partitions, keys partitioned by murmur2 in both) into fresh topics,
alternating, each sender warmed by one untimed run first, and prints records/s and the ratios. Each sender
waits until everything is acknowledged, and every run must leave the same number of records in each
partition of its topic (asserted). Two comparisons, each starting from the same input on both sides:

* "from Arrow columns": the records arrive as Arrow arrays of 10,000 rows (keys, values), as a Spark
  task receives them. kwire's Producer takes the arrays; confluent-kafka gets each record's key and value
  as Python bytes (to_pylist) and produce() per record.
* "from Python bytes": the records arrive as Python lists of bytes. confluent-kafka takes them as they are;
  kwire builds Arrow arrays of 10,000 rows from them (pa.array) before send_batch.

kwire sends what it has encoded in the background while it encodes more; the variant "kwire, flush
in line" (from Arrow columns) hands each full buffer over synchronously instead, to show what the
overlap is worth. ``--delay-ms D`` puts a loopback proxy in front of the broker that holds every response
for up to D ms, as a broker across a network would.

    python benchmarks/produce_throughput.py [--records 2000000] [--runs 3] [--delay-ms 0]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time

from _common import broker_workdir, print_machine, report

CHUNK = 10_000  # rows per Arrow batch handed to kwire, as a Spark task receives them


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--record-size", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--compression", default="lz4")
    parser.add_argument("--delay-ms", type=float, default=0.0, help="hold each broker response up to this long")
    return parser.parse_args()


@contextlib.contextmanager
def cluster(args):
    """(bootstrap for set-up, bootstrap the senders use)."""
    from harness import KafkaCluster, proxied_kafka_cluster

    if not args.delay_ms:
        with KafkaCluster(1, heap="2g", workdir=broker_workdir()) as kafka:
            yield kafka.bootstrap_servers, kafka.bootstrap_servers
        return
    kafka, proxy = proxied_kafka_cluster(heap="2g")  # the proxy is running already
    try:
        with kafka:
            proxy.configure(delay_probability=1.0, max_delay_s=args.delay_ms / 1000.0)
            yield kafka.bootstrap_servers, kafka.bootstrap("PROXIED")
    finally:
        proxy.stop()


def data(args):
    """The same records as Python lists of bytes and as Arrow chunks."""
    import pyarrow as pa

    pad = b"x" * max(0, args.record_size - 12)
    keys = [str(i).encode() for i in range(args.records)]
    values = [b"%012d" % i + pad for i in range(args.records)]
    chunks = [(pa.array(values[s:s + CHUNK], pa.binary()), pa.array(keys[s:s + CHUNK], pa.binary()))
              for s in range(0, args.records, CHUNK)]
    return keys, values, chunks


def python_lists_to_chunks(keys, values):
    """kwire's input built from Python lists, inside the timing of "from Python bytes"."""
    import pyarrow as pa

    for s in range(0, len(values), CHUNK):
        yield pa.array(values[s:s + CHUNK], pa.binary()), pa.array(keys[s:s + CHUNK], pa.binary())


def chunks_to_python(chunks):
    """confluent-kafka's input taken from Arrow chunks, inside the timing of "from Arrow columns"."""
    for values, keys in chunks:
        yield from zip(keys.to_pylist(), values.to_pylist())


def produce_kwire(bootstrap, topic, chunks, args, *, in_line: bool) -> int:
    from spark_kwire.client import KafkaClient, Producer

    class InLineFlush(Producer):
        """The producer before the background flush: a full buffer is delivered before send_batch returns."""

        def _hand_off(self):
            self._sender.deliver(self._accumulator.drain())

    options = {"bootstrap.servers": bootstrap, "compression.type": args.compression, "batch.size": "1048576"}
    with KafkaClient(options) as client:
        producer = (InLineFlush if in_line else Producer)(client)
        for values, keys in chunks:
            producer.send_batch(topic, None, values, keys)
        acks = producer.flush()
    return sum(a.records for a in acks.values())


def produce_librdkafka(bootstrap, topic, records, args) -> int:
    """``records``: an iterable of (key, value) bytes."""
    from confluent_kafka import Producer

    delivered = [0]

    def on_delivery(err, _msg):
        if err is None:
            delivered[0] += 1

    producer = Producer({"bootstrap.servers": bootstrap, "compression.type": args.compression, "acks": "all",
                         "enable.idempotence": True, "linger.ms": 20, "batch.size": 1_000_000,
                         "queue.buffering.max.messages": 1_000_000, "partitioner": "murmur2_random"})
    produce = producer.produce
    for key, value in records:
        while True:
            try:
                produce(topic, value=value, key=key, on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(300) == 0
    return delivered[0]


def main() -> None:
    args = parse_args()
    print_machine()
    from spark_kwire import admin
    from spark_kwire.protocol.records import warm_up

    warm_up()
    keys, values, chunks = data(args)
    counter = iter(range(10_000))
    layouts: dict = {}  # records per partition of each sender's topics: the same for all
    with cluster(args) as (setup, bootstrap):
        def run(name, send):
            topic = f"bench-produce-{next(counter)}"
            admin.create_topic(setup, topic, partitions=args.partitions)
            started = time.perf_counter()
            acknowledged = send(bootstrap, topic)
            seconds = time.perf_counter() - started
            assert acknowledged == args.records, (name, acknowledged)
            per_partition = admin.latest_offsets(setup, topic)
            assert sum(per_partition.values()) == args.records, name
            layouts.setdefault(name, per_partition)
            assert per_partition == layouts[name], (name, per_partition, layouts[name])
            return seconds

        comparisons = {
            "from Arrow columns": {
                "confluent-kafka": lambda b, t: produce_librdkafka(b, t, chunks_to_python(chunks), args),
                "kwire, flush in line": lambda b, t: produce_kwire(b, t, chunks, args, in_line=True),
                "kwire": lambda b, t: produce_kwire(b, t, chunks, args, in_line=False),
            },
            "from Python bytes": {
                "confluent-kafka": lambda b, t: produce_librdkafka(b, t, zip(keys, values), args),
                "kwire": lambda b, t: produce_kwire(b, t, python_lists_to_chunks(keys, values), args, in_line=False),
            },
        }
        results = {}
        for what, senders in comparisons.items():
            for name, send in senders.items():
                run(name, send)  # warm-up, untimed
            # Keyed records land in the same partitions whoever sends them.
            assert len({tuple(sorted(layout.items())) for layout in layouts.values()}) == 1, layouts
            seconds = {name: [] for name in senders}
            for _ in range(args.runs):
                for name, send in senders.items():
                    seconds[name].append(run(name, send))
            results[what] = seconds
    where = f"through a proxy holding each response up to {args.delay_ms:g} ms" if args.delay_ms else "direct"
    for what, seconds in results.items():
        report(f"Produce {args.records:,} keyed records x {args.record_size} B, {args.partitions} partitions, "
               f"{args.compression}, acks=all, idempotent, one local broker, {where}, {what}", args.records,
               seconds, "confluent-kafka")
        if "kwire, flush in line" in seconds:
            overlap = statistics.median(seconds["kwire, flush in line"]) / statistics.median(seconds["kwire"])
            print(f"  ratio kwire / kwire, flush in line: {overlap:.2f}x")


if __name__ == "__main__":
    sys.exit(main())
