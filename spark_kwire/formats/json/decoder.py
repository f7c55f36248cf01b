"""Decoding a column of plain JSON text (Kafka values without framing) into the Arrow struct of a Spark schema, as
``from_json(CAST(value AS STRING), schema, options)`` gives it.

    decoder = JsonDecoder("id BIGINT, user STRUCT<name: STRING>", JsonOptions.parse({"timeZone": "UTC"}))
    result = decoder.decode(values, mode="PERMISSIVE")      # values: binary or string column

PERMISSIVE: a value that does not fit its type makes that field null and the row bad (``result.errors``), the
rest of it kept; malformed JSON (or a non-object) gives a row of nulls; either way the schema's corrupt-record
field (a STRING field named by ``columnNameOfCorruptRecord``, if the schema has one) holds the row's text. With
``rescuedDataColumn``, mismatches and unknown fields are kept as JSON in that (appended) field instead, and only
malformed rows are bad. FAILFAST raises :class:`DecodeError` for the first bad row. A null value, or one of only
whitespace, is a null row.
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..columns.output import OutputColumns
from ..contract.decoding import raise_if_stopped, run_decode
from ..errors import SchemaError
from ..contract.results import FAILFAST, DecodeResult, check_mode
from ..vm.codes import E_JSON_TIMESTAMP, E_OK, ROW_NULL
from ..vm.slots import K_LIST, K_MAP, S_BASE, S_LEN, S_VALID
from .options import JsonOptions
from ..json_text.patterns import compile_pattern
from .program import PlainJsonProgram
from .schema_text import parse_schema_text
from .kernels.decode import CTX_WORDS, FRAME_WORDS
from ..json_text.patterns import FIELDS_SIZE
from .kernels.values import (
    D_END, D_ESCAPED, D_INDEX, D_KIND, D_NODE, D_START, DEFERRED_WORDS, DF_DOUBLE, DF_FLOAT, DF_TIMESTAMP,
    O_DATE_PATTERN, O_RESCUE, O_TS_PATTERN, OPT_WORDS
)
from .zones import timestamp_in_python, zone_table

__all__ = ["JsonDecoder"]
_MAX_DEPTH = 1000  # Jackson's default nesting limit


class JsonDecoder:
    """Decodes plain JSON into the Arrow struct of ``schema`` (Arrow, or Spark DDL / StructType JSON text)."""

    def __init__(self, schema: pa.StructType | str, options: JsonOptions | None = None) -> None:
        self.options = options or JsonOptions()
        given = parse_schema_text(schema) if isinstance(schema, str) else schema
        corrupt = self.options.corrupt_column
        self.corrupt_index = given.get_field_index(corrupt)
        if self.corrupt_index >= 0 and not pa.types.is_string(given.field(self.corrupt_index).type):
            raise SchemaError(f"the corrupt-record field {corrupt!r} must be a STRING, not "
                              f"{given.field(self.corrupt_index).type} (columnNameOfCorruptRecord names it)")
        rescued = self.options.rescued_column
        if rescued is not None and given.get_field_index(rescued) >= 0:
            raise SchemaError(f"the schema has a field {rescued!r} already: rescuedDataColumn names a field kwire "
                              f"adds (choose another name)")
        fields = [f.with_nullable(True) for f in given] + ([pa.field(rescued, pa.string())] if rescued else [])
        self.arrow_type = pa.struct(fields)
        self.arrow_field = pa.field("value", self.arrow_type)
        self.program = PlainJsonProgram(given, skip=corrupt if self.corrupt_index >= 0 else None, rescue=rescued)
        self.layout = self.program.layout
        self.patterns, self.opts = self._patterns()
        self.zone_at, self.zone_offsets = zone_table(self.options.time_zone)
        self._items_hint = self._bytes_hint = None

    def _patterns(self) -> tuple[np.ndarray, np.ndarray]:
        programs: list[int] = []
        opts = np.zeros(OPT_WORDS, dtype=np.int64)
        for slot, pattern, date_only in ((O_TS_PATTERN, self.options.timestamp_format, False),
                                         (O_DATE_PATTERN, self.options.date_format, True)):
            opts[slot] = -1
            if pattern is not None:
                opts[slot] = len(programs)
                programs.extend(compile_pattern(pattern, date_only))
        opts[O_RESCUE] = int(self.options.rescued_column is not None)
        return np.array(programs or [0], dtype=np.int64), opts

    def decode(self, values: pa.Array | pa.ChunkedArray, mode: str = FAILFAST) -> DecodeResult:
        check_mode(mode)
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
        if pa.types.is_string(values.type) or pa.types.is_large_string(values.type) or pa.types.is_large_binary(
                values.type):
            values = values.cast(pa.binary())
        n = len(values)
        data, start, end, status = _spans(values)
        vals, props, hashes, consts = self.program.arrays()
        columns = OutputColumns(self.layout, n, self._items_hint, self._bytes_hint, input_bytes=data.size)
        longest = int((end - start).max()) if n else 0
        slots = np.zeros(len(self.program.props) + 1, dtype=np.int64)
        stack = np.zeros((self.program.depth + 2, FRAME_WORDS), dtype=np.int64)
        bstack = np.zeros(_MAX_DEPTH, dtype=np.int64)
        deferred = [np.zeros((64 + n // 64, DEFERRED_WORDS), dtype=np.int64)]
        ctx = np.zeros(CTX_WORDS, dtype=np.int64)
        scratch8 = np.zeros(2 * longest + 64, dtype=np.uint8)
        rescue8 = np.zeros(longest + 6 * self.program.names_bytes() + 64 if self.options.rescued_column else 1,
                           dtype=np.uint8)
        fields = np.zeros(FIELDS_SIZE, dtype=np.int64)
        tscratch = np.zeros(4 * longest + 128, dtype=np.uint8)  # dates' work, and values rewritten as text
        out = np.zeros(4, dtype=np.int64)
        err_code = np.zeros(n, dtype=np.int32)
        err_node = np.full(n, -1, dtype=np.int64)
        from .. import kernels as _kernels

        json_value_rows = _kernels.current().json_value_rows

        def call(row):
            return json_value_rows(vals, props, hashes, consts, self.program.root, data, start, end, status, row,
                                   mode == FAILFAST, self.options.flags, self.opts, self.patterns,
                                   self.program.rescue_node, *columns.kernel_args(), slots, stack, bstack,
                                   deferred[0], ctx, out, err_code, err_node, scratch8, rescue8, fields, tscratch,
                                   self.zone_at, self.zone_offsets)

        def grow_deferred():
            bigger = np.zeros((2 * deferred[0].shape[0], DEFERRED_WORDS), dtype=np.int64)
            bigger[:deferred[0].shape[0]] = deferred[0]
            deferred[0] = bigger

        row, outcome = run_decode(call, columns, out, grow_deferred)
        failed_late = self._finish_deferred(columns, data, deferred[0][:int(ctx[0])], err_code, err_node)
        if failed_late is not None and mode == FAILFAST and (outcome != 2 or failed_late < row - 1):
            row, outcome = failed_late + 1, 2
        raise_if_stopped(row, outcome, np.full(n, -1, dtype=np.int64), err_code, err_node, self.program)
        self._items_hint, self._bytes_hint = columns.usage()
        decoded = columns.to_arrow(0)
        bad = err_code != E_OK
        return DecodeResult(self._final(decoded, values, bad), bad, err_code, np.full(n, -1, dtype=np.int64),
                            err_node, self.program)

    def _finish_deferred(self, columns: OutputColumns, data: np.ndarray, deferred: np.ndarray, err_code: np.ndarray,
                         err_node: np.ndarray) -> int | None:
        """Values the kernel left to Python: long doubles (``float``), floats near a halfway point, timestamps
        naming a region or a time alone. A timestamp Spark would not read makes its field null and its row bad;
        the first such row, or None."""
        first_bad = None
        for node, index, start, end, kind, escaped in deferred.tolist():
            if node < 0:
                continue
            text = data[start:end].tobytes().decode("utf-8", "replace")
            if escaped:
                text = json.loads('"' + text.replace("\\'", "'") + '"')
            base = int(columns.state[node, S_BASE])
            if kind == DF_DOUBLE:
                columns.f64[base + index] = float(text)
            elif kind == DF_FLOAT:
                columns.f32[base + index] = _nearest_float32(text)
            elif kind == DF_TIMESTAMP:
                micros = timestamp_in_python(text, self.options.time_zone)
                if micros is not None:
                    columns.a64[base + index] = micros
                    continue
                columns.a8[int(columns.state[node, S_VALID]) + index] = 0
                row = _row_of(columns, node, index)
                if self.options.rescued_column is None and err_code[row] == E_OK:
                    err_code[row] = E_JSON_TIMESTAMP
                    err_node[row] = node
                    first_bad = row if first_bad is None else min(first_bad, row)
        return first_bad

    def _final(self, decoded: pa.StructArray, values: pa.Array, bad: np.ndarray) -> pa.Array:
        """The decoded struct as the schema has it: bytes and shorts narrowed, the corrupt-record field (the text
        of the bad rows) put back in its place."""
        children = [decoded.field(i) for i in range(decoded.type.num_fields)]
        target = [f for f in self.arrow_type if f.name != self.options.corrupt_column or self.corrupt_index < 0]
        children = [c if c.type.equals(f.type) else c.cast(f.type) for c, f in zip(children, target)]
        if self.corrupt_index >= 0:
            text = values.cast(pa.string()) if len(values) else pa.array([], pa.string())
            corrupt = pc.if_else(pa.array(bad), text, pa.scalar(None, pa.string()))
            children.insert(self.corrupt_index, corrupt)
        mask = decoded.is_null()
        return pa.StructArray.from_arrays(children, fields=list(self.arrow_type), mask=mask)


def _spans(values: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(bytes, start, end, status) of a binary column: status ROW_NULL for nulls, E_OK otherwise."""
    n = len(values)
    buffers = values.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int32, count=n + 1, offset=values.offset * 4).astype(np.int64) \
        if n else np.zeros(1, dtype=np.int64)
    data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None and n else np.zeros(1, np.uint8)
    status = np.zeros(n, dtype=np.int32)
    if values.null_count:
        status[values.is_null().to_numpy(zero_copy_only=False)] = ROW_NULL
    return data, offsets[:-1].copy(), offsets[1:].copy(), status


def _row_of(columns: OutputColumns, node: int, index: int) -> int:
    """The row that element ``index`` of ``node`` belongs to (up through the offsets of lists and maps)."""
    layout = columns.layout
    while node > 0:
        parent = layout.nodes[node].parent
        if layout.nodes[parent].kind in (K_LIST, K_MAP):
            base, count = int(columns.state[parent, S_BASE]), int(columns.state[parent, S_LEN])
            index = int(np.searchsorted(columns.a32[base:base + count + 1], index, side="right")) - 1
        node = parent
    return index


def _nearest_float32(text: str) -> float:
    """Java's ``Float.parseFloat``: the float nearest the decimal text (one rounding, not two through double)."""
    from decimal import Decimal

    x = np.float32(float(text))
    if not np.isfinite(x):
        return float(x)
    exact = Decimal(text.strip())
    candidates = [np.nextafter(x, np.float32(-np.inf)), x, np.nextafter(x, np.float32(np.inf))]
    return float(min(candidates, key=lambda c: (abs(Decimal(float(c)) - exact), int(np.float32(c).view(np.int32)) & 1)))
