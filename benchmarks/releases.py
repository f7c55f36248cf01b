"""The read and write benchmarks on several PySpark releases, one virtualenv each, and their ratios per release.

    python benchmarks/releases.py --venv .venv-spark-4.0 --venv .venv [--records 1000000] [--runs 3]

Each virtualenv runs benchmarks/read_throughput.py and write_throughput.py with its own Python (kwire as that
virtualenv installed it: the wheel in make's per-release virtualenvs) against one shared broker. The peer is
Spark's built-in connector 4.0.0 on every release (the only one Maven resolves here; its batch source and
sink work on 4.3 too). Prints each script's output, then one line per release and ratio.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--venv", action="append", required=True, help="a virtualenv folder (repeat)")
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from harness import KafkaCluster

    harness_path = REPO / ".kwire" / "harness-path"
    harness_path.mkdir(parents=True, exist_ok=True)
    if not (harness_path / "harness").exists():
        (harness_path / "harness").symlink_to(REPO / "harness")
    summary = []
    with KafkaCluster(1) as cluster:
        for venv in args.venv:
            python = Path(venv).resolve() / "bin" / "python"
            version = subprocess.run([str(python), "-c", "import pyspark; print(pyspark.__version__)"],
                                     capture_output=True, text=True, check=True).stdout.strip()
            env = {**os.environ, "PYTHONPATH": str(harness_path), "PYSPARK_PYTHON": str(python)}
            for script in ("read_throughput.py", "write_throughput.py"):
                done = subprocess.run([str(python), str(HERE / script), "--records", str(args.records),
                                       "--runs", str(args.runs), "--bootstrap", cluster.bootstrap_servers],
                                      env=env, cwd=HERE, capture_output=True, text=True)
                print(f"=== PySpark {version}: {script}\n{done.stdout}", flush=True)
                if done.returncode != 0:
                    print(done.stderr[-3000:], file=sys.stderr)
                    raise SystemExit(f"{script} failed on PySpark {version}")
                for line in done.stdout.splitlines():
                    found = re.search(r"ratio (.+): ([\d.]+)x", line)
                    if found:
                        summary.append((version, script, found.group(1), found.group(2)))
    print("\nPySpark  benchmark             ratio")
    for version, script, what, ratio in summary:
        print(f"{version:<8} {script:<20} {what}: {ratio}x")


if __name__ == "__main__":
    main()
