"""Finding a property by name in an object of a JSON program (``tables.py``: the next expected property first,
then the object's FNV-1a hash table), and undoing what a property given twice appended (the last one wins): the
part of reading an object both JSON formats' decoders share."""

from __future__ import annotations

import numpy as np

from ...vm.slots import K_BINARY, K_LIST, K_MAP, S_BASE, S_DATA_LEN, S_KIND, S_LEN, S_PARENT
from ..tables import P_NAME, P_NAME_LEN

# the first words of a decoder's deferred values (doubles left to Python), as undo_subtree reads them
D_NODE = 0
D_INDEX = 1
FNV_OFFSET = np.int64(-3750763034362895579)
FNV_PRIME = np.int64(1099511628211)


def same_name(buf, s, n, consts, off, length):
    if n != length:
        return False
    for i in range(n):
        if buf[s + i] != consts[off + i]:
            return False
    return True


def find_property(props, hashes, consts, base, count, hash_base, mask, expect, buf, s, n):
    """The position of the property named ``buf[s:s+n]`` among the object's, or -1."""
    if expect < count and same_name(buf, s, n, consts, props[base + expect, P_NAME], props[base + expect, P_NAME_LEN]):
        return expect
    h = FNV_OFFSET
    for i in range(n):
        h = (h ^ np.int64(buf[s + i])) * FNV_PRIME
    slot = h & mask
    while True:
        i = hashes[hash_base + slot]
        if i < 0:
            return np.int64(-1)
        if same_name(buf, s, n, consts, props[base + i, P_NAME], props[base + i, P_NAME_LEN]):
            return i
        slot = (slot + 1) & mask


def undo_subtree(state, a32, node, end_node, deferred, counters, first_deferred):
    """Undoes the last element of ``node`` and what it holds (a property given twice: the last one wins)."""
    state[node, S_LEN] -= 1
    for n in range(node, end_node):
        if n > node:
            parent = state[n, S_PARENT]
            pk = state[parent, S_KIND]
            if pk == K_LIST or pk == K_MAP:
                state[n, S_LEN] = np.int64(a32[state[parent, S_BASE] + state[parent, S_LEN]])
            else:
                state[n, S_LEN] = state[parent, S_LEN]
        if state[n, S_KIND] == K_BINARY:
            state[n, S_DATA_LEN] = np.int64(a32[state[n, S_BASE] + state[n, S_LEN]])
    for d in range(first_deferred, counters[0]):
        dn = deferred[d, D_NODE]
        if node <= dn < end_node and deferred[d, D_INDEX] >= state[dn, S_LEN]:
            deferred[d, D_NODE] = -1


KERNELS = ("same_name", "find_property", "undo_subtree")
