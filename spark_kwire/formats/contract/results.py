"""What every payload format's decoder and encoder return, and the two error modes (``from_avro`` /
``from_protobuf`` name them): FAILFAST raises for the first bad row, PERMISSIVE makes bad rows null and reports
them. Formats share these so the data source handles all of them alike."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pyarrow as pa

from ..vm.codes import E_OK, message

FAILFAST = "FAILFAST"
PERMISSIVE = "PERMISSIVE"
MODES = (FAILFAST, PERMISSIVE)


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"mode={mode!r}: expected one of {', '.join(MODES)}")
    return mode


class _Paths(Protocol):
    def path_at(self, where: int) -> str: ...


class _RowErrors:
    """What a decode and an encode result say about their bad rows: ``errors`` marks them, ``error_codes``
    (``vm.codes``) and ``_paths`` (where in ``_program`` each failed, -1 for framing errors) say why."""

    errors: np.ndarray
    error_codes: np.ndarray
    _paths: np.ndarray
    _program: _Paths

    @property
    def error_count(self) -> int:
        return int(np.count_nonzero(self.errors))

    def describe(self, row: int) -> str:
        """Why ``row`` failed, with the field it was at; "" for a good row."""
        code = int(self.error_codes[row])
        if code == E_OK:
            return ""
        path = self._program.path_at(int(self._paths[row])) if self._paths[row] >= 0 else ""
        return message(code) + (f" (field {path})" if path else "")


@dataclass
class DecodeResult(_RowErrors):
    """``values``: the decoded column (the reader's Arrow type; null for null and bad rows). ``errors``: mask
    of the bad rows (keep their raw bytes from the input with it); ``error_codes`` (``vm.codes``) and
    :meth:`describe` say why."""

    values: pa.Array
    errors: np.ndarray  # bool
    error_codes: np.ndarray  # int32, 0 where fine
    schema_ids: np.ndarray  # int64, -1 where the framing could not be read
    _paths: np.ndarray  # int64: where in the program each failed row was (-1: framing errors)
    _program: _Paths


@dataclass
class EncodeResult(_RowErrors):
    """``values``: the framed values (binary; large_binary past 2 GiB), null for null rows and (PERMISSIVE) rows
    that could not be written, which ``errors`` marks and :meth:`describe` explains."""

    values: pa.Array
    errors: np.ndarray  # bool
    error_codes: np.ndarray  # int32
    _paths: np.ndarray
    _program: _Paths


def binary_column(out: np.ndarray, offsets: np.ndarray, valid: np.ndarray) -> pa.Array:
    """Values an encoder wrote (``out[offsets[i]:offsets[i+1]]``, null where not ``valid``) as an Arrow column."""
    n = valid.shape[0]
    total = int(offsets[n])
    nulls = n - int(np.count_nonzero(valid))
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None
    if total < 2**31:
        return pa.Array.from_buffers(pa.binary(), n, [bitmap, pa.py_buffer(offsets.astype(np.int32)),
                                                     pa.py_buffer(out[:total])], null_count=nulls)
    return pa.Array.from_buffers(pa.large_binary(), n, [bitmap, pa.py_buffer(offsets), pa.py_buffer(out[:total])],
                                 null_count=nulls)
