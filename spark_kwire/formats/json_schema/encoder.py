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
import pyarrow as pa

from .. import kernels as _kernels
from ..columns import Layout
from ..errors import EncodeError
from ..framing import confluent_header
from ..input_columns import InputColumns, canonical_type
from ..results import FAILFAST, EncodeResult, binary_column, check_mode
from ..vm.codes import E_OK, message
from .encode_program import JsonEncodeProgram
from .model import JType, parse_json_schema
from .vm_encode import JSON_ENCODE_FRAME_WORDS

__all__ = ["JsonSchemaEncoder"]
_MAX_DEPTH = 1000


class JsonSchemaEncoder:
    """Writes Arrow values as JSON of ``schema`` (JSON Schema text or value, or a registry schema; ``references``:
    the schemas its ``$ref`` names), each framed with ``schema_id``."""

    def __init__(self, schema, schema_id: int, references=()) -> None:
        self.schema: JType = schema if isinstance(schema, JType) else parse_json_schema(schema, references)
        self.schema_id = schema_id
        self.header = np.frombuffer(confluent_header(schema_id), dtype=np.uint8)
        self._programs: dict[pa.DataType, JsonEncodeProgram] = {}

    def check(self, arrow_type: pa.DataType) -> JsonEncodeProgram:
        """The program for values of ``arrow_type``; :class:`TypeMismatchError` if they cannot be written."""
        t = canonical_type(arrow_type)
        program = self._programs.get(t)
        if program is None:
            program = self._programs[t] = JsonEncodeProgram(self.schema, Layout(pa.field("value", t, nullable=True)))
        return program

    def encode(self, values: pa.Array | pa.ChunkedArray, mode: str = FAILFAST) -> EncodeResult:
        check_mode(mode)
        program = self.check(values.type)
        columns = InputColumns(values)
        n = len(columns.array)
        vals, props, consts = program.arrays()
        text_base, text_offsets, text_bytes = program.text_column(columns)
        offsets = np.zeros(n + 1, dtype=np.int64)
        valid = np.zeros(n, dtype=np.uint8)
        err_code = np.zeros(n, dtype=np.int32)
        err_node = np.full(n, -1, dtype=np.int64)
        stack = np.zeros((program.depth + 2, JSON_ENCODE_FRAME_WORDS), dtype=np.int64)
        bstack = np.zeros(_MAX_DEPTH, dtype=np.int64)
        size = columns.a64.nbytes + columns.a32.nbytes + columns.a8.nbytes + columns.abytes.nbytes + text_bytes.size
        out = np.empty(2 * size + n * (len(self.header) + 16) + 64, dtype=np.uint8)
        k = _kernels.current()
        row = 0
        with k.quiet():
            while True:
                row, outcome = k.json_encode_rows(vals, props, consts, program.root, self.header, row, mode == FAILFAST,
                                                  *columns.kernel_args(), text_base, text_offsets, text_bytes, out,
                                                  offsets, valid, stack, bstack, err_code, err_node)
                if outcome != 1:
                    break
                bigger = np.empty(2 * out.size + 1024, dtype=np.uint8)
                bigger[:offsets[row]] = out[:offsets[row]]
                out = bigger
        if outcome == 2:
            bad = int(row) - 1
            raise EncodeError(bad, message(int(err_code[bad])), program.path_at(int(err_node[bad])))
        return EncodeResult(binary_column(out, offsets, valid), err_code != E_OK, err_code, err_node, program)
