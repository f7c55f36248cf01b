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
import pyarrow as pa

from .. import kernels as _kernels
from ..errors import EncodeError
from ..framing import confluent_header
from ..results import FAILFAST, PERMISSIVE, EncodeResult, binary_column, check_mode
from ..input_columns import InputColumns, canonical_type
from ..columns import Layout
from ..vm.codes import E_OK, message
from .encode_program import EncodeProgram
from .model import Schema
from .parser import parse_schema
from .vm_encode import FRAME_WORDS

__all__ = ["FAILFAST", "PERMISSIVE", "AvroEncoder", "EncodeResult"]


class AvroEncoder:
    """Writes Arrow values as Avro of ``schema``, each framed with ``schema_id``."""

    def __init__(self, schema: str | dict | list | Schema, schema_id: int, references=()) -> None:
        self.schema = schema if isinstance(schema, Schema) else parse_schema(schema, references)
        self.schema_id = schema_id
        self.header = np.frombuffer(confluent_header(schema_id), dtype=np.uint8)
        self._programs: dict[pa.DataType, EncodeProgram] = {}

    def check(self, arrow_type: pa.DataType) -> EncodeProgram:
        """The program for values of ``arrow_type``; :class:`TypeMismatchError` if they cannot be written."""
        t = canonical_type(arrow_type)
        program = self._programs.get(t)
        if program is None:
            program = self._programs[t] = EncodeProgram(self.schema, Layout(pa.field("value", t, nullable=True)))
        return program

    def encode(self, values: pa.Array | pa.ChunkedArray, mode: str = FAILFAST) -> EncodeResult:
        check_mode(mode)
        program = self.check(values.type)
        columns = InputColumns(values)
        n = len(columns.array)
        code, tables, consts = program.arrays()
        offsets = np.zeros(n + 1, dtype=np.int64)
        valid = np.zeros(n, dtype=np.uint8)
        err_code = np.zeros(n, dtype=np.int32)
        err_pc = np.full(n, -1, dtype=np.int64)
        stack = np.zeros((program.max_depth + 2, FRAME_WORDS), dtype=np.int64)
        scratch = np.zeros(1, dtype=np.int64)
        size = columns.a64.nbytes + columns.a32.nbytes + columns.a8.nbytes + columns.abytes.nbytes
        out = np.empty(size + n * (len(self.header) + 8) + 64, dtype=np.uint8)
        k = _kernels.current()
        row = 0
        with k.quiet():
            while True:
                row, outcome = k.encode_rows(code, tables, consts, program.entry, self.header, row, mode == FAILFAST,
                                             *columns.kernel_args(), out, offsets, valid, stack, err_code, err_pc,
                                             scratch, scratch.view(np.float64))
                if outcome != 1:
                    break
                bigger = np.empty(2 * out.size + 1024, dtype=np.uint8)
                bigger[:offsets[row]] = out[:offsets[row]]
                out = bigger
        if outcome == 2:
            bad = int(row) - 1
            raise EncodeError(bad, message(int(err_code[bad])), program.path_at(int(err_pc[bad])))
        array = binary_column(out, offsets, valid)
        return EncodeResult(array, err_code != E_OK, err_code, err_pc, program)
