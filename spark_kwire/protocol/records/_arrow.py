"""Zero-copy views of Arrow binary/list buffers as numpy arrays (and back).

Built from and read through the buffers, never with ``pa.array()``, ``Array.to_numpy()`` or Python scalars:
those go through pyarrow's conversion of Python objects, whose first use imports pandas, a third of a second
of every new Spark Python worker's first task (Spark's worker itself does not import it).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

_EMPTY_U8 = np.zeros(0, dtype=np.uint8)
_EMPTY_U8.flags.writeable = False


def readonly_u8(obj) -> np.ndarray:
    """A read-only uint8 view of a bytes-like object or array (no copy)."""
    if isinstance(obj, np.ndarray):
        arr = obj.view(np.uint8) if obj.dtype != np.uint8 else obj
        arr = arr.reshape(-1)
    else:
        arr = np.frombuffer(obj, dtype=np.uint8)
    if arr.flags.writeable:
        arr = arr.view()
        arr.flags.writeable = False
    return arr


def _as_array(arr) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if not isinstance(arr, pa.Array):
        arr = pa.array(arr, type=pa.binary())
    return arr


def binary_parts(arr, what: str = "array"):
    """(offsets int64[n+1], data uint8 (read-only), valid uint8[n]) of a
    binary / large_binary / string / large_string (or *_view) Arrow array.

    Offsets index ``data`` directly (slices are honoured); copies only the
    offsets (widened to int64) and builds the validity as bytes.
    """
    arr = _as_array(arr)
    t = arr.type
    if pa.types.is_binary_view(t) or pa.types.is_string_view(t):
        arr = arr.cast(pa.large_binary())
        t = arr.type
    if pa.types.is_binary(t) or pa.types.is_string(t):
        odt = np.int32
    elif pa.types.is_large_binary(t) or pa.types.is_large_string(t):
        odt = np.int64
    else:
        raise TypeError(f"{what}: expected a binary or string Arrow array, got {t}")
    n = len(arr)
    bufs = arr.buffers()
    off = arr.offset
    if n == 0:
        return np.zeros(1, dtype=np.int64), _EMPTY_U8, np.zeros(0, dtype=np.uint8)
    offsets = np.frombuffer(bufs[1], dtype=odt, count=off + n + 1)[off:].astype(np.int64)
    data = readonly_u8(bufs[2]) if bufs[2] is not None else _EMPTY_U8
    valid = validity_bytes(bufs[0], off, n, arr.null_count)
    return offsets, data, valid


def from_numpy(values: np.ndarray) -> pa.Array:
    """The Arrow array (no nulls) over a 1-d numeric numpy array's buffer (made contiguous if it is not)."""
    values = np.ascontiguousarray(values)
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values), [None, pa.py_buffer(values)])


def numeric_values(arr) -> np.ndarray:
    """The values of a numeric Arrow array as a read-only numpy view (what null slots hold is unspecified)."""
    arr = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
    dtype = arr.type.to_pandas_dtype() if not pa.types.is_timestamp(arr.type) else np.int64
    return np.frombuffer(arr.buffers()[1], dtype=dtype, count=arr.offset + len(arr))[arr.offset:]


def valid_mask(arr) -> np.ndarray:
    """Which slots of an Arrow array are not null, as a numpy bool array."""
    arr = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
    return validity_bytes(arr.buffers()[0], arr.offset, len(arr), arr.null_count).view(bool)


def validity_bytes(bitmap, offset: int, n: int, null_count: int) -> np.ndarray:
    if bitmap is None or null_count == 0:
        return np.ones(n, dtype=np.uint8)
    bits = np.unpackbits(np.frombuffer(bitmap, dtype=np.uint8), bitorder="little")
    return bits[offset : offset + n].copy()


def make_binary_array(offsets: np.ndarray, data: np.ndarray, valid_mask: np.ndarray | None, n: int) -> pa.Array:
    """Arrow binary (int32 offsets) or large_binary (int64 offsets) array."""
    typ = pa.binary() if offsets.dtype == np.int32 else pa.large_binary()
    null_count = 0 if valid_mask is None else int(n - np.count_nonzero(valid_mask))
    vbuf = pa.py_buffer(np.packbits(valid_mask, bitorder="little")) if null_count else None
    return pa.Array.from_buffers(
        typ, n, [vbuf, pa.py_buffer(offsets), pa.py_buffer(data)], null_count=null_count
    )


def header_parts(headers, n: int):
    """Canonical buffers of a list<struct<key: string|binary, value: binary>>
    column: (list_offsets int64[n+1] (rebased to 0), key parts, value parts).
    Null lists count as empty lists."""
    if isinstance(headers, pa.ChunkedArray):
        headers = headers.combine_chunks()
    t = headers.type
    if not (pa.types.is_list(t) or pa.types.is_large_list(t)) or not pa.types.is_struct(t.value_type):
        raise TypeError(f"headers: expected list<struct<key, value>>, got {t}")
    if len(headers) != n:
        raise ValueError(f"headers has {len(headers)} rows, values has {n}")
    st = t.value_type
    names = [st.field(i).name for i in range(st.num_fields)]
    if names != ["key", "value"]:
        raise TypeError(f"headers: struct fields must be (key, value), got {names}")
    import pyarrow.compute as pc  # only here: importing it costs every new worker's read path 30 ms of CPU

    lengths = pc.list_value_length(headers)
    counts = np.where(valid_mask(lengths), numeric_values(lengths), 0).astype(np.int64)
    list_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=list_offsets[1:])
    flat = headers.flatten()  # struct entries of non-null lists, slice honoured
    if isinstance(flat, pa.ChunkedArray):
        flat = flat.combine_chunks()
    if flat.null_count:
        raise ValueError("headers: null header entries are not allowed")
    k, v = flat.flatten()
    if k.null_count:
        raise ValueError("headers: header keys must not be null")
    return list_offsets, binary_parts(k, "header key"), binary_parts(v, "header value")


def timestamp_column(timestamps_ms, n: int) -> np.ndarray:
    """Per-row timestamps (epoch milliseconds, or Arrow/numpy timestamps) as ``n`` contiguous int64 values."""
    if isinstance(timestamps_ms, (pa.Array, pa.ChunkedArray)):
        if pa.types.is_timestamp(timestamps_ms.type):
            timestamps_ms = timestamps_ms.cast(pa.timestamp("ms")).cast(pa.int64())
        if timestamps_ms.null_count:
            raise ValueError("timestamps_ms: null timestamps are not allowed")
        timestamps_ms = numeric_values(timestamps_ms.cast(pa.int64()))
    ts = np.asarray(timestamps_ms)
    if ts.dtype.kind == "M":
        ts = ts.astype("datetime64[ms]").view(np.int64)
    ts = np.ascontiguousarray(ts, dtype=np.int64).reshape(-1)
    if ts.shape[0] != n:
        raise ValueError(f"timestamps_ms has {ts.shape[0]} rows, values has {n}")
    return ts
