"""Micro-benchmark of the record-batch layer (no broker involved).

    .venv/bin/python benchmarks/decode_micro.py [--records N] [--value-bytes B] [--no-cold]

Measures, after warm-up (numba compilation reported separately):
* decode_record_set over N records of B-byte values in ~16 KB batches
  (librdkafka's typical batch size), uncompressed and lz4, with and
  without headers; and over N/5 single-record batches (the small-batch case);
* partition_for_keys (murmur2) over N keys;
* encode_record_batch over N rows (one batch) and encode_record_batches
  into 16 KB batches (uncompressed, lz4).
"""

from __future__ import annotations

import argparse
import os
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from spark_kwire.protocol.records import (  # noqa: E402
    HEADERS_TYPE,
    decode_record_set,
    encode_record_batch,
    encode_record_batches,
    murmur2,
    partition_for_keys,
    warm_up,
)

BATCH_BYTES = 16 * 1024


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


_CPU = []  # CPU seconds of the best run, for report()


def best_of(fn, repeat=3):
    """Best wall time of ``repeat`` runs (and that run's CPU time: on a busy
    machine, CPU time is the better estimate of the single-threaded cost)."""
    best = None
    for _ in range(repeat):
        c = time.process_time()
        t = time.perf_counter()
        r = fn()
        wall = time.perf_counter() - t
        cpu = time.process_time() - c
        if best is None or wall < best[0]:
            best = (wall, cpu)
    _CPU[:] = [best[1]]
    return best[0], r


def report(name, n, secs, nbytes=None):
    cpu = _CPU[0] if _CPU else secs
    extra = f" {nbytes / secs / 1e6:6.0f} MB/s" if nbytes else " " * 12
    print(f"  {name:<50} {secs * 1e3:8.1f} ms {n / secs / 1e6:6.2f} M rec/s{extra} | cpu {cpu * 1e3:8.1f} ms "
          f"{n / max(cpu, 1e-9) / 1e6:6.2f} M rec/s")


def cold_compile_seconds() -> float:
    """warm_up() in a fresh process with an empty numba cache (real compile time)."""
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, NUMBA_CACHE_DIR=d)
        code = "from spark_kwire.protocol.records import warm_up; print(warm_up())"
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
        out = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, capture_output=True, text=True,
                             check=True)
        return float(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--value-bytes", type=int, default=100)
    ap.add_argument("--no-cold", action="store_true", help="skip the cold-compile measurement")
    args = ap.parse_args()
    n, vb = args.records, args.value_bytes

    print("numba compile / cache load")
    print(f"  first warm_up() in this process (cache load if cached): {warm_up():.2f} s")
    if not args.no_cold:
        print(f"  cold compile of every kernel (empty cache, subprocess): {cold_compile_seconds():.2f} s")

    values, keys, ts = make_columns(n, vb)
    print(f"\n{n:,} records, {vb}-byte values, ~10-byte keys")

    hdrs = pa.array([[{"key": "trace-id", "value": b"0123456789abcdef"}, {"key": "src", "value": b"bench"}]] * 1,
                    type=HEADERS_TYPE)
    hdrs = pa.ListArray.from_arrays(np.arange(n + 1, dtype=np.int32) * 2,
                                    pa.concat_arrays([hdrs.values] * 1).take(np.tile([0, 1], n)))

    print(f"\nload average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; wall time | CPU time of the same run")
    print("\ndecode_record_set (best of 3)")
    for codec in ("none", "lz4"):
        batches = encode_record_batches(values, keys, timestamps_ms=ts, compression=codec,
                                        max_batch_bytes=BATCH_BYTES)
        buf = fetch_buffer(batches)
        nb = struct.unpack_from(">i", buf, 8)[0]
        secs, res = best_of(lambda: decode_record_set(buf, start_offset=0, end_offset=None, read_committed=False,
                                                       aborted_transactions=None, include_headers=False))
        assert res.record_count == n
        report(f"{codec:>4}, one buffer: {res.batch_count} batches of ~{nb + 12} B", n, secs, len(buf))
        # as a consumer sees them: 1 MiB fetch responses (max.partition.fetch.bytes)
        fetches = []
        cur, size = [], 0
        for b in batches:
            if size + len(b) > (1 << 20) and cur:
                fetches.append(cur)
                cur, size = [], 0
            cur.append(b)
            size += len(b)
        fetches.append(cur)
        bufs = []
        base = 0
        for f in fetches:
            fb = []
            for b in f:
                fb.append(struct.pack(">q", base) + b[8:])
                base += struct.unpack_from(">i", b, 23)[0] + 1
            bufs.append(b"".join(fb))

        def decode_all():
            total = 0
            for fb in bufs:
                total += decode_record_set(fb, start_offset=0, end_offset=None, read_committed=False,
                                           aborted_transactions=None, include_headers=False).record_count
            return total

        secs, total = best_of(decode_all)
        assert total == n
        report(f"{codec:>4}, {len(bufs)} fetch buffers of <= 1 MiB", n, secs, sum(map(len, bufs)))
    buf = fetch_buffer(encode_record_batches(values, keys, timestamps_ms=ts, headers=hdrs, compression="none",
                                             max_batch_bytes=BATCH_BYTES))
    secs, res = best_of(lambda: decode_record_set(buf, start_offset=0, end_offset=None, read_committed=False,
                                                   aborted_transactions=None, include_headers=True))
    assert res.record_count == n and len(res.headers) == n
    report(f"none + 2 headers/record, include_headers=True", n, secs, len(buf))

    m = max(n // 5, 1)
    buf = fetch_buffer(encode_record_batches(values.slice(0, m), keys.slice(0, m), timestamps_ms=ts[:m],
                                             max_batch_bytes=62))  # one record per batch
    secs, res = best_of(lambda: decode_record_set(buf, start_offset=0, end_offset=None, read_committed=False,
                                                   aborted_transactions=None, include_headers=False))
    assert res.record_count == m and res.batch_count == m
    report(f"none, {m:,} single-record batches", m, secs, len(buf))

    print("\nmurmur2 partitioner")
    secs, parts = best_of(lambda: partition_for_keys(keys, 12))
    report(f"partition_for_keys over {n:,} keys (numba)", n, secs)
    k = min(n, 20_000)
    pyk = keys.slice(0, k).to_pylist()
    secs, _ = best_of(lambda: [murmur2(x) for x in pyk], repeat=1)
    report(f"murmur2() plain Python reference, {k:,} keys", k, secs)

    print("\nencode")
    secs, data = best_of(lambda: encode_record_batch(values, keys, timestamps_ms=ts))
    report(f"encode_record_batch, one batch of {n:,} rows", n, secs, len(data))
    for codec in ("none", "lz4"):
        secs, bs = best_of(lambda: encode_record_batches(values, keys, timestamps_ms=ts, compression=codec,
                                                         max_batch_bytes=BATCH_BYTES))
        report(f"encode_record_batches {codec:>4} into 16 KB batches ({len(bs)})", n, secs)


if __name__ == "__main__":
    main()
