"""The bound on decompressed size: exact at the limit, refused one byte past it, for payloads made by
kafka-python's codecs (gzip, xerial snappy as the Java client wrote it, lz4, zstd), not by our encoder."""

from __future__ import annotations

import random

import kafka.codec
import pytest

from spark_kwire.protocol.errors import ProtocolDecodeError
from spark_kwire.protocol.records import DecompressedSizeError, decompress

DATA = random.Random(7).randbytes(50_000) + b"kafka " * 40_000  # some entropy, some repetition
ENCODERS = {
    "gzip": kafka.codec.gzip_encode,
    "snappy": lambda d: kafka.codec.snappy_encode(d, xerial_compatible=True, xerial_blocksize=32 * 1024),
    "lz4": kafka.codec.lz4_encode,
    "zstd": kafka.codec.zstd_encode,
}


@pytest.mark.parametrize("codec", sorted(ENCODERS))
def test_limit_is_exact(codec):
    payload = ENCODERS[codec](DATA)
    assert decompress(codec, payload, max_bytes=len(DATA)) == DATA
    with pytest.raises(DecompressedSizeError, match=f"{codec} data inflates to more than {len(DATA) - 1} bytes"):
        decompress(codec, payload, max_bytes=len(DATA) - 1)
    with pytest.raises(DecompressedSizeError):
        decompress(codec, payload, max_bytes=1)


@pytest.mark.parametrize("codec", sorted(ENCODERS))
def test_truncated_payload_is_corrupt_not_too_large(codec):
    payload = ENCODERS[codec](DATA)
    for cut in (1, 7, len(payload) // 2):
        with pytest.raises(ProtocolDecodeError) as info:
            decompress(codec, payload[:-cut])
        assert not isinstance(info.value, DecompressedSizeError)


@pytest.mark.parametrize("codec", ["gzip", "zstd"])
def test_concatenated_frames_count_together(codec):
    one = ENCODERS[codec](DATA)
    assert decompress(codec, one + one, max_bytes=2 * len(DATA)) == DATA + DATA
    with pytest.raises(DecompressedSizeError):
        decompress(codec, one + one, max_bytes=2 * len(DATA) - 1)


def test_gzip_zero_padding_is_accepted_and_other_trailing_bytes_are_not():
    one = ENCODERS["gzip"](DATA)
    assert decompress("gzip", one + b"\0" * 8) == DATA
    with pytest.raises(ProtocolDecodeError):
        decompress("gzip", one + b"garbage!")


def test_snappy_block_declaring_a_huge_length_is_refused_before_inflating():
    # a raw snappy block whose varint preamble claims 2 GiB
    with pytest.raises(DecompressedSizeError):
        decompress("snappy", b"\x80\x80\x80\x80\x08" + b"\0" * 16, max_bytes=1 << 20)
