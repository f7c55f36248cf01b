"""What the formats' encoders share: one encode program per Arrow input type, and the loop that runs a format's
row kernel over a column, growing the output buffer when it fills and turning a FAILFAST stop into an error."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pyarrow as pa

from .. import kernels as _kernels
from ..columns.output import Layout
from ..errors import EncodeError
from ..columns.input import InputColumns, canonical_type
from .results import FAILFAST, EncodeResult, binary_column, check_mode
from ..vm.codes import E_OK, message
from ..vm.rows import ROWS_FULL, ROWS_STOPPED

# (start row, output buffer) -> (next row, outcome), as vm/rows.py says: done, the buffer is full, stopped on an error
RowsRunner = Callable[[int, np.ndarray], tuple[int, int]]


class FramedEncoder:
    """Base of the Avro, Protobuf and JSON Schema encoders, made with ``header`` (the Confluent framing of the
    schema id each value starts with). A subclass defines ``_new_program(layout)`` and ``_rows_runner(...)``: a
    function calling its kernel over rows, and the size of the first output buffer."""

    def __init__(self, header: bytes) -> None:
        self.header = np.frombuffer(header, dtype=np.uint8)
        self._programs: dict[pa.DataType, object] = {}

    def check(self, arrow_type: pa.DataType):
        """The program for values of ``arrow_type``; :class:`TypeMismatchError` if they cannot be written."""
        t = canonical_type(arrow_type)
        program = self._programs.get(t)
        if program is None:
            program = self._programs[t] = self._new_program(Layout(pa.field("value", t, nullable=True)))
        return program

    def encode(self, values: pa.Array | pa.ChunkedArray, mode: str = FAILFAST) -> EncodeResult:
        check_mode(mode)
        program = self.check(values.type)
        columns = InputColumns(values)
        n = len(columns.array)
        offsets = np.zeros(n + 1, dtype=np.int64)
        valid = np.zeros(n, dtype=np.uint8)
        err_code = np.zeros(n, dtype=np.int32)
        err_at = np.full(n, -1, dtype=np.int64)  # where in the program each failed row stopped
        run_rows, out_size = self._rows_runner(program, columns, mode == FAILFAST, offsets, valid, err_code, err_at)
        out = np.empty(out_size, dtype=np.uint8)
        row = 0
        with _kernels.current().quiet():
            while True:
                row, outcome = run_rows(row, out)
                if outcome != ROWS_FULL:
                    break
                bigger = np.empty(2 * out.size + 1024, dtype=np.uint8)
                bigger[:offsets[row]] = out[:offsets[row]]
                out = bigger
        if outcome == ROWS_STOPPED:
            bad = int(row) - 1
            raise EncodeError(bad, message(int(err_code[bad])), program.path_at(int(err_at[bad])))
        return EncodeResult(binary_column(out, offsets, valid), err_code != E_OK, err_code, err_at, program)

    def _new_program(self, layout: Layout):
        raise NotImplementedError

    def _rows_runner(self, program, columns: InputColumns, failfast: bool, offsets, valid, err_code,
                     err_at) -> tuple[RowsRunner, int]:
        raise NotImplementedError


def values_size(columns: InputColumns) -> int:
    """Bytes of the column's value buffers (what its encoding is sized from)."""
    return columns.a64.nbytes + columns.a32.nbytes + columns.a8.nbytes + columns.abytes.nbytes
