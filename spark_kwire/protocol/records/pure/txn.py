"""read_committed in plain Python: the Java consumer's aborted-transaction filter (as ``jit/txn.py``)."""

from __future__ import annotations

from ..layout import CTRL_ABORT, CTRL_MALFORMED, CTRL_UNPARSED, E_CONTROL, OK


def txn_filter(e_magic, e_attr, e_pid, e_last_offset, e_ctrl, ab_pid_sorted, ab_first_sorted, uniq_pids, keep):
    """Clears ``keep`` for batches of aborted transactions; returns (status, entry_index).

    ``ab_*_sorted``: the fetch response's aborted transactions ordered by first offset (``uniq_pids`` is
    accepted for the common signature). Before each batch with a producer id, every aborted transaction whose
    first offset <= the batch's last offset marks its producer aborted; an ABORT control marker of a producer
    clears the mark; a transactional batch of a marked producer is dropped.
    """
    pending = list(zip(ab_pid_sorted.tolist(), ab_first_sorted.tolist()))
    aborted: set[int] = set()
    q = 0
    for i, (magic, attr, pid, last, ctrl) in enumerate(zip(e_magic.tolist(), e_attr.tolist(), e_pid.tolist(),
                                                            e_last_offset.tolist(), e_ctrl.tolist())):
        if magic != 2 or pid < 0:
            continue
        while q < len(pending) and pending[q][1] <= last:
            aborted.add(pending[q][0])
            q += 1
        if attr & 0x20:
            if ctrl == CTRL_MALFORMED or ctrl == CTRL_UNPARSED:
                return E_CONTROL, i
            if ctrl == CTRL_ABORT:
                aborted.discard(pid)
        elif attr & 0x10 and pid in aborted:
            keep[i] = False
    return OK, -1
