"""Constants shared by both kernel implementations (numba and pure Python) and their callers.

Error codes: kernels report a problem by returning one of ``E_*`` (``OK`` when none); the Python side
turns it into :class:`ProtocolDecodeError` with ``ERROR_MESSAGES[code]``.

Decode tables: the region table (int64, shape ``(R_ROWS, n_regions)``) describes each stretch of bytes
to decode, the output table (int64, shape ``(O_ROWS, capacity)``) receives one column per record. Two
2-d tables instead of ~20 1-d arrays: every array passed to a numba function costs reference counting,
about 150 ns per call for 20 arrays, which matters for batches of a single record.

Positions in the "virtual" address space of the decoder: ``pos < len(a)`` points into buffer ``a`` (the
fetched bytes), larger positions point into buffer ``b`` (the concatenated decompressed payloads) at
``pos - len(a)``.
"""

from __future__ import annotations

OK = 0
E_BATCH_LENGTH = 1
E_MAGIC = 2
E_CRC = 3
E_CODEC = 4
E_RECORD_COUNT = 5
E_VARINT = 6
E_RECORD_LENGTH = 7
E_FIELD_LENGTH = 8
E_RECORD_SIZE = 9
E_TRAILING = 10
E_LEGACY_SIZE = 11
E_LEGACY_NESTED = 12
E_LEGACY_INNER_MAGIC = 13
E_LEGACY_EMPTY = 14
E_LEGACY_TRUNCATED = 15
E_CAPACITY = 16
E_HEADER_KEY = 17
E_CONTROL = 18
E_LEGACY_NULL_WRAPPER = 19

ERROR_MESSAGES = {
    E_BATCH_LENGTH: "batch/message length is smaller than the minimum for its format",
    E_MAGIC: "unsupported magic byte",
    E_CRC: "checksum mismatch (corrupt batch)",
    E_CODEC: "unknown compression codec",
    E_RECORD_COUNT: "record count is negative or larger than the batch can hold",
    E_VARINT: "malformed varint",
    E_RECORD_LENGTH: "record length is invalid or points past the end of the batch",
    E_FIELD_LENGTH: "key/value/header length is invalid or points past the end of the record",
    E_RECORD_SIZE: "record length does not match the bytes of its fields",
    E_TRAILING: "record count does not match the records in the batch",
    E_LEGACY_SIZE: "legacy message size does not match its key and value",
    E_LEGACY_NESTED: "compressed legacy message contains a compressed inner message",
    E_LEGACY_INNER_MAGIC: "inner message magic differs from the wrapper's magic",
    E_LEGACY_EMPTY: "compressed legacy message has no inner messages",
    E_LEGACY_TRUNCATED: "truncated inner message in a compressed legacy message",
    E_CAPACITY: "more records than the batch headers declare",
    E_HEADER_KEY: "record header key is null",
    E_CONTROL: "malformed control record",
    E_LEGACY_NULL_WRAPPER: "compressed legacy message has a null value",
}

V2_HEADER_SIZE = 61
V2_MIN_RECORD_SIZE = 7  # length varint + attributes + 5 one-byte varints
LEGACY_MIN_SIZE = 26  # offset + size + crc + magic + attributes + key len + value len
INT64_MAX = 2**63 - 1

# kinds of decode regions
KIND_LEGACY0 = 0  # one uncompressed top-level magic-0 message
KIND_LEGACY1 = 1  # one uncompressed top-level magic-1 message
KIND_V2 = 2  # the records section of a v2 batch (in place or decompressed)
KIND_INNER0 = 3  # decompressed inner message set of a magic-0 wrapper
KIND_INNER1 = 4  # decompressed inner message set of a magic-1 wrapper

# ControlRecordType of a control batch, as scan_entries reports it
CTRL_ABORT = 0
CTRL_COMMIT = 1
CTRL_UNKNOWN = -1  # not a control batch, or a type other than abort/commit
CTRL_MALFORMED = -2
CTRL_UNPARSED = -3  # compressed control batch: parsed on the Python side

# rows of the region table
R_SRC, R_START, R_END, R_KIND, R_COUNT, R_BASE_OFFSET, R_BASE_TS, R_MAX_TS, R_TS_TYPE = range(9)
R_ROWS = 9
# rows of the output table
O_OFFSET, O_TS, O_TS_TYPE, O_KPOS, O_KLEN, O_VPOS, O_VLEN, O_HPOS, O_HCNT = range(9)
O_ROWS = 9
