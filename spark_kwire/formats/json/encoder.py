"""Encoding an Arrow column (a Spark struct column, for Kafka's ``value``) as plain JSON text, as ``to_json`` writes
it (``json_text/kernels/encode.py`` says how each type is written).

    encoder = JsonEncoder(JsonOptions.parse({"timeZone": "Europe/Paris"}, WRITE_OPTIONS))
    encoder.check(arrow_type)                      # TypeMismatchError for a type to_json has no text for
    text = encoder.encode(struct_array).values     # binary column: UTF-8 JSON per row, null for a null row
"""

from __future__ import annotations

import numpy as np

from .. import kernels as _kernels
from ..contract.encoding import FramedEncoder, values_size
from ..json_text.tables import number_texts
from .encode_program import JsonEncodeProgram
from .options import JsonOptions
from ..json_text.patterns import compile_pattern
from ..json_text.kernels.encode import (
    HEX_UPPER, JSON_ENCODE_FRAME_WORDS, WO_DATE_PATTERN, WO_NTZ_PATTERN, WO_TS_PATTERN, WOPT_WORDS
)
from ..json_text.patterns import FIELDS_SIZE
from .zones import zone_table

__all__ = ["JsonEncoder"]

DEFAULT_TIMESTAMP_FORMAT = "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"
DEFAULT_DATE_FORMAT = "yyyy-MM-dd"
DEFAULT_LOCAL_TIMESTAMP_FORMAT = "yyyy-MM-dd'T'HH:mm:ss[.SSS]"


class JsonEncoder(FramedEncoder):
    """Writes Arrow values as ``to_json`` does, with ``options`` (timestampFormat, dateFormat, timeZone,
    ignoreNullFields)."""

    def __init__(self, options: JsonOptions | None = None) -> None:
        self.options = options or JsonOptions()
        super().__init__(b"")
        programs: list[int] = []
        self.wopts = np.zeros(WOPT_WORDS, dtype=np.int64)
        for slot, pattern, date_only in (
                (WO_TS_PATTERN, self.options.timestamp_format or DEFAULT_TIMESTAMP_FORMAT, False),
                (WO_DATE_PATTERN, self.options.date_format or DEFAULT_DATE_FORMAT, True),
                (WO_NTZ_PATTERN, DEFAULT_LOCAL_TIMESTAMP_FORMAT, False)):
            self.wopts[slot] = len(programs)
            programs.extend(compile_pattern(pattern, date_only))
        self.patterns = np.array(programs, dtype=np.int64)
        self.zone_at, self.zone_offsets = zone_table(self.options.time_zone)

    def _new_program(self, layout) -> JsonEncodeProgram:
        return JsonEncodeProgram(layout, self.options.ignore_null_fields)

    def _rows_runner(self, program, columns, failfast, offsets, valid, err_code, err_node):
        vals, props, consts = program.arrays()
        text_base, text_offsets, text_bytes = number_texts(columns, program.text_nodes)
        stack = np.zeros((program.depth + 2, JSON_ENCODE_FRAME_WORDS), dtype=np.int64)
        bstack = np.zeros(1, dtype=np.int64)  # (checks JSON-text strings, which to_json has not)
        dig = np.zeros(64, dtype=np.uint8)
        fields = np.zeros(FIELDS_SIZE, dtype=np.int64)
        encode_rows = _kernels.current().json_encode_rows

        def run_rows(row, out):
            return encode_rows(vals, props, consts, program.root, self.header, row, failfast, *columns.kernel_args(),
                               text_base, text_offsets, text_bytes, out, offsets, valid, stack, bstack, err_code,
                               err_node, HEX_UPPER, dig, self.wopts, self.patterns, fields, self.zone_at,
                               self.zone_offsets)

        names = len(consts) * 2
        return run_rows, 2 * (values_size(columns) + text_bytes.size) + len(columns.array) * (names + 32) + 64
