"""The test oracle: an obvious, slow record-set decoder and encoder (struct, Python ints, bytes slices).

Written independently of both kernel implementations (``records/jit`` and ``records/pure``), and shaped
differently (lists of records, not Arrow buffers), so the tests can check that all three agree.
"""

from __future__ import annotations

import struct
import zlib

import crc32c as _crc32c

from spark_kwire.protocol.records.compression import decompress


class RefDecodeError(Exception):
    pass


# --- varints ----------------------------------------------------------------
def ref_read_varint(data, pos: int) -> tuple[int, int]:
    """Kafka zig-zag varint (<= 5 bytes, value truncated to 32 bits)."""
    value = 0
    for i in range(5):
        if pos >= len(data):
            raise RefDecodeError("truncated varint")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << (7 * i)
        if not b & 0x80:
            value &= 0xFFFFFFFF
            return (value >> 1) ^ -(value & 1), pos
    raise RefDecodeError("varint too long")


def ref_read_varlong(data, pos: int) -> tuple[int, int]:
    """Kafka zig-zag varlong (<= 10 bytes, value truncated to 64 bits)."""
    value = 0
    for i in range(10):
        if pos >= len(data):
            raise RefDecodeError("truncated varlong")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << (7 * i)
        if not b & 0x80:
            value &= 0xFFFFFFFFFFFFFFFF
            return (value >> 1) ^ -(value & 1), pos
    raise RefDecodeError("varlong too long")


def ref_encode_varint(v: int) -> bytes:
    z = ((v << 1) ^ (v >> 63)) & 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def ref_crc32c(data) -> int:
    return _crc32c.crc32c(bytes(data))


def ref_crc32(data) -> int:
    return zlib.crc32(bytes(data))


# --- full record-set decoder ---------------------------------------------------
def _wrap(v: int) -> int:
    """int64 two's-complement wrap-around (as the kernels compute)."""
    return (v + 2**63) % 2**64 - 2**63


def _ref_v2_records(data, base_offset, base_ts, max_ts, ts_type, count):
    out = []
    p = 0
    for _ in range(count):
        length, p = ref_read_varint(data, p)
        if length < 6 or p + length > len(data):
            raise RefDecodeError("bad record length")
        rec = data[p : p + length]
        p += length
        q = 1
        tsd, q = ref_read_varlong(rec, q)
        od, q = ref_read_varint(rec, q)
        fields = []
        for _f in range(2):
            ln, q = ref_read_varint(rec, q)
            if ln < -1 or q + max(ln, 0) > len(rec):
                raise RefDecodeError("bad key/value length")
            fields.append(None if ln < 0 else bytes(rec[q : q + ln]))
            q += max(ln, 0)
        hc, q = ref_read_varint(rec, q)
        if hc < 0:
            raise RefDecodeError("negative header count")
        headers = []
        for _h in range(hc):
            kl, q = ref_read_varint(rec, q)
            if kl < 0 or q + kl > len(rec):
                raise RefDecodeError("bad header key")
            # header keys are Java Strings: malformed UTF-8 becomes U+FFFD
            hk = bytes(rec[q : q + kl]).decode("utf-8", "replace").encode("utf-8")
            q += kl
            vl, q = ref_read_varint(rec, q)
            if vl < -1 or q + max(vl, 0) > len(rec):
                raise RefDecodeError("bad header value")
            headers.append((hk, None if vl < 0 else bytes(rec[q : q + vl])))
            q += max(vl, 0)
        if q != len(rec):
            raise RefDecodeError("record size mismatch")
        ts = max_ts if ts_type == 1 else _wrap(base_ts + tsd)
        off = _wrap(base_offset + od)
        out.append((off, ts, ts_type, fields[0], fields[1], headers))
    if p != len(data):
        raise RefDecodeError("trailing bytes after the records")
    return out


def _ref_legacy_message(data, p, end, check_crc=True):
    if p + 12 > end:
        raise RefDecodeError("truncated legacy message")
    off, size = struct.unpack_from(">qi", data, p)
    if size < 14:
        raise RefDecodeError("legacy message too small")
    if p + 12 + size > end:
        raise RefDecodeError("truncated legacy message")
    mend = p + 12 + size
    crc, magic, attr = struct.unpack_from(">IbB", data, p + 12)
    if magic not in (0, 1):
        raise RefDecodeError("bad legacy magic")
    q = p + 18
    ts = -1
    if magic == 1:
        if size < 22:
            raise RefDecodeError("legacy message too small")
        (ts,) = struct.unpack_from(">q", data, q)
        q += 8
    (kl,) = struct.unpack_from(">i", data, q)
    q += 4
    if kl < -1 or q + max(kl, 0) + 4 > mend:
        raise RefDecodeError("bad legacy key length")
    key = None if kl < 0 else bytes(data[q : q + kl])
    q += max(kl, 0)
    (vl,) = struct.unpack_from(">i", data, q)
    q += 4
    if vl < -1 or q + max(vl, 0) != mend:
        raise RefDecodeError("legacy message size mismatch")
    value = None if vl < 0 else bytes(data[q : q + vl])
    if check_crc and zlib.crc32(bytes(data[p + 16 : mend])) != crc:
        raise RefDecodeError("legacy crc")
    return mend, off, magic, attr, ts, key, value


def ref_txn_filter(batches, aborted_transactions):
    """Java consumer's read_committed filter. ``batches``: list of dicts with
    magic, pid, last_offset, transactional, control, ctrl_abort (bool).
    Returns the list of booleans "batch aborted"."""
    pending = sorted(aborted_transactions, key=lambda t: t[1])
    aborted_pids = set()
    out = []
    for bt in batches:
        dropped = False
        if bt["magic"] == 2 and bt["pid"] >= 0:
            while pending and pending[0][1] <= bt["last_offset"]:
                aborted_pids.add(pending.pop(0)[0])
            if bt["control"]:
                if bt["ctrl_abort"]:
                    aborted_pids.discard(bt["pid"])
            elif bt["transactional"] and bt["pid"] in aborted_pids:
                dropped = True
        out.append(dropped)
    return out


def ref_decode_record_set(buf, *, start_offset, end_offset=None, read_committed=False, aborted_transactions=None):
    """Returns dict(records=[(offset, ts, ts_type, key, value, headers)],
    next_offset, bytes_decoded); raises RefDecodeError on corrupt input.
    ``headers`` is a list of (key bytes, value bytes|None), None for legacy."""
    data = bytes(buf)
    n = len(data)
    end = 2**63 - 1 if end_offset is None else end_offset
    entries = []
    p = 0
    while p + 17 <= n:
        base_offset, size = struct.unpack_from(">qi", data, p)
        magic = data[p + 16]
        minimum = {2: 49, 1: 22, 0: 14}.get(magic, 14)
        if size < minimum:
            raise RefDecodeError("batch too small")
        if p + 12 + size > n:
            break
        if magic > 2:
            raise RefDecodeError("bad magic")
        entries.append((p, 12 + size, magic, base_offset))
        p += 12 + size
    bytes_decoded = p
    batches = []
    for p, size, magic, base_offset in entries:
        blob = data[p : p + size]
        if magic == 2:
            (crc, attr, last_delta, base_ts, max_ts, pid, _epoch, _seq, count) = struct.unpack_from(
                ">Ihiqqqhii", blob, 17
            )
            codec = attr & 7
            if codec > 4:
                raise RefDecodeError("codec")
            if count < 0 or (codec == 0 and count * 7 > size - 61):
                raise RefDecodeError("count")
            if _crc32c.crc32c(blob[21:]) != crc:
                raise RefDecodeError("crc")
            batches.append(
                dict(kind="v2", magic=2, blob=blob, attr=attr, codec=codec, base_offset=base_offset,
                     last_offset=_wrap(base_offset + last_delta), first_offset=base_offset, base_ts=base_ts, max_ts=max_ts,
                     pid=pid, count=count, control=bool(attr & 0x20), transactional=bool(attr & 0x10))
            )
        else:
            crc, _m, attr = struct.unpack_from(">IbB", blob, 12)
            if attr & 7 > 3:
                raise RefDecodeError("codec")
            if zlib.crc32(blob[16:]) != crc:
                raise RefDecodeError("crc")
            batches.append(
                dict(kind="legacy", magic=magic, blob=blob, attr=attr, codec=attr & 7, base_offset=base_offset,
                     last_offset=base_offset, first_offset=base_offset if attr & 7 == 0 else -(2**63),
                     pid=-1, control=False, transactional=False)
            )
    if not batches:
        return dict(records=[], next_offset=start_offset, bytes_decoded=0)
    nxt = max(batches[-1]["last_offset"] + 1, start_offset)
    if nxt > end:
        nxt = max(end, start_offset)

    def in_range(bt):
        return bt["last_offset"] >= start_offset and bt["first_offset"] < end and not bt["control"]

    def payload(bt):
        if bt["kind"] == "v2":
            raw = bt["blob"][61:]
            return raw if bt["codec"] == 0 else decompress(bt["codec"], raw)
        _, _, _, _, _, _, value = _ref_legacy_message(bt["blob"], 0, len(bt["blob"]), check_crc=False)
        if value is None:
            raise RefDecodeError("null wrapper value")
        return decompress(bt["codec"], value, legacy_magic=bt["magic"])

    dropped = [False] * len(batches)
    if read_committed and aborted_transactions:
        for bt in batches:
            bt["ctrl_abort"] = False
            if bt["control"] and bt["pid"] >= 0:
                d = payload(bt)  # compressed control batches are parsed after decompression
                if bt["count"] > 0:
                    try:
                        length, q0 = ref_read_varint(d, 0)
                        if length < 6 or q0 + length > len(d):
                            raise RefDecodeError("control record length")
                        rec = d[q0 : q0 + length]
                        _, q = ref_read_varlong(rec, 1)
                        _, q = ref_read_varint(rec, q)
                        kl, q = ref_read_varint(rec, q)
                        if kl < 4 or q + kl > len(rec):
                            raise RefDecodeError("control key")
                        version, ctype = struct.unpack_from(">hh", rec, q)
                    except struct.error:
                        raise RefDecodeError("control key") from None
                    if version < 0:
                        raise RefDecodeError("control key")
                    bt["ctrl_abort"] = ctype == 0
        dropped = ref_txn_filter(batches, aborted_transactions)

    records = []
    for bt, drop in zip(batches, dropped):
        if drop or not in_range(bt):
            continue
        if bt["kind"] == "v2":
            if bt["count"] == 0 and bt["codec"] != 0:
                continue  # not decompressed (the Java client does not either)
            d = payload(bt)
            if bt["codec"] != 0 and bt["count"] * 7 > len(d):
                raise RefDecodeError("count")
            recs = _ref_v2_records(d, bt["base_offset"], bt["base_ts"], bt["max_ts"], (bt["attr"] >> 3) & 1, bt["count"])
        elif bt["codec"] == 0:
            _, off, magic, attr, ts, key, value = _ref_legacy_message(bt["blob"], 0, len(bt["blob"]), False)
            recs = [(off, ts, (attr >> 3) & 1 if magic == 1 else -1, key, value, None)]
        else:
            d = payload(bt)
            inner = []
            q = 0
            while q < len(d):
                q, off, magic, attr, ts, key, value = _ref_legacy_message(d, q, len(d))
                if magic != bt["magic"]:
                    raise RefDecodeError("inner magic")
                if attr & 7:
                    raise RefDecodeError("nested compression")
                inner.append((off, magic, attr, ts, key, value))
            if not inner:
                raise RefDecodeError("empty wrapper")
            last_rel = inner[-1][0]
            (wts,) = struct.unpack_from(">q", bt["blob"], 18) if bt["magic"] == 1 else (-1,)
            w_log_append = bt["magic"] == 1 and bt["attr"] & 0x08
            recs = []
            for off, magic, attr, ts, key, value in inner:
                if bt["magic"] == 1:
                    off = _wrap(bt["base_offset"] - last_rel + off)
                if magic == 0:
                    t, tt = -1, -1
                elif w_log_append:
                    t, tt = wts, 1
                else:
                    t, tt = ts, (attr >> 3) & 1
                recs.append((off, t, tt, key, value, None))
        records.extend(r for r in recs if start_offset <= r[0] < end)
    return dict(records=records, next_offset=nxt, bytes_decoded=bytes_decoded)


# --- encoder -------------------------------------------------------------------
def ref_encode_records(values, keys, timestamps, headers, base_ts) -> bytes:
    """Records section of a v2 batch (offset deltas 0..n-1). ``headers``: per
    record a list of (key bytes, value bytes|None)."""
    out = bytearray()
    for i, value in enumerate(values):
        key = keys[i]
        body = bytearray(b"\x00")
        body += ref_encode_varint(timestamps[i] - base_ts)
        body += ref_encode_varint(i)
        for f in (key, value):
            if f is None:
                body += ref_encode_varint(-1)
            else:
                body += ref_encode_varint(len(f)) + f
        hs = headers[i] or []
        body += ref_encode_varint(len(hs))
        for hk, hv in hs:
            body += ref_encode_varint(len(hk)) + hk
            body += ref_encode_varint(-1) if hv is None else ref_encode_varint(len(hv)) + hv
        out += ref_encode_varint(len(body)) + body
    return bytes(out)


def ref_split_points(sizes_fn, n, max_bytes):
    """Greedy cut; ``sizes_fn(i, first)`` = encoded size of record i in a
    batch starting at ``first``."""
    bounds = [0]
    first = 0
    size = 61
    i = 0
    while i < n:
        rs = sizes_fn(i, first)
        if i > first and size + rs > max_bytes:
            bounds.append(i)
            first = i
            size = 61
            continue
        size += rs
        i += 1
    if n:
        bounds.append(n)
    return bounds
