"""Kafka compression codecs (attribute bits 0-2) on top of the usual libraries.

* gzip (1): RFC 1952, possibly several members.
* snappy (2): raw snappy blocks (what v2 batches carry); on decompression the
  xerial framing written by the Java client for old message formats
  (``\\x82SNAPPY\\x00`` header, then big-endian length-prefixed raw blocks) is
  recognised too.
* lz4 (3): the LZ4 frame format. Kafka 0.8-0.9 (magic 0) computed the frame
  header checksum over the wrong bytes (KAFKA-3160); ``legacy_magic=0``
  accepts such frames by recomputing the header checksum before decoding.
* zstd (4): zstd frames, with or without the content size in the header.

Decompression is bounded: :func:`decompress` takes ``max_bytes`` and stops
with :class:`DecompressedSizeError` as soon as the output would pass it, so a
small hostile batch cannot make the reader allocate gigabytes.
"""

from __future__ import annotations

import zlib

import lz4.frame
import snappy
import zstandard

from ..errors import ProtocolDecodeError

# Default bound on what one decode call may inflate to (all compressed batches of one fetched partition).
DEFAULT_MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024
# zstd's densest encoding (a 4-byte RLE block for 128 KiB of output) inflates a byte at most this much
_ZSTD_MAX_RATIO = 32 * 1024
# largest piece gzip and lz4 output is asked for at once
_STEP = 16 * 1024 * 1024


class DecompressedSizeError(ProtocolDecodeError):
    """A compressed payload inflates to more than the allowed number of bytes."""

    def __init__(self, codec: str, limit: int, where: str = "", what: str = "decompressed data") -> None:
        prefix = f"{where}: " if where else ""
        super().__init__(f"{prefix}{codec} data inflates to more than {limit} bytes, the limit on {what}")
        self.codec = codec
        self.limit = limit
        self.where = where

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
CODEC_IDS = {"none": NONE, "gzip": GZIP, "snappy": SNAPPY, "lz4": LZ4, "zstd": ZSTD}
CODEC_NAMES = {v: k for k, v in CODEC_IDS.items()}

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_LZ4_MAGIC = b"\x04\x22\x4d\x18"

_zstd_c = zstandard.ZstdCompressor(level=3)
_zstd_d = zstandard.ZstdDecompressor()


def codec_id(codec: str | int) -> int:
    """Kafka attribute value of a codec name (``"none"``, ``"gzip"``, ...) or id."""
    if isinstance(codec, int):
        if codec not in CODEC_NAMES:
            raise ValueError(f"unknown compression codec id {codec}")
        return codec
    try:
        return CODEC_IDS[codec.lower()]
    except KeyError:
        raise ValueError(f"unknown compression codec {codec!r}; expected one of {sorted(CODEC_IDS)}") from None


def compress(codec: str | int, data) -> bytes:
    """Compresses ``data`` the way Kafka v2 record batches carry it."""
    c = codec_id(codec)
    if c == NONE:
        return bytes(data)
    if c == GZIP:
        co = zlib.compressobj(6, zlib.DEFLATED, 31)
        return co.compress(data) + co.flush()
    if c == SNAPPY:
        return snappy.compress(bytes(data) if not isinstance(data, bytes) else data)
    if c == LZ4:
        # independent blocks and no content size: what the Java client reads
        return lz4.frame.compress(data, block_linked=False, store_size=False, content_checksum=False)
    return _zstd_c.compress(data)


# --- xxh32 (only for the tiny LZ4 frame descriptor; not a codec) -------------
_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_M32 = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def xxh32(data: bytes, seed: int = 0) -> int:
    """XXH32 of a short byte string (used to repair LZ4 frame header checksums)."""
    n = len(data)
    i = 0
    if n >= 16:
        v1 = (seed + _P1 + _P2) & _M32
        v2 = (seed + _P2) & _M32
        v3 = seed & _M32
        v4 = (seed - _P1) & _M32
        while i + 16 <= n:
            vs = []
            for j, v in enumerate((v1, v2, v3, v4)):
                lane = int.from_bytes(data[i + 4 * j : i + 4 * j + 4], "little")
                vs.append((_rotl((v + lane * _P2) & _M32, 13) * _P1) & _M32)
            v1, v2, v3, v4 = vs
            i += 16
        h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _M32
    else:
        h = (seed + _P5) & _M32
    h = (h + n) & _M32
    while i + 4 <= n:
        h = (h + int.from_bytes(data[i : i + 4], "little") * _P3) & _M32
        h = (_rotl(h, 17) * _P4) & _M32
        i += 4
    while i < n:
        h = (h + data[i] * _P5) & _M32
        h = (_rotl(h, 11) * _P1) & _M32
        i += 1
    h ^= h >> 15
    h = (h * _P2) & _M32
    h ^= h >> 13
    h = (h * _P3) & _M32
    h ^= h >> 16
    return h


def fix_lz4_header_checksum(data) -> bytes:
    """Returns the frame with a correct header checksum byte (KAFKA-3160).

    Kafka 0.8/0.9 hashed the magic number together with the frame descriptor;
    the LZ4 spec hashes the descriptor only (FLG, BD and the optional content
    size / dictionary id).
    """
    data = bytes(data)
    if len(data) < 7 or data[:4] != _LZ4_MAGIC:
        return data
    flg = data[4]
    hc_pos = 6 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0)
    if len(data) <= hc_pos:
        return data
    hc = (xxh32(data[4:hc_pos]) >> 8) & 0xFF
    if data[hc_pos] == hc:
        return data
    return data[:hc_pos] + bytes([hc]) + data[hc_pos + 1 :]


def _snappy_declared_length(block) -> int:
    """The uncompressed length a raw snappy block declares in its varint preamble."""
    value = shift = 0
    for i in range(min(5, len(block))):
        byte = block[i]
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value
        shift += 7
    raise ValueError("snappy length preamble is malformed")


def _snappy_block(block, budget: int, limit: int) -> bytes:
    if _snappy_declared_length(block) > budget:
        raise DecompressedSizeError("snappy", limit)
    return snappy.uncompress(block)


def _snappy_decompress(data, limit: int) -> bytes:
    data = bytes(data)
    if len(data) >= 16 and data[:8] == _XERIAL_MAGIC:
        # xerial framing: 8-byte magic, int32 version, int32 min-compatible
        # version (ignored, as some writers got their byte order wrong), then
        # blocks of int32 big-endian length + raw snappy.
        out = []
        total = 0
        p = 16
        n = len(data)
        while p < n:
            if p + 4 > n:
                raise ValueError("truncated xerial block length")
            ln = int.from_bytes(data[p : p + 4], "big", signed=True)
            p += 4
            if ln < 0 or p + ln > n:
                raise ValueError("xerial block length out of range")
            block = _snappy_block(data[p : p + ln], limit - total, limit)
            total += len(block)
            out.append(block)
            p += ln
        return b"".join(out)
    return _snappy_block(data, limit, limit)


def _gzip_decompress(data, limit: int) -> bytes:
    # Several members may follow each other (RFC 1952), possibly padded with zero bytes as gzip allows.
    # Output comes in pieces of at most _STEP bytes, so a refused payload never holds much more than the limit.
    chunks = []
    total = 0
    rest = bytes(data)
    while True:
        d = zlib.decompressobj(31)
        pending = rest
        while True:
            room = min(_STEP, limit - total + 1)
            piece = d.decompress(pending, room)
            total += len(piece)
            if total > limit:
                raise DecompressedSizeError("gzip", limit)
            chunks.append(piece)
            if d.eof:
                break
            if len(piece) < room and not d.unconsumed_tail:
                raise ValueError("truncated gzip member")
            pending = d.unconsumed_tail
        rest = d.unused_data
        if not rest.strip(b"\0"):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _lz4_decompress(data, legacy_magic, limit: int) -> bytes:
    if legacy_magic == 0:
        data = fix_lz4_header_checksum(data)
    # One frame per batch, as the Java client reads it (bytes after the end mark are ignored there too).
    # The binding allocates max_length up front, so ask for a likely size first and grow from there.
    d = lz4.frame.LZ4FrameDecompressor()
    chunks = []
    total = 0
    piece = d.decompress(data, max_length=min(limit + 1, _STEP, max(1 << 16, 4 * len(data))))
    while True:
        total += len(piece)
        if total > limit:
            raise DecompressedSizeError("lz4", limit)
        chunks.append(piece)
        if d.eof:
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)
        if d.needs_input:
            raise ValueError("truncated lz4 frame")
        piece = d.decompress(b"", max_length=min(limit - total + 1, _STEP))


def _zstd_decompress(data, limit: int) -> bytes:
    # The binding cannot cap one call's output, so the input is fed in steps small enough that even the
    # densest encoding cannot overshoot the remaining allowance by much; concatenated frames are read too.
    view = memoryview(data)
    chunks = []
    total = 0
    pos = 0
    n = len(view)
    while pos < n:
        d = _zstd_d.decompressobj()
        while True:
            step = max(256, (limit - total) // _ZSTD_MAX_RATIO)
            out = d.decompress(view[pos : pos + step])
            pos = min(n, pos + step)
            total += len(out)
            if total > limit:
                raise DecompressedSizeError("zstd", limit)
            chunks.append(out)
            if d.eof:
                pos -= len(d.unused_data)
                break
            if pos >= n:
                raise ValueError("truncated zstd frame")
    return b"".join(chunks)


def decompress(codec: str | int, data, *, legacy_magic: int | None = None,
               max_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> bytes:
    """Decompresses one Kafka compressed payload.

    ``legacy_magic``: magic of the legacy wrapper message the payload comes
    from (None for a v2 batch); with 0, LZ4 frames with the KAFKA-3160 header
    checksum are accepted. Raises ProtocolDecodeError on corrupt input, and its
    subclass DecompressedSizeError when the output would exceed ``max_bytes``.
    """
    try:
        c = codec_id(codec)
    except ValueError as exc:
        raise ProtocolDecodeError(str(exc)) from None
    try:
        if c == NONE:
            return bytes(data)
        if c == GZIP:
            return _gzip_decompress(data, max_bytes)
        if c == SNAPPY:
            return _snappy_decompress(data, max_bytes)
        if c == LZ4:
            return _lz4_decompress(data, legacy_magic, max_bytes)
        return _zstd_decompress(data, max_bytes)
    except ProtocolDecodeError:
        raise
    except Exception as exc:  # each library has its own error types
        raise ProtocolDecodeError(f"corrupt {CODEC_NAMES[c]} data: {type(exc).__name__}: {exc}") from exc
