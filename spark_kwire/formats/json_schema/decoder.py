"""Decoding a column of Confluent-framed JSON values (magic byte, schema id, UTF-8 JSON) into one Arrow column
shaped by a JSON Schema (``spark_types.py`` says how).

    decoder = JsonSchemaDecoder(reader_schema, references)   # decoder.arrow_type is known before any data
    frames = parse_confluent(values)
    for schema_id in decoder.missing_schema_ids(frames):
        decoder.add_writer_schema(schema_id, registry_lookup(schema_id))
    result = decoder.decode(frames, mode="PERMISSIVE")

JSON carries its own structure, so every row is read with the reader's schema whatever its writer schema
was (a writer schema is only noted as known); the values are not validated against the schema, but a value
that does not fit its Spark type (a string where the schema says integer, a fraction for an integer, a
required property missing, malformed JSON) is that row's error: FAILFAST raises :class:`DecodeError`,
PERMISSIVE makes the row null and reports it. A null value (a tombstone) is a null row.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .. import kernels as _kernels
from ..columns.output import Layout, OutputColumns
from ..contract.decoding import raise_if_stopped, run_decode
from ..framing import Frames, parse_confluent, program_index
from ..contract.results import FAILFAST, DecodeResult, check_mode
from ..vm.codes import E_OK
from ..vm.slots import S_BASE
from .model import JType, parse_json_schema
from .program import JsonProgram
from .spark_types import arrow_field
from .kernels.decode import JSON_FRAME_WORDS

_MAX_DEPTH = 1000  # nesting of JSON skipped (unknown properties, JSON-text values)


class JsonSchemaDecoder:
    """Decodes Confluent-framed JSON into the Arrow type kwire gives ``reader_schema`` (JSON Schema text or value,
    or a registry schema; ``references``: the schemas its ``$ref`` names, name -> schema)."""

    def __init__(self, reader_schema, references=()) -> None:
        self.reader: JType = reader_schema if isinstance(reader_schema, JType) else \
            parse_json_schema(reader_schema, references)
        self.arrow_field = arrow_field(self.reader)
        self.layout = Layout(self.arrow_field)
        self.program = JsonProgram(self.reader, self.layout)
        self._known: set[int] = set()
        self._items_hint: dict[int, float] | None = None
        self._bytes_hint: dict[int, float] | None = None

    @property
    def arrow_type(self) -> pa.DataType:
        return self.arrow_field.type

    def add_writer_schema(self, schema_id: int, writer_schema=None, references=()) -> None:
        """Makes rows framed with ``schema_id`` decodable (JSON is read with the reader's schema; the writer's is
        parsed only to check that it is a JSON Schema)."""
        if writer_schema is not None and schema_id not in self._known:
            parse_json_schema(writer_schema, references)
        self._known.add(int(schema_id))

    def known_schema_ids(self) -> list[int]:
        return sorted(self._known)

    def missing_schema_ids(self, frames: Frames | pa.Array) -> list[int]:
        if not isinstance(frames, Frames):
            frames = parse_confluent(frames)
        return [i for i in frames.schema_ids() if i not in self._known]

    def decode(self, values: Frames | pa.Array | pa.ChunkedArray, mode: str = FAILFAST) -> DecodeResult:
        check_mode(mode)
        frames = values if isinstance(values, Frames) else parse_confluent(values)
        _, status = program_index(frames, np.array(sorted(self._known), dtype=np.int64))
        n = len(frames)
        vals, props, hashes, consts = self.program.arrays()
        columns = OutputColumns(self.layout, n, self._items_hint, self._bytes_hint, input_bytes=frames.data.size)
        ok = status == E_OK
        longest = int((frames.end - frames.start)[ok].max()) if ok.any() else 0
        slots = np.zeros(len(self.program.props) + 1, dtype=np.int64)
        stack = np.zeros((self.program.depth + 2, JSON_FRAME_WORDS), dtype=np.int64)
        bstack = np.zeros(_MAX_DEPTH, dtype=np.int64)
        deferred = np.zeros((64 + n // 16, 4), dtype=np.int64)
        counters = np.zeros(2, dtype=np.int64)
        scratch8 = np.zeros(longest + 64, dtype=np.uint8)
        out = np.zeros(4, dtype=np.int64)
        err_code = np.zeros(n, dtype=np.int32)
        err_node = np.full(n, -1, dtype=np.int64)
        json_decode_rows = _kernels.current().json_decode_rows
        scratch = [deferred]

        def call(row):
            return json_decode_rows(vals, props, hashes, consts, self.program.root, frames.data, frames.start,
                                    frames.end, status, row, mode == FAILFAST, *columns.kernel_args(), slots, stack,
                                    bstack, scratch[0], counters, out, err_code, err_node, scratch8)

        def grow_deferred():
            bigger = np.zeros((2 * scratch[0].shape[0], 4), dtype=np.int64)
            bigger[:scratch[0].shape[0]] = scratch[0]
            scratch[0] = bigger

        row, outcome = run_decode(call, columns, out, grow_deferred)
        raise_if_stopped(row, outcome, frames.schema_id, err_code, err_node, self.program)
        deferred = scratch[0]
        self._fill_deferred(columns, frames.data, deferred[:int(counters[0])])
        self._items_hint, self._bytes_hint = columns.usage()
        return DecodeResult(columns.to_arrow(0), err_code != E_OK, err_code, frames.schema_id, err_node, self.program)

    @staticmethod
    def _fill_deferred(columns: OutputColumns, data: np.ndarray, deferred: np.ndarray) -> None:
        """Doubles whose decimal text was too long to convert exactly in the kernel: Python's float() reads them
        (correctly rounded), written where the kernel left a placeholder."""
        for node, index, start, end in deferred.tolist():
            if node >= 0:
                columns.f64[int(columns.state[node, S_BASE]) + index] = float(data[start:end].tobytes())
