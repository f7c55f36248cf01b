"""A scripted fake broker that answers Fetch with garbage, truncated frames, stalls, nothing, or a
decompression bomb, and the record batches it serves (also used to build bombs for decoder tests)."""

from __future__ import annotations

import functools
import random
import socket
import struct
import threading
import uuid
import zlib

import crc32c

from spark_kwire.protocol import messages as m


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
