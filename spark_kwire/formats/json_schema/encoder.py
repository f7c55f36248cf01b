"""Encoding an Arrow column (a Spark struct column, for Kafka's ``value``) as Confluent-framed JSON.

    encoder = JsonSchemaEncoder(schema, schema_id=42)
    encoder.check(arrow_type)                     # TypeMismatchError up front, naming field and types
    framed = encoder.encode(struct_array).values  # magic byte, schema id, UTF-8 JSON per row

``encode_program.py`` says which Arrow types fit which schema types. A null row becomes a null value (a
tombstone). A row that cannot be written fails the batch naming the row and field (FAILFAST), or becomes a null
value reported in ``errors`` (PERMISSIVE).
"""

from __future__ import annotations

import numpy as np

from .. import kernels as _kernels
from ..contract.encoding import FramedEncoder, values_size
from ..framing import confluent_header
from ..json_text.kernels.encode import JSON_ENCODE_FRAME_WORDS
from ..json_text.patterns import FIELDS_SIZE
from .encode_program import JsonEncodeProgram
from .model import JType, parse_json_schema
from ..json_text.kernels.write import HEX_LOWER

__all__ = ["JsonSchemaEncoder"]
_MAX_DEPTH = 1000
_NO_DIGITS = np.zeros(1, dtype=np.uint8)


class JsonSchemaEncoder(FramedEncoder):
    """Writes Arrow values as JSON of ``schema`` (JSON Schema text or value, or a registry schema; ``references``:
    the schemas its ``$ref`` names), each framed with ``schema_id``."""

    def __init__(self, schema, schema_id: int, references=()) -> None:
        self.schema: JType = schema if isinstance(schema, JType) else parse_json_schema(schema, references)
        self.schema_id = schema_id
        super().__init__(confluent_header(schema_id))

    def _new_program(self, layout) -> JsonEncodeProgram:
        return JsonEncodeProgram(self.schema, layout)

    def _rows_runner(self, program, columns, failfast, offsets, valid, err_code, err_node):
        vals, props, consts = program.arrays()
        text_base, text_offsets, text_bytes = program.text_column(columns)
        stack = np.zeros((program.depth + 2, JSON_ENCODE_FRAME_WORDS), dtype=np.int64)
        bstack = np.zeros(_MAX_DEPTH, dtype=np.int64)
        unused = np.zeros(FIELDS_SIZE, dtype=np.int64)  # (what only to_json's leaves use)
        json_encode_rows = _kernels.current().json_encode_rows

        def run_rows(row, out):
            return json_encode_rows(vals, props, consts, program.root, self.header, row, failfast,
                                    *columns.kernel_args(), text_base, text_offsets, text_bytes, out, offsets, valid,
                                    stack, bstack, err_code, err_node, HEX_LOWER, _NO_DIGITS, unused, unused, unused,
                                    unused, unused)

        return run_rows, (2 * (values_size(columns) + text_bytes.size) + len(columns.array) * (len(self.header) + 16)
                          + 64)
