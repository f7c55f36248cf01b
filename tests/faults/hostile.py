"""Hostile bytes: a seeded mutator over real broker responses, a harness that runs decoders on its output,
and a scripted fake broker that answers Fetch with garbage, truncated frames, stalls or nothing.

Used by ``test_hostile_bytes.py`` and ``benchmarks/faults_report.py``.
"""

from __future__ import annotations

import functools
import random
import resource
import socket
import struct
import threading
import time
import uuid
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
                 f"max RSS grew {self.rss_growth_mb:.0f} MB",
                 f"slowest input: {self.slowest_s * 1000:.1f} ms ({self.slowest_decoder}, {len(self.slowest_input)} bytes)"]
        lines += [f"  {name}: {count}" for name, count in self.errors.most_common()]
        lines.append(f"other exceptions: {len(self.escaped)}")
        lines += [f"  {d}: {e} <- {h[:160]}" for d, h, e in self.escaped[:5]]
        return "\n".join(lines)


def _max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def fuzz_decoders(fetch_seeds: list[tuple[int, bytes]], record_seeds: list[bytes], *, fetch_inputs: int,
                  record_inputs: int, seed: int = 0, random_share: float = 0.1) -> FuzzReport:
    """Mutated Fetch responses go through ``FETCH.decode_response`` and then, as the client does, the record
    sets they hold through ``decode_record_set``; mutated record sets (checksums fixed half of the time)
    through ``decode_record_set`` directly. Counts exception types, keeps the slowest input."""
    report = FuzzReport()
    rss_before = _max_rss_mb()
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
    report.rss_growth_mb = _max_rss_mb() - rss_before
    return report


# -- a scripted fake broker ----------------------------------------------------------------------------

FAKE_TOPIC = "hostile"


class FakeBroker:
    """A one-node 'Kafka' on loopback: answers ApiVersions, Metadata (topic ``hostile``, 1 partition) and
    ListOffsets properly, and Fetch according to ``mode``:

    ``garbage`` (random bytes after the right correlation id), ``truncated`` (half a frame, then close),
    ``silent`` (no answer), ``trickle`` (a valid frame, one byte every 200 ms), ``huge`` (a size field of
    2 GiB - 1), ``lie`` (a size field of 100 MB, then 1 KB and nothing), ``corrupt`` (a valid frame whose
    record batch fails its checksum), ``close`` (close the connection at once), ``bomb`` (a valid frame
    whose 2 KiB zstd batch inflates to 64 MiB).
    """

    def __init__(self, mode: str) -> None:
        self.mode = mode
        # built here, not while a request waits: the first encode in a process may load compiled kernels
        self.records = _bomb_batch() if mode == "bomb" else _valid_batch(corrupt=mode == "corrupt")
        self.topic_id = uuid.uuid4()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.fetches = 0
        self._stop = threading.Event()
        self._conns: list[socket.socket] = []
        self._threads = [threading.Thread(target=self._accept, daemon=True)]
        self._threads[0].start()

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def close(self) -> None:
        self._stop.set()
        self.sock.close()
        for c in list(self._conns):
            try:
                c.close()
            except OSError:
                pass
        for t in self._threads:
            t.join(timeout=5)

    def __enter__(self) -> "FakeBroker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self._conns.append(conn)
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self._threads.append(t)
            t.start()

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(0.2)
        try:
            while not self._stop.is_set():
                header = self._read(conn, 4)
                if header is None:
                    return
                frame = self._read(conn, struct.unpack(">i", header)[0])
                if frame is None:
                    return
                api_key, version, cid = struct.unpack_from(">hhi", frame, 0)
                if not self._answer(conn, m.BY_KEY[api_key], version, cid, frame):
                    return
        except OSError:
            pass
        finally:
            conn.close()

    def _read(self, conn: socket.socket, n: int) -> bytes | None:
        buf = bytearray()
        while len(buf) < n:
            if self._stop.is_set():
                return None
            try:
                chunk = conn.recv(n - len(buf))
            except socket.timeout:
                continue
            if not chunk:
                return None
            buf += chunk
        return bytes(buf)

    def _send(self, conn, api, version, cid, body) -> None:
        payload = api.encode_response(version, body, correlation_id=cid)
        conn.sendall(struct.pack(">i", len(payload)) + payload)

    def _answer(self, conn, api, version, cid, frame) -> bool:
        if api is m.API_VERSIONS:
            self._send(conn, api, version, cid, {"error_code": 0, "api_keys": [
                {"api_key": a.api_key, "min_version": a.min_version, "max_version": top}
                for a, top in ((m.API_VERSIONS, 3), (m.METADATA, 12), (m.LIST_OFFSETS, 7), (m.FETCH, 12))]})
        elif api is m.METADATA:
            self._send(conn, api, version, cid, {
                "brokers": [{"node_id": 1, "host": "127.0.0.1", "port": self.port}], "controller_id": 1,
                "cluster_id": "hostile", "topics": [{"error_code": 0, "name": FAKE_TOPIC, "topic_id": self.topic_id,
                                                     "partitions": [{"error_code": 0, "partition_index": 0,
                                                                     "leader_id": 1, "leader_epoch": 0,
                                                                     "replica_nodes": [1], "isr_nodes": [1],
                                                                     "offline_replicas": []}]}]})
        elif api is m.LIST_OFFSETS:
            self._send(conn, api, version, cid, {"topics": [{"name": FAKE_TOPIC, "partitions": [
                {"partition_index": 0, "error_code": 0, "timestamp": -1, "offset": 100, "leader_epoch": 0}]}]})
        elif api is m.FETCH:
            self.fetches += 1
            return self._fetch(conn, version, cid)
        return True

    def _fetch(self, conn, version, cid) -> bool:
        mode = self.mode
        good = m.FETCH.encode_response(version, {"error_code": 0, "session_id": 0, "responses": [
            {"topic": FAKE_TOPIC, "partitions": [{"partition_index": 0, "error_code": 0, "high_watermark": 100,
                                                  "last_stable_offset": 100, "log_start_offset": 0,
                                                  "aborted_transactions": None, "preferred_read_replica": -1,
                                                  "records": self.records}]}]},
                                       correlation_id=cid)
        if mode in ("corrupt", "bomb"):
            conn.sendall(struct.pack(">i", len(good)) + good)
        elif mode == "garbage":
            body = struct.pack(">i", cid) + random.Random(cid).randbytes(200)
            conn.sendall(struct.pack(">i", len(body)) + body)
        elif mode == "truncated":
            conn.sendall(struct.pack(">i", len(good)) + good[:len(good) // 2])
            return False
        elif mode == "silent":
            while not self._stop.wait(0.2):
                pass
            return False
        elif mode == "trickle":
            for byte in struct.pack(">i", len(good)) + good:
                if self._stop.wait(0.2):
                    return False
                conn.sendall(bytes([byte]))
        elif mode == "huge":
            conn.sendall(struct.pack(">i", 2**31 - 1) + struct.pack(">i", cid))
        elif mode == "lie":
            conn.sendall(struct.pack(">i", 100 * 1024 * 1024) + struct.pack(">i", cid) + b"\0" * 1020)
            while not self._stop.wait(0.2):
                pass
            return False
        elif mode == "close":
            return False
        return True


@functools.lru_cache(maxsize=1)
def _bomb_batch() -> bytes:
    return bomb_batch("zstd", 64 * 2**20)


def _valid_batch(corrupt: bool = False) -> bytes:
    """One record batch (v2, uncompressed) holding offsets 0..2."""
    import pyarrow as pa

    from spark_kwire.protocol.records import encode_record_batches

    data = encode_record_batches(pa.array([b"a", b"b", b"c"], pa.binary()), None, compression="none",
                                 max_batch_bytes=1 << 20)[0]
    if corrupt:
        data = bytearray(data)
        data[-1] ^= 0xFF
        data = bytes(data)
    return data


def _zigzag_varint(value: int) -> bytes:
    value = (value << 1) ^ (value >> 63)
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def bomb_batch(codec: str, inflated_bytes: int) -> bytes:
    """A valid v2 record batch (correct CRC) of one record, null key, whose value is ``inflated_bytes``
    zero bytes: the ``codec`` payload is gzip ~1/1000 of that on the wire, zstd ~1/30000, lz4 ~1/250,
    snappy ~1/20. Compressed by the codecs' own libraries, 1 MiB at a time."""
    import lz4.frame
    import snappy
    import zstandard

    # attributes, timestampDelta, offsetDelta, key length -1, value length; then the value, then 0 headers
    head = b"\0" + _zigzag_varint(0) + _zigzag_varint(0) + _zigzag_varint(-1) + _zigzag_varint(inflated_bytes)
    head = _zigzag_varint(len(head) + inflated_bytes + 1) + head
    tail = _zigzag_varint(0)
    chunk = b"\0" * (1 << 20)
    count, rest = divmod(inflated_bytes, 1 << 20)
    pieces = [head] + [chunk] * count + [b"\0" * rest, tail]
    if codec == "gzip":
        co = zlib.compressobj(9, zlib.DEFLATED, 31)
        payload = b"".join(co.compress(p) for p in pieces) + co.flush()
    elif codec == "zstd":
        co = zstandard.ZstdCompressor(level=3).compressobj()
        payload = b"".join(co.compress(p) for p in pieces) + co.flush()
    elif codec == "lz4":
        co = lz4.frame.LZ4FrameCompressor(block_linked=False)
        payload = co.begin() + b"".join(co.compress(p) for p in pieces) + co.flush()
    elif codec == "snappy":  # one raw block declaring the whole length, as v2 batches carry it
        payload = snappy.compress(b"".join(pieces))
    else:
        raise ValueError(codec)
    attributes = {"gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}[codec]
    # attributes, lastOffsetDelta, baseTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, recordCount
    after_crc = struct.pack(">hiqqqhii", attributes, 0, 0, 0, -1, -1, -1, 1) + payload
    after_length = struct.pack(">ibI", 0, 2, crc32c.crc32c(after_crc)) + after_crc
    return struct.pack(">qi", 0, len(after_length)) + after_length
