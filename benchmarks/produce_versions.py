"""kwire's producer at two versions of the code, side by side: before and after a change to the client.

Exports the baseline revision (``git archive``) into a temporary folder, starts one local broker, then
alternates fresh processes of the baseline and of this checkout, each producing the same N keyed records of
100 B (lz4, 8 partitions, acks=all, idempotent) into its own fresh topic, and prints records/s of each and
the median of the per-pair ratios. Pairs run back to back, so a busy machine slows both sides of a pair
alike; a confluent-kafka (librdkafka) run per pair anchors the figures to a peer.

    python benchmarks/produce_versions.py --baseline-rev <commit> [--records 2000000] [--pairs 6]
                                          [--linger-ms MS]  # kafka.linger.ms for both kwire versions

Both sides warm their numba kernels before timing and are checked to have delivered every record.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

# Runs in a fresh process with the code under test first on sys.path; prints {"seconds", "records"}.
CHILD = r"""
import json, sys, time
import pyarrow as pa
from spark_kwire.client import KafkaClient, Producer
from spark_kwire.protocol.records import warm_up

bootstrap, topic, records, linger = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
warm_up()
pad = b"x" * 88
chunks = [(pa.array([b"%012d" % i + pad for i in range(s, min(s + 10_000, records))], pa.binary()),
           pa.array([str(i).encode() for i in range(s, min(s + 10_000, records))], pa.binary()))
          for s in range(0, records, 10_000)]
options = {"bootstrap.servers": bootstrap, "compression.type": "lz4", "batch.size": "1048576"}
if linger != "-":
    options["linger.ms"] = linger
with KafkaClient(options) as client:
    client.partitions_for(topic)  # connected and metadata known before timing
    started = time.perf_counter()
    producer = Producer(client)
    for values, keys in chunks:
        producer.send_batch(topic, None, values, keys)
    acked = sum(a.records for a in producer.flush().values())
    seconds = time.perf_counter() - started
print(json.dumps({"seconds": seconds, "records": acked, "file": __import__("spark_kwire").__file__}))
"""


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline-rev", required=True, help="git revision of the code to compare with")
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--linger-ms", default="-", help="kafka.linger.ms for both kwire versions (default: unset)")
    return parser.parse_args()


def export(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "spark_kwire"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def run_kwire(source: Path, bootstrap: str, topic: str, args) -> float:
    env = dict(os.environ, PYTHONPATH=str(source))
    out = subprocess.run([sys.executable, "-c", CHILD, bootstrap, topic, str(args.records), str(args.linger_ms)],
                         env=env, cwd=str(source), capture_output=True, text=True, timeout=1800)
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["file"].startswith(str(source)), (result["file"], source)
    assert result["records"] == args.records, result
    return result["seconds"]


def run_librdkafka(bootstrap: str, topic: str, args) -> float:
    import time

    from confluent_kafka import Producer

    pad = b"x" * 88
    producer = Producer({"bootstrap.servers": bootstrap, "compression.type": "lz4", "acks": "all",
                         "enable.idempotence": True, "linger.ms": 20, "batch.size": 1_000_000,
                         "queue.buffering.max.messages": 1_000_000, "partitioner": "murmur2_random"})
    delivered = [0]

    def on_delivery(err, _msg):
        delivered[0] += err is None

    started = time.perf_counter()
    for i in range(args.records):
        while True:
            try:
                producer.produce(topic, value=b"%012d" % i + pad, key=str(i).encode(), on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(600) == 0 and delivered[0] == args.records
    return time.perf_counter() - started


def main() -> None:
    args = parse_args()
    from _common import broker_workdir
    from harness import KafkaCluster
    from spark_kwire import admin

    with (tempfile.TemporaryDirectory(prefix="kwire-baseline-") as tmp,
          KafkaCluster(1, heap="2g", workdir=broker_workdir()) as kafka):
        sides = {"baseline": export(args.baseline_rev, Path(tmp)), "this checkout": REPO}
        bootstrap = kafka.bootstrap_servers
        seconds: dict[str, list[float]] = {"baseline": [], "this checkout": [], "confluent-kafka": []}
        ratios = []
        for pair in range(args.pairs):
            order = list(sides) if pair % 2 == 0 else list(reversed(sides))  # neither side always goes first
            for name in order:
                topic = f"bench-versions-{pair}-{name.replace(' ', '-')}"
                admin.create_topic(bootstrap, topic, partitions=args.partitions)
                seconds[name].append(run_kwire(sides[name], bootstrap, topic, args))
                assert sum(admin.latest_offsets(bootstrap, topic).values()) == args.records
            topic = f"bench-versions-{pair}-librdkafka"
            admin.create_topic(bootstrap, topic, partitions=args.partitions)
            seconds["confluent-kafka"].append(run_librdkafka(bootstrap, topic, args))
            ratios.append(seconds["baseline"][-1] / seconds["this checkout"][-1])
            print(f"pair {pair}: baseline {args.records / seconds['baseline'][-1]:,.0f} rec/s, this checkout "
                  f"{args.records / seconds['this checkout'][-1]:,.0f} rec/s, confluent-kafka "
                  f"{args.records / seconds['confluent-kafka'][-1]:,.0f} rec/s", flush=True)
    linger = "unset" if args.linger_ms == "-" else f"{args.linger_ms} ms"
    print(f"\nProduce {args.records:,} keyed records x 100 B, {args.partitions} partitions, lz4, acks=all, idempotent, "
          f"linger.ms {linger}; baseline {args.baseline_rev}")
    for name, runs in seconds.items():
        print(f"  {name:<16} median {args.records / statistics.median(runs):>12,.0f} records/s")
    print(f"  median per-pair ratio this checkout / baseline: {statistics.median(ratios):.2f}x "
          f"(pairs: {', '.join(f'{r:.2f}' for r in ratios)})")


if __name__ == "__main__":
    main()
