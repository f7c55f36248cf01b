"""Builders of record-set bytes for the record-layer tests (no tests here).

``kp_*`` use kafka-python's builders (an encoder nobody here wrote);
``spec_*`` write bytes straight from the protocol spec with struct, for the
cases kafka-python cannot build (control batches, LogAppendTime, chosen
offset deltas, broken fields). ``entry`` / ``build_record_set``: hypothesis
strategies of whole record sets mixing every format.
"""

from __future__ import annotations

import struct
import zlib

import crc32c
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from spark_kwire.protocol.records import compress

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
CODEC_ID = {name: i for i, name in enumerate(CODECS)}


# --- kafka-python -------------------------------------------------------------
def set_base_offset(batch: bytes, base_offset: int) -> bytes:
    """The broker assigns the base offset; the field is outside the CRC."""
    return struct.pack(">q", base_offset) + bytes(batch[8:])


def kp_v2_batch(records, *, base_offset=0, codec="none", transactional=False, producer_id=-1,
                producer_epoch=-1, base_sequence=-1):
    """records: list of (ts, key, value, headers[(str, bytes|None)])."""
    b = DefaultRecordBatchBuilder(
        magic=2, compression_type=CODEC_ID[codec], is_transactional=transactional,
        producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=base_sequence,
        batch_size=1 << 30,
    )
    for i, (ts, key, value, headers) in enumerate(records):
        assert b.append(i, timestamp=ts, key=key, value=value, headers=headers) is not None
    return set_base_offset(bytes(b.build()), base_offset)


def kp_legacy_set(records, *, magic, base_offset=0, codec="none"):
    """A legacy message set as a broker returns it: uncompressed messages with
    absolute offsets, or one compressed wrapper whose offset is the last inner
    offset (inner offsets relative for magic 1, absolute for magic 0).
    records: list of (ts, key, value)."""
    b = LegacyRecordBatchBuilder(magic=magic, compression_type=CODEC_ID[codec], batch_size=1 << 30)
    n = len(records)
    for i, (ts, key, value) in enumerate(records):
        off = i if (codec != "none" and magic == 1) else base_offset + i
        assert b.append(off, timestamp=ts, key=key, value=value) is not None
    data = bytes(b.build())
    if codec != "none":
        data = set_base_offset(data, base_offset + n - 1)
    return data


def legacy_set_timestamp_type(wrapper: bytes, log_append_time: int) -> bytes:
    """Turns a magic-1 wrapper into LogAppendTime with the given timestamp
    (as a broker with message.timestamp.type=LogAppendTime does)."""
    buf = bytearray(wrapper)
    assert buf[16] == 1
    buf[17] |= 0x08
    struct.pack_into(">q", buf, 18, log_append_time)
    struct.pack_into(">I", buf, 12, zlib.crc32(bytes(buf[16:])))
    return bytes(buf)


# --- from the spec --------------------------------------------------------------
def varint(v: int) -> bytes:
    z = ((v << 1) ^ (v >> 63)) & 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while True:
        if z < 0x80:
            out.append(z)
            return bytes(out)
        out.append((z & 0x7F) | 0x80)
        z >>= 7


def spec_record(offset_delta, ts_delta, key, value, headers=()) -> bytes:
    body = b"\x00" + varint(ts_delta) + varint(offset_delta)
    for f in (key, value):
        body += varint(-1) if f is None else varint(len(f)) + f
    body += varint(len(headers))
    for hk, hv in headers:
        body += varint(len(hk)) + hk
        body += varint(-1) if hv is None else varint(len(hv)) + hv
    return varint(len(body)) + body


def spec_v2_batch(records, *, base_offset=0, base_ts=1_600_000_000_000, max_ts=None, codec="none",
                  transactional=False, control=False, log_append_time=False, producer_id=-1,
                  producer_epoch=-1, base_sequence=-1, last_offset_delta=None, count=None,
                  leader_epoch=7) -> bytes:
    """records: list of (offset_delta, ts_delta, key, value, headers)."""
    body = b"".join(spec_record(*r) for r in records)
    if codec != "none":
        body = compress(codec, body)
    attrs = CODEC_ID[codec] | (0x08 if log_append_time else 0) | (0x10 if transactional else 0) | (0x20 if control else 0)
    if last_offset_delta is None:
        last_offset_delta = max((r[0] for r in records), default=0)
    if max_ts is None:
        max_ts = base_ts + max((r[1] for r in records), default=0)
    n = len(records) if count is None else count
    after_crc = struct.pack(">hiqqqhii", attrs, last_offset_delta, base_ts, max_ts, producer_id, producer_epoch,
                            base_sequence, n) + body
    head = struct.pack(">qiib", base_offset, 4 + 1 + 4 + len(after_crc), leader_epoch, 2)
    return head + struct.pack(">I", crc32c.crc32c(after_crc)) + after_crc


def control_batch(*, base_offset, producer_id, abort: bool, producer_epoch=0, coordinator_epoch=3,
                  codec="none") -> bytes:
    """End-transaction marker batch as the broker writes it (by hand from the
    spec: kafka-python cannot build control batches). Key: version int16 0,
    type int16 (0 abort, 1 commit); value: version int16 0, coordinator
    epoch int32."""
    key = struct.pack(">hh", 0, 0 if abort else 1)
    value = struct.pack(">hi", 0, coordinator_epoch)
    return spec_v2_batch([(0, 0, key, value, [])], base_offset=base_offset, codec=codec, transactional=True,
                         control=True, producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=-1)


def recrc_v2(batch: bytes) -> bytes:
    buf = bytearray(batch)
    struct.pack_into(">I", buf, 17, crc32c.crc32c(bytes(buf[21:])))
    return bytes(buf)


def as_rows(res, with_headers=True):
    """DecodedRecords -> list of tuples (offset, ts, ts_type, key, value[, headers])."""
    keys = res.key.to_pylist()
    values = res.value.to_pylist()
    hs = res.headers.to_pylist() if (with_headers and res.headers is not None) else [None] * len(keys)
    out = []
    for i in range(len(keys)):
        row = (int(res.offset[i]), int(res.timestamp[i]), int(res.timestamp_type[i]), keys[i], values[i])
        if with_headers:
            h = hs[i]
            row += (None if h is None else [(d["key"].encode(), d["value"]) for d in h],)
        out.append(row)
    return out


# --- hypothesis: record sets mixing v2 (every codec, transactions, LogAppendTime), control and legacy entries
record = st.tuples(st.one_of(st.none(), st.binary(max_size=30)), st.one_of(st.none(), st.binary(max_size=60)),
                   st.lists(st.tuples(st.sampled_from([b"a", b"bb", "ü".encode()]),
                                      st.one_of(st.none(), st.binary(max_size=5))), max_size=2),
                   st.integers(-5000, 5000))
entry = st.one_of(
    st.tuples(st.just("v2"), st.lists(record, max_size=6), st.sampled_from(CODECS), st.booleans(), st.booleans(),
              st.integers(0, 2)),
    st.tuples(st.just("ctrl"), st.booleans(), st.integers(0, 2), st.sampled_from(["none", "gzip"])),
    st.tuples(st.just("legacy"), st.lists(record, min_size=1, max_size=4), st.sampled_from(CODECS[:3]),
              st.integers(0, 1)),
)


def build_record_set(entries) -> tuple[bytes, int]:
    """(bytes, next offset) of the record set that a list of ``entry`` values describes."""
    buf = b""
    off = 0
    for ent in entries:
        if ent[0] == "v2":
            _, recs, codec, txn, lat, pid = ent
            if not recs:
                buf += spec_v2_batch([], base_offset=off, last_offset_delta=0, codec=codec)
                off += 1
                continue
            rr = [(i, r[3], r[0], r[1], r[2]) for i, r in enumerate(recs)]
            buf += spec_v2_batch(rr, base_offset=off, codec=codec, transactional=txn, log_append_time=lat,
                                 producer_id=pid if txn else -1, producer_epoch=0 if txn else -1,
                                 base_sequence=0 if txn else -1)
            off += len(recs)
        elif ent[0] == "ctrl":
            _, abort, pid, codec = ent
            buf += control_batch(base_offset=off, producer_id=pid, abort=abort, codec=codec)
            off += 1
        else:
            _, recs, codec, magic = ent
            buf += kp_legacy_set([(1_600_000_000_000 + r[3], r[0], r[1]) for r in recs], magic=magic,
                                 base_offset=off, codec=codec)
            off += len(recs)
    return buf, off
