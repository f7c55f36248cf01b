"""The record kernels compiled by numba, one file per pass.

Every kernel works on numpy arrays only (no Python object per record), bounds-checks every read against an
explicit end position, and reports problems by returning an error code (``layout.E_*``). Loops are bounded by
the input size: each record consumes at least one byte and every declared count is checked against the bytes
available before anything is allocated. Byte buffers are 1-d uint8 arrays, passed read-only (one numba
signature for every caller). ``pure`` holds the same functions in plain Python; ``kernels`` picks one.
"""

from .crc import crc32_range, crc32c_range
from .encode import encode_records, encoded_records_size, split_points
from .gather import gather_binary, header_fill, header_totals
from .intrinsics import HW_CRC32C
from .ints import read_varint, read_varlong, varint_size, write_varint
from .murmur2 import murmur2_hashes, murmur2_partitions
from .regions import decode_regions, decode_v2_regions
from .scan import control_type, count_entries, scan_entries
from .txn import txn_filter

__all__ = [
    "HW_CRC32C", "control_type", "count_entries", "crc32_range", "crc32c_range", "decode_regions", "decode_v2_regions",
    "encode_records", "encoded_records_size", "gather_binary", "header_fill", "header_totals", "murmur2_hashes",
    "murmur2_partitions", "read_varint", "read_varlong", "scan_entries", "split_points", "txn_filter", "varint_size",
    "write_varint",
]
