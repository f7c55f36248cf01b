"""How every format's kernels begin and end a row: the bookkeeping around a record that the decoders and
encoders share, so that a format's row loop holds only its own record call.

A decoding kernel, per row: the framing status says whether the record runs; after it, :func:`end_decoded_row`
keeps the row, or rolls it back (``vm/column_writes.py``) and makes it a null row noting the error (code and
where: an instruction, a node, a field, as the format reports it), or stops for a full region (the caller
grows it and resumes at that row) or after the first error (FAILFAST). An encoding kernel, per row:
:func:`open_encoded_row` writes the header (a null row writes nothing: a null value), the format writes the
value, and :func:`close_encoded_row` ends the row's value in ``offsets`` / ``valid``, or empties a failed one
noting its error. They run for every row: numba puts them into each format's loop (``INLINE``); as calls (a
dozen arrays passed) they cost Avro's decoding a quarter to a third of its speed. Outcomes (the kernels' second
return value): ``GO_ON`` between rows, then ``ROWS_DONE``, ``ROWS_FULL`` or ``ROWS_STOPPED``.
"""

from __future__ import annotations

import numpy as np

from .bytes_out import write_bytes
from .codes import E_OK, E_OVERFLOW, ROW_NULL
from .column_writes import pad, rewind
from .slots import S_VALID

GO_ON = -1  # the row is settled: on to the next
ROWS_DONE = 0
ROWS_FULL = 1  # an output region is full: grow it, resume at the row returned
ROWS_STOPPED = 2  # stopped after a failed row (stop on error): the row returned is the one after it


def is_null(state, a8, node, idx):
    """Whether element ``idx`` of an input column node is null."""
    vb = state[node, S_VALID]
    return vb >= 0 and a8[vb + idx] == 0


def end_decoded_row(row, status, code, where, stop_on_error, state, pad_nodes, a64, a32, a8, out, err_code,
                    err_where):
    """(next row, outcome) after row ``row``: ``status`` is its framing status, ``code`` the record's outcome (the
    status itself when the record did not run), ``where`` what the format reports with an error. A failed or
    null row becomes a null row of the root node (0); a record that ran and failed is rolled back first."""
    if code == E_OK:
        return row + 1, GO_ON
    if status == E_OK:
        rewind(state, a32, row)
        if code == E_OVERFLOW:
            return row, ROWS_FULL
    if code != ROW_NULL:
        err_code[row] = code
        err_where[row] = where
    pad(state, pad_nodes, a64, a32, a8, out, 0)
    if stop_on_error and code != ROW_NULL:
        return row + 1, ROWS_STOPPED
    return row + 1, GO_ON


def open_encoded_row(state, a8, row, header, out, pos, cap):
    """(code, where, position) of row ``row`` about to be encoded at ``out[pos]``: E_OK with the header written,
    ROW_NULL for a null row (nothing written), E_OVERFLOW when the header does not fit."""
    if is_null(state, a8, 0, row):
        return ROW_NULL, np.int64(-1), pos
    after = write_bytes(out, pos, cap, header, 0, header.shape[0])
    if after < 0:
        return E_OVERFLOW, np.int64(-1), pos
    return E_OK, np.int64(-1), after


def close_encoded_row(row, code, where, pos, stop_on_error, offsets, valid, err_code, err_where):
    """(position, next row, outcome) after row ``row``, begun at ``offsets[row]`` and ended at ``pos`` with
    ``code``. A null or failed row is an empty, not ``valid`` value; a failed one notes its code and ``where``."""
    start = offsets[row]
    if code == E_OK:
        valid[row] = 1
        offsets[row + 1] = pos
        return pos, row + 1, GO_ON
    if code == E_OVERFLOW:
        return start, row, ROWS_FULL
    valid[row] = 0
    offsets[row + 1] = start
    if code == ROW_NULL:
        return start, row + 1, GO_ON
    err_code[row] = code
    err_where[row] = where
    return start, row + 1, (ROWS_STOPPED if stop_on_error else GO_ON)


KERNELS = ("is_null", "end_decoded_row", "open_encoded_row", "close_encoded_row")
INLINE = ("end_decoded_row", "open_encoded_row", "close_encoded_row")
