"""Decoding a column of Confluent-framed Avro values into one Arrow column shaped by a reader schema.

    decoder = AvroDecoder(reader_schema)            # decoder.arrow_type is known before any data
    frames = parse_confluent(values)                # schema ids and payload positions of every row
    for schema_id in decoder.missing_schema_ids(frames):
        decoder.add_writer_schema(schema_id, registry_lookup(schema_id))
    result = decoder.decode(frames, mode="PERMISSIVE")

Rows written under different writer schemas decode in one pass into the reader's shape (schema
resolution). FAILFAST raises :class:`DecodeError` for the first bad row (its index, schema id, what was
wrong, in which field); PERMISSIVE makes bad rows null and reports them in ``result.errors``. A null value
(a tombstone) is a null row, not an error.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .. import kernels as _kernels
from ..columns.output import Layout, OutputColumns
from ..contract.decoding import raise_if_stopped, run_decode
from ..framing import Frames, parse_confluent, program_index
from ..contract.results import FAILFAST, MODES, PERMISSIVE, DecodeResult, check_mode
from ..vm.codes import E_OK
from .model import Schema
from .parser import parse_schema
from .program import DecodeProgram
from .spark_types import arrow_type
from .kernels.decode import FRAME_WORDS

__all__ = ["FAILFAST", "PERMISSIVE", "MODES", "AvroDecoder", "DecodeResult"]


class AvroDecoder:
    """Decodes Confluent-framed Avro into the Arrow type spark-avro gives ``reader_schema``.

    ``reader_schema``: Avro schema JSON (text or value) or a parsed schema; ``references``: schema texts
    defining named types it uses (a registry's schema references); ``time_type``: read ``time-micros`` as
    Arrow time64 (Spark 4.1+ shows TIME), not int64 (Spark 4.0)."""

    def __init__(self, reader_schema: str | dict | list | Schema, references=(), time_type: bool = False) -> None:
        self.reader = reader_schema if isinstance(reader_schema, Schema) else parse_schema(reader_schema, references)
        self.arrow_field = pa.field("value", arrow_type(self.reader, time_type), nullable=True)
        self.layout = Layout(self.arrow_field)
        self.program = DecodeProgram(self.reader, self.layout)
        self._entries: dict[int, int] = {}  # schema id -> entry pc
        self._items_hint: dict[int, float] | None = None
        self._bytes_hint: dict[int, float] | None = None

    @property
    def arrow_type(self) -> pa.DataType:
        """The Arrow type of decoded values (a struct for a record schema); nullable."""
        return self.arrow_field.type

    def add_writer_schema(self, schema_id: int, writer_schema: str | dict | list | Schema, references=()) -> None:
        """Makes rows framed with ``schema_id`` decodable: resolves their writer schema against the reader
        (``ResolutionError`` names the field that cannot be read) and adds its program."""
        if schema_id in self._entries:
            return
        writer = writer_schema if isinstance(writer_schema, Schema) else parse_schema(writer_schema, references)
        self._entries[int(schema_id)] = self.program.add(writer)

    def known_schema_ids(self) -> list[int]:
        return sorted(self._entries)

    def missing_schema_ids(self, frames: Frames | pa.Array) -> list[int]:
        """The schema ids framed in the batch that no writer schema was added for."""
        if not isinstance(frames, Frames):
            frames = parse_confluent(frames)
        return [i for i in frames.schema_ids() if i not in self._entries]

    def decode(self, values: Frames | pa.Array | pa.ChunkedArray, mode: str = FAILFAST) -> DecodeResult:
        """Decodes every row; see the module's docstring for ``mode``."""
        check_mode(mode)
        frames = values if isinstance(values, Frames) else parse_confluent(values)
        ids = np.array(sorted(self._entries), dtype=np.int64)
        entries = np.array([self._entries[i] for i in ids] or [0], dtype=np.int64)
        which, status = program_index(frames, ids)
        n = len(frames)
        code, tables, consts = self.program.arrays()
        columns = OutputColumns(self.layout, n, self._items_hint, self._bytes_hint, input_bytes=frames.data.size)
        scratch32 = np.zeros(1, dtype=np.int32)
        stack = np.zeros((self.program.max_depth + 2, FRAME_WORDS), dtype=np.int64)
        out = np.zeros(4, dtype=np.int64)
        err_code = np.zeros(n, dtype=np.int32)
        err_pc = np.full(n, -1, dtype=np.int64)
        decode_rows = _kernels.current().decode_rows
        stop = mode == FAILFAST

        def call(row):
            return decode_rows(code, tables, consts, entries, which, frames.data, frames.start, frames.end, status, row,
                               stop, *columns.kernel_args(), stack, out, err_code, err_pc, scratch32,
                               scratch32.view(np.float32))

        row, outcome = run_decode(call, columns, out)
        raise_if_stopped(row, outcome, frames.schema_id, err_code, err_pc, self.program)
        self._items_hint, self._bytes_hint = columns.usage()
        return DecodeResult(columns.to_arrow(0), err_code != E_OK, err_code, frames.schema_id, err_pc, self.program)
