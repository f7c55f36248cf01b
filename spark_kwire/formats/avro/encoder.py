"""Encoding an Arrow column (a Spark struct column, for Kafka's ``value``) as Confluent-framed Avro.

    encoder = AvroEncoder(schema, schema_id=42)
    encoder.check(arrow_type)                    # TypeMismatchError up front, naming field and types
    framed = encoder.encode(struct_array).values # binary: magic byte, schema id, Avro payload per row

A null row becomes a null value (a Kafka tombstone). A row that cannot be written (a null where the schema
has none, a string that is no enum symbol) fails the batch naming the row and field (FAILFAST), or becomes
a null value reported in ``errors`` (PERMISSIVE).
"""

from __future__ import annotations

import numpy as np

from .. import kernels as _kernels
from ..contract.encoding import FramedEncoder, values_size
from ..framing import confluent_header
from ..contract.results import FAILFAST, PERMISSIVE, EncodeResult
from .encode_program import EncodeProgram
from .model import Schema
from .parser import parse_schema
from .kernels.encode import FRAME_WORDS

__all__ = ["FAILFAST", "PERMISSIVE", "AvroEncoder", "EncodeResult"]


class AvroEncoder(FramedEncoder):
    """Writes Arrow values as Avro of ``schema``, each framed with ``schema_id``."""

    def __init__(self, schema: str | dict | list | Schema, schema_id: int, references=()) -> None:
        self.schema = schema if isinstance(schema, Schema) else parse_schema(schema, references)
        self.schema_id = schema_id
        super().__init__(confluent_header(schema_id))

    def _new_program(self, layout) -> EncodeProgram:
        return EncodeProgram(self.schema, layout)

    def _rows_runner(self, program, columns, failfast, offsets, valid, err_code, err_pc):
        code, tables, consts = program.arrays()
        stack = np.zeros((program.max_depth + 2, FRAME_WORDS), dtype=np.int64)
        scratch = np.zeros(1, dtype=np.int64)
        encode_rows = _kernels.current().encode_rows

        def run_rows(row, out):
            return encode_rows(code, tables, consts, program.entry, self.header, row, failfast,
                               *columns.kernel_args(), out, offsets, valid, stack, err_code, err_pc, scratch,
                               scratch.view(np.float64))

        return run_rows, values_size(columns) + len(columns.array) * (len(self.header) + 8) + 64
