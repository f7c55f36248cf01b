"""`make demo` as a user runs it: its own local broker, a write, a batch read and a streaming read."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from harness import REPO_ROOT, die_with_parent


@pytest.mark.timeout(600)
def test_demo_starts_its_own_broker_and_gets_every_row_back(tmp_path):
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    # as `make demo` runs it: from the repository root, where the harness (not part of the wheel) lives
    done = subprocess.run([sys.executable, "-m", "harness.demo", "--rows", "5000"], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=540, preexec_fn=die_with_parent)
    out = done.stdout
    assert done.returncode == 0, f"exit {done.returncode}\n{out[-3000:]}\n{done.stderr[-3000:]}"
    assert "Started a local Apache Kafka broker" in out
    assert "written :     5,000 rows" in out and "read    :     5,000 rows" in out and "streamed:     5,000 rows" in out
    assert "every row came back" in out
    assert "rows/s" not in out  # no speed claim without a peer measured in the same run
