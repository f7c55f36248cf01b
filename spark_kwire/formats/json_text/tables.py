"""The tables both JSON formats' programs are made of, as the shared kernels read them.

Decoding (``json_schema/program.py``, ``json/program.py``): ``vals``, one row per value position (a struct, list or
map node, or a leaf) starting with the words below (a format may add its own after ``VAL_WORDS``), ``props``, the
properties of each object with their names in ``consts``, and ``hashes``, an open-addressing table per object
finding a property by the FNV-1a hash of its name (``kernels/names.py`` probes it).

Encoding (``json_schema/encode_program.py``, ``json/encode_program.py``): per value its op (``W_*``: JSON Schema's
leaves, then ``to_json``'s from ``W_JAVA_DOUBLE`` on), node and nullability, per object property its ``"name":`` as
written; ``kernels/encode.py`` walks them. Floats, doubles and decimals are formatted to text before the kernel
runs (:func:`number_texts`).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..vm.slots import K_DEC128, K_F32, K_F64, S_BASE, S_LEN

# vals columns
V_KIND = 0
V_NODE = 1
V_NULLABLE = 2
V_SUB = 3  # object: first props row; array: item value; map: value value
V_COUNT = 4  # object: properties
V_HASH_BASE = 5
V_HASH_MASK = 6
V_END = 7  # one past the last node of the node's subtree (undoing a repeated key)
V_KEY = 8  # map: the key node
VAL_WORDS = 9  # the words every format's vals rows start with

# props columns
P_NAME = 0
P_NAME_LEN = 1
P_VALUE = 2
P_REQUIRED = 3  # missing (or null) is an error
PROP_WORDS = 4

FNV_OFFSET = -3750763034362895579  # 0xcbf29ce484222325 as int64
FNV_PRIME = 1099511628211


def fnv1a(data: bytes) -> int:
    h = FNV_OFFSET & 0xFFFFFFFFFFFFFFFF
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return h


def add_name_table(hashes: list[int], names: list[bytes]) -> tuple[int, int]:
    """Appends to ``hashes`` an open-addressing table finding each of ``names`` (by its position) from the FNV-1a
    hash of its bytes, as ``kernels/names.find_property`` probes it; (where it starts, its mask)."""
    size = 1
    while size < 2 * len(names):
        size *= 2
    table = [-1] * size
    for i, name in enumerate(names):
        h = fnv1a(name) & (size - 1)
        while table[h] >= 0:
            h = (h + 1) & (size - 1)
        table[h] = i
    base = len(hashes)
    hashes.extend(table)
    return base, size - 1


def decode_tables(vals: list, props: list, hashes: list, consts: bytearray, val_words: int) -> tuple:
    """(vals, props, hashes, consts) of a decoding program (rows of ``val_words``) as the kernel takes them."""
    return (np.array(vals, dtype=np.int64).reshape(-1, val_words),
            np.array(props or [[0] * PROP_WORDS], dtype=np.int64).reshape(-1, PROP_WORDS),
            np.array(hashes or [-1], dtype=np.int64), np.frombuffer(bytes(consts) or b"\0", dtype=np.uint8))


W_OBJECT = 1
W_ARRAY = 2
W_MAP = 3
W_STRING = 4
W_BASE64 = 5
W_INT32 = 6
W_INT64 = 7
W_TEXT = 8  # numbers formatted before the kernel runs (doubles, floats, decimals)
W_BOOL = 9
W_DATE = 10
W_TIMESTAMP = 11
W_NULL = 12
W_RAW = 13  # a string holding JSON text
# to_json's (json/encode_program.py), run by the same walk: the ops from W_JAVA_DOUBLE on
W_JAVA_DOUBLE = 14  # the Arrow text of a double, printed as Java does
W_JAVA_FLOAT = 15
W_BIG_DECIMAL = 16  # as BigDecimal.toString
W_DATE_TEXT = 17  # with a pattern program (dateFormat)
W_TIMESTAMP_TEXT = 18  # in the writing zone, with a pattern program (timestampFormat)
W_LOCAL_TIMESTAMP_TEXT = 19
W_JACKSON_STRING = 20  # escaped as Jackson escapes (``\u00XX`` with capital hex digits)

# values columns
EV_OP = 0
EV_NODE = 1
EV_NULLABLE = 2  # the schema allows null here
EV_SUB = 3  # object: first props row; array/map: item value
EV_COUNT = 4  # object: properties; map: the key node
EV_WORDS = 5
# props columns
EP_NAME = 0  # `"name":` as written
EP_NAME_LEN = 1
EP_VALUE = 2
EP_REQUIRED = 3
EP_WORDS = 4


def encode_tables(vals: list, props: list, consts: bytearray) -> tuple:
    """(vals, props, consts) of an encoding program as the kernel takes them (either JSON format's)."""
    return (np.array(vals, dtype=np.int64).reshape(-1, EV_WORDS),
            np.array(props or [[0] * EP_WORDS], dtype=np.int64).reshape(-1, EP_WORDS),
            np.frombuffer(bytes(consts) or b"\0", dtype=np.uint8))


def number_texts(columns, text_nodes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(base per node, offsets, bytes): the text of every value of the float, double and decimal nodes
    ``text_nodes`` of input ``columns``, formatted by Arrow's casts (the shortest text reading back as the same
    value; ``nan``, ``inf``, ``-inf``; decimals plain with their scale)."""
    base = np.full(len(columns.layout.nodes), -1, dtype=np.int64)
    offsets, chunks, total = [np.zeros(1, dtype=np.int64)], [], 0
    count = 0
    for node in text_nodes:
        kind = int(columns.state[node, 0])
        start, n = int(columns.state[node, S_BASE]), int(columns.state[node, S_LEN])
        if kind == K_F64:
            values = pa.array(columns.f64[start:start + n])
        elif kind == K_F32:
            values = pa.array(columns.f32[start:start + n])
        elif kind == K_DEC128:
            t = columns.layout.nodes[node].type
            values = pa.Array.from_buffers(t, n, [None, pa.py_buffer(columns.a64[start:start + 2 * n].copy())])
        else:
            values = pa.array(columns.a64[start:start + n])
        text = values.cast(pa.string())
        if kind in (K_F64, K_F32):  # Arrow prints -0.0 as -0, which JSON readers take for the integer 0
            text = pc.if_else(pc.equal(text, "-0"), "-0.0", text)
        raw = np.frombuffer(text.buffers()[2], dtype=np.uint8) if n else np.zeros(0, dtype=np.uint8)
        local = np.frombuffer(text.buffers()[1], dtype=np.int32, count=n + 1).astype(np.int64) if n else \
            np.zeros(1, dtype=np.int64)
        base[node] = count
        offsets.append(local[1:] + total)
        chunks.append(raw[:int(local[-1])])
        total += int(local[-1])
        count += n
    data = np.concatenate(chunks) if chunks else np.zeros(1, dtype=np.uint8)
    return base, np.concatenate(offsets), data if data.size else np.zeros(1, dtype=np.uint8)
