"""When to refresh a token (Kafka's ``sasl.login.refresh.*`` semantics, the settings' :class:`RefreshPolicy`), and one
shared token per process.

Kafka's Java client refreshes a token at ``window.factor`` (0.8) plus up to ``window.jitter`` (0.05) of its
lifetime, but not sooner than ``min.period.seconds`` (60) from now and not later than ``buffer.seconds`` (300)
before it expires; a token with less life left than those two periods together is refreshed at the same fraction
of what remains. kwire computes the same time, and refreshes lazily: the first connection that needs the token
after that time fetches a new one, every other connection and task of the process shares it. When a refresh
fails while the old token is still valid, the old one is used and the refresh is tried again 10 s later.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Callable

from spark_kwire.client.auth.oauth.token import OAuthToken
from spark_kwire.client.settings.logins import RefreshPolicy

__all__ = ["RefreshPolicy", "SharedToken", "shared_token", "forget_shared_tokens"]

log = logging.getLogger(__name__)

RETRY_AFTER_FAILED_REFRESH_S = 10.0  # Java's DELAY_SECONDS_BEFORE_NEXT_RETRY_WHEN_RELOGIN_FAILS


class SharedToken:
    """The current token of one credential in this process; :meth:`get` refreshes it when due."""

    def __init__(self, fetch: Callable[[], OAuthToken], policy: RefreshPolicy, description: str) -> None:
        self._fetch = fetch
        self.policy = policy
        self.description = description
        self._lock = threading.Lock()
        self._token: OAuthToken | None = None
        self._refresh_at = 0.0
        self.fetches = 0  # how many tokens this process fetched for the credential

    def get(self) -> OAuthToken:
        with self._lock:
            now = time.time()
            token = self._token
            if token is not None and now < self._refresh_at:
                return token
            try:
                fresh = self._fetch()
            except Exception as exc:
                if token is not None and token.remaining(now) > 1.0:
                    self._refresh_at = now + min(RETRY_AFTER_FAILED_REFRESH_S, token.remaining(now) / 2)
                    log.warning("refreshing the OAUTHBEARER token (%s) failed; the current one is valid for %.0f s "
                                "more, retrying in %.0f s: %s", self.description, token.remaining(now),
                                self._refresh_at - now, exc)
                    return token
                raise
            self.fetches += 1
            now = time.time()
            self._token = fresh
            self._refresh_at = self.policy.refresh_at(fresh, now)
            log.debug("OAUTHBEARER token for %s fetched: principal %r, valid for %.0f s, refresh in %.0f s",
                      self.description, fresh.principal, fresh.remaining(now), self._refresh_at - now)
            return fresh

    def _reset_after_fork(self) -> None:
        self._lock = threading.Lock()


_shared: dict[tuple, SharedToken] = {}
_shared_lock = threading.Lock()


def shared_token(key: tuple, fetch: Callable[[], OAuthToken], policy: RefreshPolicy,
                 description: str) -> SharedToken:
    """The process-wide :class:`SharedToken` for the credential ``key`` (created with ``fetch`` the first time)."""
    key = (key, policy)
    with _shared_lock:
        entry = _shared.get(key)
        if entry is None:
            entry = _shared[key] = SharedToken(fetch, policy, description)
        return entry


def forget_shared_tokens() -> None:
    """Drop every cached token of this process (the next connection fetches anew)."""
    with _shared_lock:
        _shared.clear()


def _after_fork_in_child() -> None:
    global _shared_lock
    _shared_lock = threading.Lock()
    for entry in _shared.values():
        entry._reset_after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
