"""How one Spark task's write leaves the producer, no Spark: Produce requests per write, their size, how long
after the flush began the first one left, retries, the sender's passes over the ready partitions (woken or
after an answer) and their time (``KWIRE_PROFILE``), and the write's time, for the ways ``close_open`` can show
the batches it encodes to the sender. The causes of a slower or faster write are counted here; the speed a
user sees is for ``versions_side_by_side.py``.

One process, one local broker. Each run appends N keyed rows of 100 B (Arrow arrays of 10,000 rows, as a
Spark task gets them; partitioned by murmur2 of the key) to a topic of P partitions and flushes. The policies
alternate, each with a fresh producer (and a new topic per run with ``--fresh-topic``, written once every
partition answers ListOffsets, as in ``versions_side_by_side.py``; otherwise the topic is created and every
partition written once before the timed runs):

* ``each partition``: the sender sees and is woken by every partition as soon as it is encoded (kwire before
  102692a: ``wake_bytes`` 1);
* ``all at once``: it sees them all when the last is encoded (102692a);
* ``batch.size groups``: it sees them in groups of batch.size bytes (the default since).

    python benchmarks/flush_requests.py [--records 200000] [--partitions 1,64,512] [--runs 5] [--kafka-defaults]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import uuid
from collections import Counter

from _common import broker_workdir, print_machine

os.environ["KWIRE_PROFILE"] = "1"  # the producer's phase times: encoding, and the sender's passes and waits

POLICIES = {"each partition": lambda producer: 1, "all at once": lambda producer: 1 << 62,
            "batch.size groups": lambda producer: producer.batch_size}


class Trace:
    """Produce requests and retriable failures of the sender, recorded by wrapping two of its methods."""

    def __init__(self) -> None:
        from spark_kwire.client.producer.sender import Sender

        self.requests: list[tuple[float, int, int]] = []  # (perf_counter, partitions, bytes)
        self.failures: Counter = Counter()
        send_request, retriable_failure = Sender._send_request, Sender._retriable_failure
        trace = self

        def traced_send(sender, leader, batches, now):
            trace.requests.append((time.perf_counter(), len(batches), sum(len(b.payload) for b in batches)))
            return send_request(sender, leader, batches, now)

        def traced_failure(sender, batch, error, leader, now, answered=False):
            trace.failures[getattr(error, "name", None) or type(error).__name__] += 1
            return retriable_failure(sender, batch, error, leader, now, answered)

        Sender._send_request, Sender._retriable_failure = traced_send, traced_failure

    def clear(self) -> None:
        self.requests.clear()
        self.failures.clear()


def task_rows(records: int):
    import pyarrow as pa

    pad = b"x" * 88
    return [(pa.array([b"%012d" % i + pad for i in range(s, min(s + 10_000, records))], pa.binary()),
             pa.array([str(i).encode() for i in range(s, min(s + 10_000, records))], pa.binary()))
            for s in range(0, records, 10_000)]


def write(client, topic: str, rows, policy: str, trace: Trace) -> dict:
    from spark_kwire.client import Producer

    trace.clear()
    started = time.perf_counter()
    producer = Producer(client)
    producer._accumulator.wake_bytes = POLICIES[policy](producer)
    for values, keys in rows:
        producer.send_batch(topic, None, values, keys)
    flushing = time.perf_counter()
    acknowledged = sum(ack.records for ack in producer.flush().values())
    done = time.perf_counter()
    phases = producer.phase_times()
    producer.close()
    assert acknowledged == sum(len(values) for values, _ in rows), acknowledged
    after = [at for at, _, _ in trace.requests if at >= flushing]
    return {"seconds": done - started, "flush": done - flushing, "requests": len(trace.requests),
            "partitions": statistics.mean(n for _, n, _ in trace.requests),
            "kib": statistics.mean(size for _, _, size in trace.requests) / 1024,
            "first_ms": (after[0] - flushing) * 1000 if after else float("nan"),
            "retries": sum(trace.failures.values()), "errors": dict(trace.failures),
            "encode_s": phases.get("encode", {}).get("seconds", 0.0),
            "passes": phases.get("send", {}).get("calls", 0), "send_s": phases.get("send", {}).get("seconds", 0.0)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=200_000, help="rows of one write (one Spark task's share)")
    parser.add_argument("--partitions", default="1,64,512")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--fresh-topic", action="store_true", help="a new topic for every run")
    parser.add_argument("--kafka-defaults", action="store_true",
                        help="no producer setting (else lz4, linger.ms 20, batch.size 1 MB as versions_side_by_side)")
    parser.add_argument("--bootstrap")
    args = parser.parse_args()
    print_machine()
    from harness import KafkaCluster
    from spark_kwire import admin
    from spark_kwire.client import KafkaClient
    from spark_kwire.protocol.records import warm_up

    warm_up()
    trace = Trace()
    rows = task_rows(args.records)
    settings = {} if args.kafka_defaults else {"compression.type": "lz4", "linger.ms": "20", "batch.size": "1048576"}
    with KafkaCluster(1, heap="2g", workdir=broker_workdir()) as kafka:
        bootstrap = kafka.bootstrap_servers
        with KafkaClient({"bootstrap.servers": bootstrap, **settings}) as client:
            for partitions in [int(count) for count in args.partitions.split(",")]:
                shared = f"flush-requests-{partitions}-{uuid.uuid4().hex[:6]}"
                admin.create_topic(bootstrap, shared, partitions=partitions)
                write(client, shared, task_rows(partitions * 20), "batch.size groups", trace)  # leaders ready
                names = list(POLICIES)
                results: dict[str, list[dict]] = {name: [] for name in names}
                for run in range(args.runs + 1):
                    for name in names[run % len(names):] + names[:run % len(names)]:
                        topic = shared
                        if args.fresh_topic:
                            topic = f"flush-requests-{partitions}-{uuid.uuid4().hex[:6]}"
                            admin.create_topic(bootstrap, topic, partitions=partitions)
                            admin.latest_offsets(bootstrap, topic)  # waits until every leader serves it
                        client.partitions_for(topic)
                        result = write(client, topic, rows, name, trace)
                        if run:  # the first round warms up
                            results[name].append(result)
                        if args.fresh_topic:
                            admin.delete_topic(bootstrap, topic)
                report(args, partitions, settings, results)


def report(args, partitions: int, settings: dict, results: dict[str, list[dict]]) -> None:
    how = "no producer settings" if not settings else "lz4, linger.ms 20, batch.size 1 MB"
    topic = "a fresh topic per run" if args.fresh_topic else "one topic, leaders ready"
    print(f"\n{args.records:,} keyed rows x 100 B into {partitions} partitions ({topic}), {how}, {args.runs} runs "
          f"(medians)")
    for name, runs in results.items():
        def median(key: str) -> float:
            return statistics.median(run[key] for run in runs)
        errors = Counter()
        for run in runs:
            errors.update(run["errors"])
        print(f"  {name:<18} write {median('seconds'):.3f} s (flush {median('flush'):.3f} s), "
              f"{median('requests'):.0f} requests of {median('partitions'):.1f} partitions / "
              f"{median('kib'):,.0f} KiB, first request {median('first_ms'):.0f} ms after the flush began, "
              f"retries {median('retries'):.0f} {dict(errors) or ''}; encoding {median('encode_s'):.3f} s; "
              f"{median('passes'):.0f} sending passes of the sender taking {median('send_s'):.3f} s; runs: "
              f"{', '.join(format(run['seconds'], '.3f') for run in runs)}", flush=True)


if __name__ == "__main__":
    main()
