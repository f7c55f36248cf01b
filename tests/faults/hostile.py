"""Hostile bytes: a seeded mutator over real broker responses and a harness that runs decoders on its output.
(The fake broker that serves hostile frames is `harness.fake_broker`.)

Used by ``test_hostile_bytes.py`` and ``benchmarks/faults_report.py``.
"""

from __future__ import annotations

import os
import random
import socket
import struct
import threading
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field

import crc32c

from spark_kwire.protocol import messages as m
from spark_kwire.protocol.errors import KwireError
from spark_kwire.protocol.records import decode_record_set

_INTERESTING32 = (0, 1, -1, 2, 0x7FFFFFFF, -0x80000000, 0x7FFFFFFE, 0x10000, 255, 256, 65535, 1 << 24)


# -- seeds: real Fetch responses --------------------------------------------------------------------------

def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    return bytes(buf)


def capture_fetch_responses(host: str, port: int, topic: str, topic_id, partitions: int,
                            versions=(4, 7, 11, 12, 13, 16, 18), max_bytes: int = 64 * 1024) -> list[tuple[int, bytes]]:
    """Raw Fetch response frames (without the size prefix) from a real broker: ``[(version, frame)]``."""
    frames = []
    with socket.create_connection((host, port), timeout=10) as sock:
        for cid, version in enumerate(versions, start=1):
            topic_entry = {"topic": topic, "topic_id": topic_id, "partitions": [
                {"partition": p, "current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1,
                 "log_start_offset": -1, "partition_max_bytes": max_bytes} for p in range(partitions)]}
            body = {"replica_id": -1, "max_wait_ms": 100, "min_bytes": 1, "max_bytes": 8 * max_bytes,
                    "isolation_level": 0, "session_id": 0, "session_epoch": -1, "topics": [topic_entry],
                    "forgotten_topics_data": [], "rack_id": ""}
            payload = m.FETCH.encode_request(version, body, correlation_id=cid, client_id="kwire-fuzz-seeds")
            sock.sendall(struct.pack(">i", len(payload)) + payload)
            size = struct.unpack(">i", _recv_exact(sock, 4))[0]
            frames.append((version, _recv_exact(sock, size)))
    return frames


def record_sets_of(version: int, frame: bytes) -> list[bytes]:
    _, body = m.FETCH.decode_response(version, frame)
    return [bytes(p["records"]) for t in body.get("responses") or () for p in t.get("partitions") or ()
            if p.get("records") is not None and len(p["records"])]


# -- the mutator ---------------------------------------------------------------------------------------

def recrc(data: bytes) -> bytes:
    """Fix the checksum of every complete top-level batch / message, so mutations reach the record parser."""
    b = bytearray(data)
    pos, n = 0, len(b)
    while pos + 17 <= n:
        size = struct.unpack_from(">i", b, pos + 8)[0]
        end = pos + 12 + size
        if size < 5 or end > n:
            break
        magic = b[pos + 16]
        if magic == 2 and size >= 9 + 4:
            struct.pack_into(">I", b, pos + 17, crc32c.crc32c(bytes(b[pos + 21:end])))
        elif magic in (0, 1):
            struct.pack_into(">I", b, pos + 12, zlib.crc32(bytes(b[pos + 16:end])) & 0xFFFFFFFF)
        pos = end
    return bytes(b)


class Mutator:
    """Seeded mutations: bit flips, interesting bytes and int32s, truncation, insertion, deletion,
    duplication and splicing with another seed."""

    def __init__(self, seeds: list[bytes], seed: int = 0) -> None:
        self.seeds = [s for s in seeds if s]
        self.rng = random.Random(seed)

    def mutate(self, data: bytes) -> bytes:
        rng = self.rng
        b = bytearray(data)
        for _ in range(rng.choice((1, 1, 2, 3, 4))):
            if not b:
                b = bytearray(rng.randbytes(rng.randint(1, 64)))
                continue
            op = rng.randrange(10)
            p = rng.randrange(len(b))
            if op == 0:
                b[p] ^= 1 << rng.randrange(8)
            elif op == 1:
                b[p] = rng.randrange(256)
            elif op == 2:
                b[p] = rng.choice((0x00, 0xFF, 0x7F, 0x80, 0x01))
            elif op == 3 and p + 4 <= len(b):
                value = rng.choice(_INTERESTING32 + (len(b), len(b) - p, rng.randrange(-2**31, 2**31)))
                struct.pack_into(">i", b, p, value)
            elif op == 4:
                del b[rng.randrange(len(b) + 1):]
            elif op == 5:
                b[p:p] = rng.randbytes(rng.randint(1, 16))
            elif op == 6:
                del b[p:p + rng.randint(1, 32)]
            elif op == 7:
                q = min(len(b), p + rng.randint(1, 64))
                b[q:q] = b[p:q]
            elif op == 8 and self.seeds:
                other = rng.choice(self.seeds)
                q = rng.randrange(len(other) + 1)
                b = b[:p] + bytearray(other[q:])
            else:  # a run of varint continuation bytes
                b[p:p + 5] = b"\xff" * rng.randint(1, 10)
        return bytes(b)


# -- the harness -----------------------------------------------------------------------------------------

@dataclass
class FuzzReport:
    inputs: int = 0
    ok: int = 0
    errors: Counter = field(default_factory=Counter)  # KwireError subclass name -> count
    escaped: list = field(default_factory=list)  # (decoder, input hex, repr(exception)) of non-KwireErrors
    slowest_s: float = 0.0
    slowest_input: bytes = b""
    slowest_decoder: str = ""
    seconds: float = 0.0
    rss_growth_mb: float = 0.0

    def summary(self) -> str:
        lines = [f"inputs tried: {self.inputs} (decoded fine: {self.ok}) in {self.seconds:.1f}s; "
                 f"resident memory rose by at most {self.rss_growth_mb:.0f} MB",
                 f"slowest input: {self.slowest_s * 1000:.1f} ms ({self.slowest_decoder}, {len(self.slowest_input)} bytes)"]
        lines += [f"  {name}: {count}" for name, count in self.errors.most_common()]
        lines.append(f"other exceptions: {len(self.escaped)}")
        lines += [f"  {d}: {e} <- {h[:160]}" for d, h, e in self.escaped[:5]]
        return "\n".join(lines)


def current_rss_mb() -> float:
    """This process's resident memory now (not ru_maxrss, the high-water mark of its whole life, which
    earlier work may already have raised above anything the fuzzing does)."""
    with open("/proc/self/statm") as f:
        resident_pages = int(f.read().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE") / 2**20


class RssGrowth:
    """How far resident memory rose above where it was when the block began: sampled every `interval_s`
    by a thread, so a peak in the middle of the work counts, not only what is left at the end."""

    def __init__(self, interval_s: float = 0.02) -> None:
        self.interval_s = interval_s
        self.baseline_mb = self.peak_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.peak_mb = max(self.peak_mb, current_rss_mb())

    @property
    def growth_mb(self) -> float:
        return self.peak_mb - self.baseline_mb

    def __enter__(self) -> "RssGrowth":
        self.baseline_mb = self.peak_mb = current_rss_mb()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak_mb = max(self.peak_mb, current_rss_mb())


def fuzz_decoders(fetch_seeds: list[tuple[int, bytes]], record_seeds: list[bytes], *, fetch_inputs: int,
                  record_inputs: int, seed: int = 0, random_share: float = 0.1) -> FuzzReport:
    """Mutated Fetch responses go through ``FETCH.decode_response`` and then, as the client does, the record
    sets they hold through ``decode_record_set``; mutated record sets (checksums fixed half of the time)
    through ``decode_record_set`` directly. Counts exception types, keeps the slowest input."""
    report = FuzzReport()
    started = time.perf_counter()
    rng = random.Random(seed)
    fetch_mut = Mutator([f for _, f in fetch_seeds], seed)
    record_mut = Mutator(record_seeds, seed + 1)

    def run(decoder: str, data: bytes, fn) -> None:
        t = time.perf_counter()
        try:
            fn()
            report.ok += 1
        except KwireError as exc:
            report.errors[type(exc).__name__] += 1
        except Exception as exc:  # noqa: BLE001 - what the test is looking for
            report.escaped.append((decoder, data.hex(), repr(exc)))
        elapsed = time.perf_counter() - t
        report.inputs += 1
        if elapsed > report.slowest_s:
            report.slowest_s, report.slowest_input, report.slowest_decoder = elapsed, data, decoder

    def fetch_then_records(version: int, data: bytes):
        def go():
            _, body = m.FETCH.decode_response(version, data)
            for t in body.get("responses") or ():
                for p in t.get("partitions") or ():
                    records = p.get("records")
                    if records is not None and len(records):
                        decode_record_set(records, start_offset=0, end_offset=None, read_committed=True,
                                          aborted_transactions=[(a["producer_id"], a["first_offset"])
                                                                for a in p.get("aborted_transactions") or ()],
                                          include_headers=True)
        return go

    with RssGrowth() as memory:
        for _ in range(fetch_inputs):
            version, frame = rng.choice(fetch_seeds)
            data = rng.randbytes(rng.randint(0, 300)) if rng.random() < random_share else fetch_mut.mutate(frame)
            run(f"FETCH v{version}", data, fetch_then_records(version, data))
        for _ in range(record_inputs):
            if rng.random() < random_share:
                data = rng.randbytes(rng.randint(0, 300))
            else:
                data = record_mut.mutate(rng.choice(record_seeds))
                if rng.random() < 0.5:
                    data = recrc(data)
            start = rng.choice((0, 0, 0, 1, 5, 100))
            run("decode_record_set", data, lambda data=data, start=start: decode_record_set(
                data, start_offset=start, end_offset=None, read_committed=rng.random() < 0.3,
                aborted_transactions=[(rng.randrange(3), rng.randrange(50))], include_headers=True))
    report.seconds = time.perf_counter() - started
    report.rss_growth_mb = memory.growth_mb
    return report
