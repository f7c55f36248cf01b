"""Fetch semantics (partial batches, offset ranges, transactions), corrupt
input errors, compression helpers."""

from __future__ import annotations

import gzip
import struct
import zlib

import numpy as np
import pyarrow as pa
import pytest
import zstandard
from kafka.codec import snappy_encode

from spark_kwire.protocol.errors import ProtocolDecodeError
from spark_kwire.protocol.records import (
    DecompressedSizeError,
    compress,
    decode_record_set,
    decompress,
    encode_record_batch,
    scan_record_set,
)
from spark_kwire.protocol.records import batch as batch_mod

from .test_records_helpers import (
    CODECS,
    control_batch,
    kp_legacy_set,
    recrc_v2,
    spec_record,
    spec_v2_batch,
    varint,
)

pytestmark = pytest.mark.usefixtures("records_kernels")  # each test through both implementations

T0 = 1_700_000_000_000


def dec(buf, start=0, end=None, rc=False, aborted=None, headers=False, **kw):
    return decode_record_set(buf, start_offset=start, end_offset=end, read_committed=rc,
                             aborted_transactions=aborted, include_headers=headers, **kw)


def simple_batch(base, n, codec="none", **kw):
    return spec_v2_batch([(i, i, b"k%d" % (base + i), b"v%d" % (base + i), []) for i in range(n)],
                         base_offset=base, codec=codec, **kw)


# --- partial batches and offset ranges ----------------------------------------------
@pytest.mark.parametrize("codec", ["none", "lz4"])
def test_partial_trailing_batch_is_ignored_at_every_cut(codec):
    b1 = simple_batch(0, 3, codec)
    b2 = simple_batch(3, 4, codec)
    full = b1 + b2
    for cut in range(len(b1), len(full)):
        res = dec(full[:cut])
        assert res.offset.tolist() == [0, 1, 2]
        assert res.next_offset == 3
        assert res.bytes_decoded == len(b1)
        assert res.trailing_bytes == cut - len(b1)
    assert dec(full).offset.tolist() == list(range(7))
    for cut in range(0, len(b1)):
        res = dec(full[:cut], start=0)
        assert res.record_count == 0 and res.next_offset == 0 and res.bytes_decoded == 0


def test_legacy_partial_trailing_message_is_ignored():
    s1 = kp_legacy_set([(T0, b"a", b"1"), (T0, b"b", b"2")], magic=1, base_offset=10)
    s2 = kp_legacy_set([(T0, b"c", b"3")], magic=1, base_offset=12, codec="gzip")
    for cut in range(len(s1), len(s1 + s2)):
        res = dec((s1 + s2)[:cut])
        assert res.offset.tolist() == [10, 11] and res.next_offset == 12


def test_start_offset_inside_batch_and_end_offset():
    buf = simple_batch(100, 10) + simple_batch(110, 10, "zstd")
    res = dec(buf, start=104)
    assert res.offset.tolist() == list(range(104, 120))
    assert res.key.to_pylist()[0] == b"k104"
    assert res.next_offset == 120
    res = dec(buf, start=104, end=113)
    assert res.offset.tolist() == list(range(104, 113))
    assert res.next_offset == 113  # a bounded reader resumes exactly at end_offset
    res = dec(buf, start=125)  # nothing at or after start
    assert res.record_count == 0 and res.next_offset == 125
    res = dec(buf, start=100, end=100)
    assert res.record_count == 0 and res.next_offset == 100


def test_control_batches_skipped_and_counted_in_next_offset():
    buf = simple_batch(0, 2) + control_batch(base_offset=2, producer_id=9, abort=False)
    res = dec(buf)
    assert res.offset.tolist() == [0, 1]
    assert res.next_offset == 3
    res = dec(control_batch(base_offset=7, producer_id=9, abort=True), start=7)
    assert res.record_count == 0 and res.next_offset == 8


def test_empty_batches_advance_next_offset():
    # a batch emptied by compaction keeps its offset range
    buf = spec_v2_batch([], base_offset=5, last_offset_delta=3)
    res = dec(buf, start=5)
    assert res.record_count == 0 and res.next_offset == 9 and res.batch_count == 1
    # an empty batch flagged as compressed with no payload is not decompressed
    buf = spec_v2_batch([], base_offset=5, last_offset_delta=0, codec="none")
    buf = recrc_v2(buf[:21] + struct.pack(">h", 4) + buf[23:])
    assert dec(buf + simple_batch(6, 1)).offset.tolist() == [6]


def txn_batch(base, n, pid, codec="none"):
    return spec_v2_batch([(i, 0, None, b"p%d-%d" % (pid, base + i), []) for i in range(n)], base_offset=base,
                         codec=codec, transactional=True, producer_id=pid, producer_epoch=0, base_sequence=0)


def test_aborted_transactions_interleaved_producers():
    # P1 aborts, P2 commits, both interleaved; P1 then starts a second
    # transaction that commits (its batches come after the abort marker).
    buf = (
        txn_batch(0, 2, pid=1)
        + txn_batch(2, 2, pid=2, codec="gzip")
        + txn_batch(4, 1, pid=1)
        + control_batch(base_offset=5, producer_id=1, abort=True)
        + txn_batch(6, 2, pid=2)
        + control_batch(base_offset=8, producer_id=2, abort=False)
        + txn_batch(9, 2, pid=1)
        + control_batch(base_offset=11, producer_id=1, abort=False)
        + simple_batch(12, 1)  # non-transactional
    )
    res = dec(buf, rc=True, aborted=[(1, 0)])
    assert res.offset.tolist() == [2, 3, 6, 7, 9, 10, 12]
    assert res.next_offset == 13
    # read_uncommitted returns everything but the markers
    assert dec(buf).offset.tolist() == [0, 1, 2, 3, 4, 6, 7, 9, 10, 12]
    # read_committed without aborted transactions: only markers dropped
    assert dec(buf, rc=True, aborted=[]).offset.tolist() == [0, 1, 2, 3, 4, 6, 7, 9, 10, 12]
    # an aborted transaction that starts later does not touch earlier batches
    assert dec(buf, rc=True, aborted=[(1, 9)]).offset.tolist() == [0, 1, 2, 3, 4, 6, 7, 12]
    # fetch starting in the middle (the broker only lists overlapping txns)
    assert dec(buf, start=4, rc=True, aborted=[(1, 0)]).offset.tolist() == [6, 7, 9, 10, 12]


def test_aborted_producer_non_transactional_batch_kept_and_compressed_marker():
    buf = (
        txn_batch(0, 2, pid=3)
        + spec_v2_batch([(0, 0, None, b"idempotent", [])], base_offset=2, producer_id=3, producer_epoch=0,
                        base_sequence=5)
        + control_batch(base_offset=3, producer_id=3, abort=True, codec="lz4")
        + txn_batch(4, 1, pid=3)
    )
    res = dec(buf, rc=True, aborted=[(3, 0)])
    assert res.offset.tolist() == [2, 4]


def test_malformed_control_record_raises_under_read_committed():
    bad = recrc_v2(spec_v2_batch([(0, 0, b"\x00", b"x", [])], base_offset=0, transactional=True, control=True,
                                 producer_id=1, producer_epoch=0))
    assert dec(bad).record_count == 0
    with pytest.raises(ProtocolDecodeError, match="control"):
        dec(bad, rc=True, aborted=[(1, 0)])


# --- corrupt input -----------------------------------------------------------------------
def patch(buf, fmt, pos, value, fix_crc=True):
    b = bytearray(buf)
    struct.pack_into(fmt, b, pos, value)
    return recrc_v2(bytes(b)) if fix_crc else bytes(b)


def expect_error(buf, pattern, base_offset=42):
    with pytest.raises(ProtocolDecodeError, match=rf"'t1' partition 3, batch at base offset {base_offset}: .*{pattern}"):
        dec(buf, topic="t1", partition=3, headers=True)


def test_corrupt_inputs_raise_with_context():
    good = simple_batch(42, 3)
    ok = simple_batch(40, 2)
    expect_error(patch(good, ">B", len(good) - 1, good[-1] ^ 1, fix_crc=False), "checksum")
    expect_error(ok + patch(good, ">i", 8, 30, fix_crc=False), "minimum")
    expect_error(patch(good, ">b", 16, 3, fix_crc=False), "magic")
    for codec in (5, 6, 7):
        expect_error(patch(good, ">h", 21, codec), "codec")
    expect_error(patch(good, ">i", 57, 4), "record count")  # lying record count
    expect_error(patch(good, ">i", 57, 2), "record count does not match")  # bytes left over
    expect_error(patch(good, ">i", 57, 10**9), "record count")  # never allocated
    expect_error(patch(good, ">i", 57, -1), "record count")
    # record length pointing past the end of the batch
    expect_error(patch(good, ">B", 61, 0x7E), "record length is invalid")
    # malformed varint (never terminated)
    rec = b"\x10" + b"\xff" * 15
    expect_error(_with_records(42, rec, 1), "varint")
    # key length past the record
    expect_error(_with_records(42, varint(7) + b"\x00\x00\x00" + varint(50) + b"abc", 1), "key/value/header length")
    # null header key
    expect_error(_with_records(42, varint(8) + b"\x00\x00\x00\x01\x01\x02" + varint(-1) + varint(-1), 1),
                 "header key is null")
    # record length larger than its fields
    body = b"\x00\x00\x00\x01\x01\x00"
    expect_error(_with_records(42, varint(len(body) + 1) + body + b"\x00", 1), "record length does not match")
    # corrupt compressed payload
    expect_error(_with_records(42, b"\x1f\x8b\x08garbage", 1, codec=1), "gzip")
    expect_error(_with_records(42, b"garbage-zstd", 1, codec=4), "zstd")


def _with_records(base, records: bytes, count: int, codec: int = 0) -> bytes:
    after = struct.pack(">hiqqqhii", codec, count - 1, T0, T0, -1, -1, -1, count) + records
    import crc32c

    return struct.pack(">qiibI", base, 9 + len(after), 0, 2, crc32c.crc32c(after)) + after


def test_legacy_corruptions():
    wrapper = kp_legacy_set([(T0, b"a", b"1"), (T0, b"b", b"2")], magic=1, base_offset=42, codec="gzip")
    b = bytearray(wrapper)
    b[-2] ^= 0x55
    expect_error(bytes(b), "checksum", base_offset=43)
    plain = kp_legacy_set([(T0, b"a", b"1")], magic=0, base_offset=42)
    b = bytearray(plain)
    struct.pack_into(">i", b, 18, 100)  # key length past the message
    struct.pack_into(">I", b, 12, zlib.crc32(bytes(b[16:])))
    expect_error(bytes(b), "legacy message size")
    b = bytearray(plain)
    b[17] = 4  # zstd is not allowed in magic 0/1
    struct.pack_into(">I", b, 12, zlib.crc32(bytes(b[16:])))
    expect_error(bytes(b), "codec")
    # compressed wrapper whose inner messages are compressed too
    inner = kp_legacy_set([(T0, b"a", b"1")], magic=1, base_offset=0, codec="gzip")
    msg = struct.pack(">bbq", 1, 1, T0) + struct.pack(">i", -1) + struct.pack(">i", len(gz := gzip.compress(inner))) + gz
    nested = struct.pack(">qiI", 42, len(msg) + 4, zlib.crc32(msg)) + msg
    expect_error(nested, "compressed inner")


@pytest.mark.parametrize("v2_inline", [True, False])
def test_deferred_crc_path_for_large_batches(v2_inline, monkeypatch):
    if not v2_inline:  # force the library path for v2 too (the default without SSE4.2)
        monkeypatch.setattr(batch_mod, "CRC32C_INLINE_MAX", batch_mod.CRC_INLINE_MAX)
    big = b"x" * (batch_mod.CRC_INLINE_MAX * 3)
    v2 = spec_v2_batch([(0, 0, None, big, [])], base_offset=42)
    legacy = kp_legacy_set([(T0, None, big)], magic=1, base_offset=43)
    res = dec(v2 + legacy)
    assert res.value.to_pylist() == [big, big]
    b = bytearray(v2)
    b[-1] ^= 1
    expect_error(bytes(b) + legacy, "checksum")
    b = bytearray(legacy)
    b[-1] ^= 1
    expect_error(v2 + bytes(b), "checksum", base_offset=43)


# --- inputs and outputs -------------------------------------------------------------------
def test_buffer_types_and_to_arrow():
    buf = simple_batch(0, 3) + simple_batch(3, 2, "snappy")
    for b in (buf, bytearray(buf), memoryview(buf), np.frombuffer(buf, np.uint8), memoryview(b"xx" + buf)[2:]):
        res = dec(b, headers=True, topic="events", partition=2)
        assert res.offset.tolist() == [0, 1, 2, 3, 4]
    rb = res.to_arrow()
    assert rb.schema.names == ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers"]
    assert rb.column("topic").to_pylist() == ["events"] * 5
    assert rb.column("partition").to_pylist() == [2] * 5
    assert rb.column("timestamp").type == pa.timestamp("ms", tz="UTC")
    rb.validate(full=True)
    assert len(res) == 5 and res.codecs == {"snappy": 1}
    info = scan_record_set(buf)
    assert info["base_offset"].tolist() == [0, 3] and info["magic"].tolist() == [2, 2]


def test_many_single_record_batches():
    n = 3000
    buf = b"".join(simple_batch(i, 1) for i in range(n))
    res = dec(buf, start=5)
    assert res.offset.tolist() == list(range(5, n))
    assert res.key.to_pylist()[-1] == b"k%d" % (n - 1)


def test_header_key_with_malformed_utf8_is_replaced_like_java():
    buf = spec_v2_batch([(0, 0, None, b"v", [(b"ok", b"1")]), (1, 0, None, b"w", [(b"a\xff\xfeb", b"x")])])
    res = dec(buf, headers=True)
    assert res.headers.to_pylist() == [[{"key": "ok", "value": b"1"}], [{"key": "a\ufffd\ufffdb", "value": b"x"}]]
    res.headers.validate(full=True)


def test_null_keys_values_and_header_values():
    recs = [(0, 0, None, None, []), (1, 0, b"", b"", [(b"h", None), (b"h", b"")])]
    res = dec(spec_v2_batch(recs, base_offset=0), headers=True)
    assert res.key.to_pylist() == [None, b""]
    assert res.value.to_pylist() == [None, b""]
    assert res.key.null_count == 1 and res.value.null_count == 1
    assert res.headers.to_pylist() == [None, [{"key": "h", "value": None}, {"key": "h", "value": b""}]]


# --- compression helpers ---------------------------------------------------------------------
@pytest.mark.parametrize("codec", CODECS)
def test_compress_roundtrip_and_corrupt(codec):
    data = b"kafka " * 1000 + bytes(range(256))
    c = compress(codec, data)
    assert decompress(codec, c) == data
    if codec != "none":
        with pytest.raises(ProtocolDecodeError):
            decompress(codec, b"\x00\x01 definitely not " + codec.encode())
        with pytest.raises(ProtocolDecodeError):
            decompress(codec, c[: len(c) // 2])


def test_decompress_variants():
    data = b"0123456789abcdef" * 5000
    # xerial-framed snappy (kafka-python writes it like the Java client did)
    x = snappy_encode(data, xerial_compatible=True, xerial_blocksize=4096)
    assert x[:8] == b"\x82SNAPPY\x00"
    assert decompress("snappy", x) == data
    with pytest.raises(ProtocolDecodeError):
        decompress("snappy", x[:-3])
    # zstd without content size (streaming writers), and two frames
    z = zstandard.ZstdCompressor(write_content_size=False).compress(data)
    assert decompress("zstd", z) == data
    assert decompress("zstd", z + z) == data + data
    # gzip with two members
    assert decompress("gzip", gzip.compress(data) + gzip.compress(b"tail")) == data + b"tail"
    with pytest.raises(ProtocolDecodeError):
        decompress(7, b"x")
    with pytest.raises(ValueError):
        compress("brotli", b"x")


def test_encoded_batch_header_fields():
    data = encode_record_batch(pa.array([b"a", b"b"]), timestamps_ms=np.array([20, 10]), compression="gzip")
    base, length, epoch, magic, crc, attrs, lod, bts, mts, pid, pep, seq, cnt = struct.unpack_from(
        ">qiibIhiqqqhii", data)
    assert (base, length, epoch, magic, attrs, lod, bts, mts, pid, pep, seq, cnt) == (
        0, len(data) - 12, -1, 2, 1, 1, 20, 20, -1, -1, -1, 2)


# --- the bound on decompressed data, through each implementation ---------------------------------------------
@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_decompressed_bytes_of_one_call_are_bounded_across_batches(codec):
    # three compressed batches of 20 000-byte values: the limit counts them together, exactly
    batches = b"".join(spec_v2_batch([(0, 0, None, bytes([i]) * 20_000, [])], base_offset=i, codec=codec)
                       for i in range(3))
    records_section = len(spec_record(0, 0, None, b"x" * 20_000))
    res = dec(batches, max_decompressed_bytes=3 * records_section)
    assert [len(v) for v in res.value.to_pylist()] == [20_000] * 3
    with pytest.raises(DecompressedSizeError, match=rf"batch at base offset 2: {codec} data inflates to more than "
                                                    rf"{3 * records_section - 1} bytes"):
        dec(batches, max_decompressed_bytes=3 * records_section - 1)
