"""Micro-benchmark of the record-batch layer (no broker involved): the numba kernels beside the pure-Python
fallback on the same data, results asserted equal, and what compiling the numba kernels costs a new process.

    .venv/bin/python benchmarks/decode_micro.py [--records N] [--value-bytes B] [--kernels numba,python]
                                                [--no-cold]

Measures, after warm-up, with each implementation (``kernels.using``):
* decode_record_set over N records of B-byte values in ~16 KB batches (librdkafka's typical batch size),
  uncompressed and lz4, as one buffer and as 1 MiB fetch responses, with headers; and over N/5
  single-record batches (the small-batch case);
* partition_for_keys (murmur2) over N keys;
* encode_record_batch over N rows (one batch) and encode_record_batches into 16 KB batches (none, lz4).
Then, unless --no-cold, CPU seconds a fresh process with an empty numba cache spends compiling the kernels
of a first read, a first write and of everything (warm_up), how long its first small read takes while a
helper process compiles them (and when they are loaded here), and what loading them from a written cache costs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, REPO)

from spark_kwire.protocol.records import (  # noqa: E402
    HEADERS_TYPE,
    decode_record_set,
    encode_record_batch,
    encode_record_batches,
    kernels,
    partition_for_keys,
    warm_up,
)

BATCH_BYTES = 16 * 1024
REPEATS = {"numba": 3, "python": 1}  # runs after a warming one; the Python path is slow and steady


def make_columns(n: int, value_bytes: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    # JSON-ish values: a fixed skeleton with random digits (compressible like real events)
    skeleton = np.frombuffer((b'{"user":"u0000000","event":"click","ts":0000000000,"v":"' +
                              b"x" * value_bytes)[:value_bytes], dtype=np.uint8)
    data = np.tile(skeleton, n).reshape(n, value_bytes)
    digits = rng.integers(48, 58, size=(n, min(20, value_bytes)), dtype=np.uint8)
    data[:, 10:10 + digits.shape[1] - 10] = digits[:, : max(digits.shape[1] - 10, 0)]
    values = pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(np.arange(n + 1, dtype=np.int32) * value_bytes),
                                                    pa.py_buffer(data.reshape(-1))])
    kb = np.char.encode(np.char.mod("key-%08d", rng.integers(0, 10**8, size=n)), "ascii")
    keys = pa.array(kb.tolist(), type=pa.binary())
    ts = 1_700_000_000_000 + np.arange(n, dtype=np.int64)
    return values, keys, ts


def fetch_buffer(batches: list[bytes]) -> bytes:
    """Concatenate produce batches as a broker would return them (offsets assigned)."""
    out = []
    base = 0
    for b in batches:
        out.append(struct.pack(">q", base) + b[8:])
        base += struct.unpack_from(">i", b, 23)[0] + 1
    return b"".join(out)


def fetch_responses(batches: list[bytes], limit: int = 1 << 20) -> list[bytes]:
    """The batches as a consumer sees them: fetch responses of at most ``limit`` bytes (offsets assigned)."""
    groups, cur, size = [], [], 0
    for b in batches:
        if size + len(b) > limit and cur:
            groups.append(cur)
            cur, size = [], 0
        cur.append(b)
        size += len(b)
    groups.append(cur)
    out, base = [], 0
    for group in groups:
        parts = []
        for b in group:
            parts.append(struct.pack(">q", base) + b[8:])
            base += struct.unpack_from(">i", b, 23)[0] + 1
        out.append(b"".join(parts))
    return out


def best_of(fn, repeat):
    """(best wall time, CPU time of that run, result) of ``repeat`` runs. On a busy machine CPU time is the
    better estimate of the single-threaded cost."""
    best = None
    for _ in range(repeat):
        c = time.process_time()
        t = time.perf_counter()
        r = fn()
        wall = time.perf_counter() - t
        cpu = time.process_time() - c
        if best is None or wall < best[0]:
            best = (wall, cpu, r)
    return best


def canonical(result):
    """Something comparable with == whatever a case returns."""
    if hasattr(result, "record_count"):
        heads = None if result.headers is None else result.headers.to_pylist()
        return (result.offset.tolist(), result.timestamp.tolist(), result.key.to_pylist(), result.value.to_pylist(),
                heads, result.next_offset)
    if isinstance(result, np.ndarray):
        return result.tolist()
    return result


def run_case(name, n, fn, implementations, nbytes=None):
    results = {}
    rates = {}
    for impl in implementations:
        with kernels.using(impl):
            fn()  # warm: first-call costs (numba's cache load, imports) are not the steady state
            wall, cpu, result = best_of(fn, REPEATS[impl])
        results[impl] = canonical(result)
        rates[impl] = n / cpu
        extra = f" {nbytes / wall / 1e6:6.0f} MB/s" if nbytes else " " * 12
        print(f"  {name:<46} {impl:<6} {wall * 1e3:8.1f} ms {n / wall / 1e6:6.2f} M rec/s{extra} | cpu "
              f"{cpu * 1e3:8.1f} ms {n / max(cpu, 1e-9) / 1e6:6.2f} M rec/s")
    first = implementations[0]
    for impl in implementations[1:]:
        assert results[impl] == results[first], f"{name}: {impl} and {first} differ"
    if len(implementations) > 1:
        ratio = rates[implementations[0]] / rates[implementations[1]]
        print(f"  {'':<46} {implementations[0]} / {implementations[1]} (CPU): {ratio:.1f}x, results equal")


COLD = r'''
import json, sys, time
what = sys.argv[1]
t0 = time.process_time()
import numpy as np, pyarrow as pa
from spark_kwire.protocol.records import (decode_record_set, encode_record_batches, kernels, partition_for_keys,
                                          warm_up)
from spark_kwire.protocol.records.compilation import warming
sample = open(sys.argv[2], "rb").read()
values = pa.array([b"v" * 100] * 5000)
keys = pa.array([b"key-%d" % i for i in range(5000)])
t1, w1 = time.process_time(), time.perf_counter()
if what == "first read, helper process":
    decode_record_set(sample, start_offset=0)
    first_call = time.perf_counter() - w1
    warming.wait(timeout=900)  # the helper's compile, then this process loads what it cached
    print(json.dumps({"import_cpu": t1 - t0, "cpu": time.process_time() - t1, "first_call": first_call,
                      "ready_after": time.perf_counter() - w1}))
    sys.exit(0)
else:
    with kernels.using("numba"):  # compile in this thread, as before background compiling existed
        if what == "read":
            decode_record_set(sample, start_offset=0)
        elif what == "read with headers":
            decode_record_set(sample, start_offset=0, include_headers=True)
        elif what == "write":
            partition_for_keys(keys, 8)
            encode_record_batches(values, keys, timestamps_ms=1, compression="lz4", max_batch_bytes=16384)
        else:
            warm_up()
    first_call = time.perf_counter() - w1
print(json.dumps({"import_cpu": t1 - t0, "cpu": time.process_time() - t1, "first_call": first_call}))
'''


def cold_costs(runs: int) -> None:
    """CPU seconds a fresh process with an empty numba cache spends on a path's kernels (medians)."""
    values = pa.array([b"v" * 100] * 5000)
    keys = pa.array([b"key-%d" % i for i in range(5000)])
    with kernels.using("python"):
        sample = fetch_buffer(encode_record_batches(values, keys, timestamps_ms=1, compression="lz4",
                                                    max_batch_bytes=BATCH_BYTES))
    with tempfile.TemporaryDirectory() as tmp:
        sample_path = os.path.join(tmp, "fetch.bin")
        with open(sample_path, "wb") as f:
            f.write(sample)
        print(f"\nnumba compile in a fresh process, empty cache (CPU seconds, median of {runs}; the warm path above "
              f"does not include it)")
        for what in ("read", "read with headers", "write", "everything (warm_up)", "first read, helper process"):
            rows = []
            for _ in range(runs):
                with tempfile.TemporaryDirectory() as cache:
                    out = subprocess.run([sys.executable, "-c", COLD, what, sample_path], cwd=REPO, text=True,
                                         capture_output=True, env=dict(os.environ, NUMBA_CACHE_DIR=cache), check=True)
                    rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            cpu = statistics.median(r["cpu"] for r in rows)
            first = statistics.median(r["first_call"] for r in rows)
            if what == "first read, helper process":
                ready = statistics.median(r["ready_after"] for r in rows)
                print(f"  {what:<28} first decode returned after {first * 1e3:6.1f} ms (pure Python); a helper "
                      f"process compiled meanwhile, and after {ready:5.2f} s this process had loaded what it cached "
                      f"({cpu:5.2f} CPU s of this process)")
            else:
                print(f"  {what:<28} {cpu:5.2f} CPU s   (first call returned after {first:5.2f} s)")
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache)
            subprocess.run([sys.executable, "-c", COLD, "everything", sample_path], cwd=REPO, env=env, check=True,
                           capture_output=True)
            loads = []
            for _ in range(runs):
                out = subprocess.run([sys.executable, "-c", COLD, "everything", sample_path], cwd=REPO, text=True,
                                     env=env, capture_output=True, check=True)
                loads.append(json.loads(out.stdout.strip().splitlines()[-1])["cpu"])
            print(f"  {'load every kernel from the written cache':<28} {statistics.median(loads):5.2f} CPU s")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--value-bytes", type=int, default=100)
    ap.add_argument("--kernels", default="numba,python", help="implementations to run, the first is the reference")
    ap.add_argument("--no-cold", action="store_true", help="skip the fresh-process compile measurements")
    ap.add_argument("--cold-runs", type=int, default=3)
    args = ap.parse_args()
    n, vb = args.records, args.value_bytes
    impls = args.kernels.split(",")

    print(f"warm_up() in this process (cache load if cached): {warm_up():.2f} s")
    values, keys, ts = make_columns(n, vb)
    hdrs = pa.ListArray.from_arrays(
        np.arange(n + 1, dtype=np.int32) * 2,
        pa.array([{"key": "trace-id", "value": b"0123456789abcdef"}, {"key": "src", "value": b"bench"}],
                 type=HEADERS_TYPE.value_type).take(np.tile([0, 1], n)))
    with kernels.using("numba" if "numba" in impls else "python"):  # the inputs, made once
        batches = {c: encode_record_batches(values, keys, timestamps_ms=ts, compression=c, max_batch_bytes=BATCH_BYTES)
                   for c in ("none", "lz4")}
        with_headers = fetch_buffer(encode_record_batches(values, keys, timestamps_ms=ts, headers=hdrs,
                                                          max_batch_bytes=BATCH_BYTES))
        m = max(n // 5, 1)
        single = fetch_buffer(encode_record_batches(values.slice(0, m), keys.slice(0, m), timestamps_ms=ts[:m],
                                                    max_batch_bytes=62))  # one record per batch

    print(f"\n{n:,} records, {vb}-byte values, ~10-byte keys; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores; best wall time of {REPEATS['numba']} runs (numba) or {REPEATS['python']} (python) "
          f"after a warming one | CPU time of that run")
    print("\ndecode_record_set")
    for codec, bs in batches.items():
        buf = fetch_buffer(bs)
        run_case(f"{codec:>4}, one buffer: {len(bs)} batches", n, lambda: decode_record_set(buf, start_offset=0),
                 impls, len(buf))
        bufs = fetch_responses(bs)

        def decode_all():
            parts = [decode_record_set(fb, start_offset=0) for fb in bufs]
            return [p.offset.tolist() + p.value.to_pylist() for p in parts]

        run_case(f"{codec:>4}, {len(bufs)} fetch responses of <= 1 MiB", n, decode_all, impls, sum(map(len, bufs)))
    run_case("none + 2 headers/record, include_headers=True", n,
             lambda: decode_record_set(with_headers, start_offset=0, include_headers=True), impls, len(with_headers))
    run_case(f"none, {m:,} single-record batches", m, lambda: decode_record_set(single, start_offset=0), impls,
             len(single))

    print("\nmurmur2 partitioner")
    run_case(f"partition_for_keys over {n:,} keys", n, lambda: partition_for_keys(keys, 12), impls)

    print("\nencode")
    run_case(f"encode_record_batch, one batch of {n:,} rows", n,
             lambda: encode_record_batch(values, keys, timestamps_ms=ts), impls)
    for codec in ("none", "lz4"):
        run_case(f"encode_record_batches {codec:>4} into 16 KB batches", n,
                 lambda: encode_record_batches(values, keys, timestamps_ms=ts, compression=codec,
                                               max_batch_bytes=BATCH_BYTES), impls)

    if not args.no_cold:
        cold_costs(args.cold_runs)


if __name__ == "__main__":
    main()
