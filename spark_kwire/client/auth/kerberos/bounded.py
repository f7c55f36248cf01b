"""Calls into the Kerberos library that may wait on a KDC, bounded in time.

MIT's library waits on a KDC that accepts connections but never answers for about 50 s, whatever the caller's
timeouts; ``kdc_timeout`` in krb5.conf is Java's and Heimdal's setting, not MIT's. So such calls (logins,
service-ticket requests, ``kinit -R``) run in a helper thread, and the caller stops waiting at its bound with a
:class:`KdcTimeout` (the thread finishes on its own, its result is dropped). The ``gssapi`` binding releases the
GIL while it waits, so the helper thread costs nothing meanwhile.
"""

from __future__ import annotations

import threading
from typing import Callable, TypeVar

__all__ = ["KdcTimeout", "within"]

T = TypeVar("T")


class KdcTimeout(TimeoutError):
    """A Kerberos call did not finish within its bound."""


def within(seconds: float, fn: Callable[[], T], what: str) -> T:
    """``fn()``, or :class:`KdcTimeout` after `seconds`; exceptions of ``fn`` are raised here."""
    box: list = []

    def run() -> None:
        try:
            box.append((True, fn()))
        except BaseException as exc:  # handed to the caller
            box.append((False, exc))

    worker = threading.Thread(target=run, name=f"kwire-kerberos-{what}", daemon=True)
    worker.start()
    worker.join(max(0.0, seconds))
    if not box:
        raise KdcTimeout(f"{what} did not finish within {seconds:.1f} s")
    ok, value = box[0]
    if not ok:
        raise value
    return value
