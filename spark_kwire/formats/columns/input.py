"""Arrow columns as compiled encoders read them (format-neutral): every node of an Arrow array's type laid
out in a few arenas, as ``columns.py`` does for output, indexed from 0 (slices are resolved here).

Types are first brought to the few an encoder reads (:func:`canonical_type`): 8/16-bit integers widen to
32 bits, large and view strings/binaries/lists become the plain ones, timestamps become microseconds,
fixed-size binary becomes binary. Each node's buffers are then copied once into the arenas: values,
validity bytes (only for nodes that hold nulls), offsets rebased to 0 with the children sliced to match.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .output import Layout
from ..vm.slots import (
    K_BINARY, K_BOOL, K_DEC128, K_F32, K_F64, K_I32, K_I64, K_LIST, K_MAP, K_NULL, K_STRUCT, N_SLOTS, S_BASE, S_CHILD,
    S_DATA_BASE, S_KIND, S_LEN, S_PARENT, S_VALID
)


def canonical_type(t: pa.DataType) -> pa.DataType:
    """The type an encoder reads values of ``t`` as (a cast that loses nothing). Every field becomes nullable:
    Arrow allows placeholders (nulls too) under a null struct even in a non-nullable field, which a cast to a
    non-nullable field refuses; whether a null may be written is the Avro schema's business, row by row."""
    types = pa.types
    if types.is_int8(t) or types.is_int16(t):
        return pa.int32()
    if types.is_large_string(t) or types.is_string_view(t):
        return pa.string()
    if types.is_large_binary(t) or types.is_binary_view(t) or types.is_fixed_size_binary(t):
        return pa.binary()
    if types.is_timestamp(t):
        return pa.timestamp("us", tz=t.tz)
    if types.is_time(t):
        return pa.time64("us")
    if types.is_duration(t):
        return pa.duration("us")
    if types.is_date64(t):
        return pa.date32()
    if types.is_decimal(t) and not types.is_decimal128(t):
        return pa.decimal128(t.precision, t.scale) if t.precision <= 38 else t
    if types.is_struct(t):
        return pa.struct([pa.field(f.name, canonical_type(f.type)) for f in t])
    if types.is_map(t):
        return pa.map_(pa.field(t.key_field.name, canonical_type(t.key_type), False),
                       pa.field(t.item_field.name, canonical_type(t.item_type)))
    if types.is_list(t) or types.is_large_list(t) or types.is_list_view(t) or types.is_large_list_view(t) \
            or types.is_fixed_size_list(t):
        return pa.list_(pa.field(t.value_field.name, canonical_type(t.value_type)))
    return t


def _validity(arr: pa.Array) -> np.ndarray | None:
    if arr.null_count == 0:
        return None
    if pa.types.is_null(arr.type):
        return np.zeros(len(arr), dtype=np.uint8)
    bits = np.unpackbits(_values(arr.buffers()[0], np.uint8, 0, (arr.offset + len(arr) + 7) // 8),
                         bitorder="little")
    return bits[arr.offset:arr.offset + len(arr)]


def _values(buf, dtype, start: int, count: int) -> np.ndarray:
    """``count`` values of ``dtype`` from element ``start`` of an Arrow buffer (whose size need not be a
    multiple of the element size)."""
    if count == 0 or buf is None:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(buf, dtype=dtype, count=start + count)[start:]


def _offsets(arr: pa.Array) -> np.ndarray:
    return _values(arr.buffers()[1], np.int32, arr.offset, len(arr) + 1)


class InputColumns:
    """An Arrow array (of a canonical type) laid out for an encoding kernel: ``state`` (``vm/slots.py``
    columns: kind, validity base or -1, values/offsets base, data base, length, child) and the arenas."""

    def __init__(self, array: pa.Array | pa.ChunkedArray) -> None:
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        target = canonical_type(array.type)
        if target != array.type:
            array = array.cast(target)
        self.array = array
        self.layout = Layout(pa.field("value", target, nullable=True))
        self.state = np.zeros((len(self.layout.nodes), N_SLOTS), dtype=np.int64)
        self._parts: dict[str, list[np.ndarray]] = {"a64": [], "a32": [], "a8": [], "abytes": []}
        self._used = {"a64": 0, "a32": 0, "a8": 0, "abytes": 0}
        self._add(0, array)
        self.a64 = self._join("a64", np.int64)
        self.a32 = self._join("a32", np.int32)
        self.a8 = self._join("a8", np.uint8)
        self.abytes = self._join("abytes", np.uint8)
        self.f64 = self.a64.view(np.float64)
        self.f32 = self.a32.view(np.float32)
        del self._parts

    def _put(self, arena: str, values: np.ndarray) -> int:
        base = self._used[arena]
        self._parts[arena].append(values)
        self._used[arena] += values.size
        return base

    def _join(self, arena: str, dtype) -> np.ndarray:
        parts = [p.astype(dtype, copy=False).reshape(-1) for p in self._parts[arena]]
        return np.concatenate(parts) if parts else np.zeros(1, dtype=dtype)

    def _add(self, index: int, arr: pa.Array) -> None:
        node = self.layout.nodes[index]
        s = self.state
        n = len(arr)
        s[index, S_KIND] = node.kind
        s[index, S_PARENT] = node.parent
        s[index, S_LEN] = n
        s[index, S_CHILD] = node.children[0] if node.kind in (K_LIST, K_MAP) else -1
        valid = _validity(arr)
        s[index, S_VALID] = -1 if valid is None else self._put("a8", valid)
        k = node.kind
        bufs = arr.buffers()
        if k == K_STRUCT:
            for child, values in zip(node.children, arr.flatten()):
                self._add(child, values)
        elif k in (K_LIST, K_MAP):
            offsets = _offsets(arr)
            first = int(offsets[0]) if n else 0
            last = int(offsets[-1]) if n else 0
            s[index, S_BASE] = self._put("a32", offsets - first)
            self._add(node.children[0], arr.values.slice(first, last - first))
        elif k == K_BINARY:
            offsets = _offsets(arr)
            first = int(offsets[0]) if n else 0
            last = int(offsets[-1]) if n else 0
            s[index, S_BASE] = self._put("a32", offsets - first)
            data = _values(bufs[2], np.uint8, first, last - first)
            s[index, S_DATA_BASE] = self._put("abytes", data)
        elif k == K_BOOL:
            bits = np.unpackbits(_values(bufs[1], np.uint8, 0, (arr.offset + n + 7) // 8), bitorder="little")
            s[index, S_BASE] = self._put("a8", bits[arr.offset:arr.offset + n])
        elif k in (K_I32, K_F32):
            dtype = np.int32 if k == K_I32 else np.float32
            s[index, S_BASE] = self._put("a32", _values(bufs[1], dtype, arr.offset, n).view(np.int32))
        elif k in (K_I64, K_F64):
            dtype = np.int64 if k == K_I64 else np.float64
            s[index, S_BASE] = self._put("a64", _values(bufs[1], dtype, arr.offset, n).view(np.int64))
        elif k == K_DEC128:
            s[index, S_BASE] = self._put("a64", _values(bufs[1], np.int64, 2 * arr.offset, 2 * n))
        else:
            assert k == K_NULL

    def kernel_args(self) -> tuple:
        return (self.state, self.a64, self.f64, self.a32, self.f32, self.a8, self.abytes)
