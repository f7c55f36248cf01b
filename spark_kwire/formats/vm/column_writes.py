"""Appending values to the output columns inside the kernels (format-neutral: any decoder calls these).

The columns live in a few arenas (int64, int32, uint8, bytes) described by the node table ``state`` (see
``slots.py``): each node owns a region of the arena of its kind. An append that finds its region full
writes (node, what ran out, bytes wanted) into ``out`` and returns False: the decoder rewinds the record
(:func:`rewind`), returns, and the caller grows that region and resumes at the same record.
"""

from __future__ import annotations

import numpy as np

from .bytes_in import copy_bytes
from .slots import (K_BINARY, K_BOOL, K_DEC128, K_F32, K_F64, K_I32, K_I64, K_LIST, K_MAP, ROOM_DATA,
                    ROOM_VALUES, S_BASE, S_CAP, S_CHILD, S_DATA_BASE, S_DATA_CAP, S_DATA_LEN, S_KIND, S_LEN,
                    S_PAD_END, S_PAD_START, S_PARENT, S_VALID)


def full(out, node, room, want):
    out[0] = node
    out[1] = room
    out[2] = want
    return False


def begin(state, a8, node):
    """Appends one (valid) element to ``node``; its index, or -1 when the node is full."""
    k = state[node, S_LEN]
    if k >= state[node, S_CAP]:
        return np.int64(-1)
    vb = state[node, S_VALID]
    if vb >= 0:
        a8[vb + k] = 1
    state[node, S_LEN] = k + 1
    return k


def append_value(state, values, a8, out, node, v):
    """Appends ``v`` to ``node``'s values (``values``: the flat array of the node's Arrow type, e.g. ``a64`` for
    int64 and timestamps, ``a32``, ``f64``, ``f32``, or ``a8`` for booleans); False when the node is full."""
    k = begin(state, a8, node)
    if k < 0:
        return full(out, node, ROOM_VALUES, 1)
    values[state[node, S_BASE] + k] = v
    return True


def put_dec(state, a64, a8, out, node, lo, hi):
    k = begin(state, a8, node)
    if k < 0:
        return full(out, node, ROOM_VALUES, 1)
    p = state[node, S_BASE] + 2 * k
    a64[p] = lo
    a64[p + 1] = hi
    return True


def put_null(state, a8, out, node):
    """Appends an element to a node of Arrow type null."""
    if begin(state, a8, node) < 0:
        return full(out, node, ROOM_VALUES, 1)
    return True


def put_bytes(state, a32, a8, abytes, out, node, src, pos, n):
    """Appends ``src[pos:pos+n]`` to a binary node (bounds of ``src`` already checked)."""
    d = state[node, S_DATA_LEN]
    if d + n > state[node, S_DATA_CAP]:
        return full(out, node, ROOM_DATA, n)
    k = begin(state, a8, node)
    if k < 0:
        return full(out, node, ROOM_VALUES, 1)
    copy_bytes(abytes, state[node, S_DATA_BASE] + d, src, pos, n)
    d += n
    state[node, S_DATA_LEN] = d
    a32[state[node, S_BASE] + k + 1] = d
    return True


def open_list(state, a8, out, node):
    """Starts an element of a list or map node; :func:`close_list` ends it once its items are appended."""
    if begin(state, a8, node) < 0:
        return full(out, node, ROOM_VALUES, 1)
    return True


def close_list(state, a32, node):
    a32[state[node, S_BASE] + state[node, S_LEN]] = state[state[node, S_CHILD], S_LEN]


def pad(state, pad_nodes, a64, a32, a8, out, node):
    """Appends a null to ``node`` and a placeholder to each node of its struct subtree (Arrow wants children as
    long as their struct)."""
    for i in range(state[node, S_PAD_START], state[node, S_PAD_END]):
        n = pad_nodes[i]
        k = state[n, S_LEN]
        if k >= state[n, S_CAP]:
            return full(out, n, ROOM_VALUES, 1)
        vb = state[n, S_VALID]
        if vb >= 0:
            a8[vb + k] = 0
        kind = state[n, S_KIND]
        base = state[n, S_BASE]
        if kind == K_I64 or kind == K_F64:
            a64[base + k] = 0
        elif kind == K_I32 or kind == K_F32:
            a32[base + k] = 0
        elif kind == K_BOOL:
            a8[base + k] = 0
        elif kind == K_DEC128:
            a64[base + 2 * k] = 0
            a64[base + 2 * k + 1] = 0
        elif kind == K_BINARY:
            a32[base + k + 1] = state[n, S_DATA_LEN]
        elif kind == K_LIST or kind == K_MAP:
            a32[base + k + 1] = state[state[n, S_CHILD], S_LEN]
        state[n, S_LEN] = k + 1
    return True


def rewind(state, a32, rows):
    """Sets every node back to where it was before record ``rows`` began: the root holds ``rows`` elements,
    a struct's children as many as it, a list's items as many as its offsets say, a binary node's bytes as
    many as its offsets say. Nodes are numbered parents first."""
    for node in range(state.shape[0]):
        parent = state[node, S_PARENT]
        if parent < 0:
            length = rows
        else:
            pk = state[parent, S_KIND]
            if pk == K_LIST or pk == K_MAP:
                length = np.int64(a32[state[parent, S_BASE] + state[parent, S_LEN]])
            else:
                length = state[parent, S_LEN]
        state[node, S_LEN] = length
        if state[node, S_KIND] == K_BINARY:
            state[node, S_DATA_LEN] = np.int64(a32[state[node, S_BASE] + length])


KERNELS = ("full", "begin", "append_value", "put_dec", "put_null", "put_bytes",
           "open_list", "close_list", "pad", "rewind")
