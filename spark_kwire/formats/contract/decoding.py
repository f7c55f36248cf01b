"""What the formats' decoders share around their kernel: the loop that calls it until every row is done, growing
the output region (or the kernel's working memory) that filled up, and turning a FAILFAST stop into an error."""

from __future__ import annotations

from typing import Callable

import numpy as np

from .. import kernels as _kernels
from ..columns.output import OutputColumns
from ..errors import DecodeError
from ..vm.codes import message
from ..vm.rows import ROWS_FULL, ROWS_STOPPED
from ..vm.slots import ROOM_SCRATCH


def run_decode(call: Callable[[int], tuple[int, int]], columns: OutputColumns, out: np.ndarray,
               grow_scratch: Callable[[], None] | None = None) -> tuple[int, int]:
    """Calls ``call(row)`` (a format's decoding kernel from ``row``, reporting a full region in ``out``) until it
    is done or stopped; (next row, outcome) of its last call."""
    row = 0
    with _kernels.current().quiet():
        while True:
            row, outcome = call(row)
            if outcome != ROWS_FULL:
                return int(row), int(outcome)
            if int(out[1]) == ROOM_SCRATCH:
                grow_scratch()
            else:
                columns.grow(int(out[0]), int(out[1]), int(out[2]), int(row))


def raise_if_stopped(row: int, outcome: int, schema_ids: np.ndarray, err_code: np.ndarray, err_where: np.ndarray,
                     program) -> None:
    """Raises :class:`DecodeError` for the row a FAILFAST decode stopped after (``program.path_at`` names where)."""
    if outcome == ROWS_STOPPED:
        bad = row - 1
        raise DecodeError(bad, int(schema_ids[bad]), message(int(err_code[bad])),
                          program.path_at(int(err_where[bad])) if err_where[bad] >= 0 else "")
