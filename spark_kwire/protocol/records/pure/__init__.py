"""The record kernels in plain Python: the fallback when numba is missing, fails to import, or
``KWIRE_NO_NUMBA`` asks for it. Same functions, arguments and results as ``jit``, file for file; per-record
work runs in the interpreter (with numpy for whole-array steps), so it is many times slower: see docs/performance.md.
"""

from .crc import HW_CRC32C, crc32_range, crc32c_range
from .encode import encode_records, encoded_records_size, split_points
from .gather import gather_binary, header_fill, header_totals
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
