"""read_committed: the Java consumer's aborted-transaction filter over the scanned entries."""

from __future__ import annotations

import numpy as np

from ..layout import CTRL_ABORT, CTRL_MALFORMED, CTRL_UNPARSED, E_CONTROL, OK
from .cache import kernel


@kernel
def txn_filter(e_magic, e_attr, e_pid, e_last_offset, e_ctrl, ab_pid_sorted, ab_first_sorted, uniq_pids, keep):
    """Clears ``keep`` for batches of aborted transactions.

    ``ab_*_sorted``: the fetch response's aborted transactions ordered by first offset. ``uniq_pids``: sorted
    unique producer ids among them. Walks the batches in order; before each batch with a producer id, every
    aborted transaction whose first offset <= the batch's last offset marks its producer aborted; an ABORT
    control marker of a producer clears the mark; a transactional batch of a marked producer is dropped.
    Returns (status, entry_index).
    """
    active = np.zeros(uniq_pids.shape[0], dtype=np.uint8)
    q = 0
    nab = ab_pid_sorted.shape[0]
    npid = uniq_pids.shape[0]
    for i in range(e_magic.shape[0]):
        if e_magic[i] != 2 or e_pid[i] < 0:
            continue
        lo = e_last_offset[i]
        while q < nab and ab_first_sorted[q] <= lo:
            j = np.searchsorted(uniq_pids, ab_pid_sorted[q])
            active[j] = 1
            q += 1
        pid = e_pid[i]
        j = np.searchsorted(uniq_pids, pid)
        known = j < npid and uniq_pids[j] == pid
        if (e_attr[i] & 0x20) != 0:
            c = e_ctrl[i]
            if c == CTRL_MALFORMED or c == CTRL_UNPARSED:
                return E_CONTROL, i
            if c == CTRL_ABORT and known:
                active[j] = 0
        elif (e_attr[i] & 0x10) != 0 and known and active[j] != 0:
            keep[i] = False
    return OK, np.int64(-1)
