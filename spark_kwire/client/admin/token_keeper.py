"""Delegation tokens a process hands out to others (Spark's driver to its tasks), kept valid as Spark keeps them.

:func:`held_delegation_token` returns the token this process holds for the cluster and the principal a client
authenticates as, creating it on the first call. One token per (cluster, principal) and process: every query
and micro-batch planned in the process shares it. It is kept valid the way Spark's token manager keeps its
tokens, at ``RENEWAL_RATIO`` (Spark's ``spark.security.credentials.renewalRatio``, 0.75) of the time left:

* once 75 % of the way from its creation or last renewal to its expiry, it is renewed (RenewDelegationToken:
  same id and HMAC, so tasks already holding it keep working, with a later expiry);
* when its maximum lifetime ends before a renewal could give it a whole expiry period (the span the cluster gave
  it at creation), or renewal fails or cannot push the expiry further, a new token is created instead (a new
  HMAC: tasks get it with the next plan). So every token handed out stays valid for at least a quarter of that
  period: renewing up to the maximum lifetime would leave a token whose last span, and so its margin, is short;
* when neither works while the current token is still valid, the current one is handed out and the next
  call tries again after ``RETRY_AFTER_FAILURE_S`` (or half the time left, if sooner); an expired token is never
  handed out: the error is raised.

The check happens when a caller asks for the token (a query or micro-batch being planned), not on a timer:
tasks planned from a token hold it until its expiry, a quarter of its renewal period at least.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time

from spark_kwire.client.admin.delegation_tokens import (DelegationToken, create_delegation_token,
                                                        renew_delegation_token)
from spark_kwire.protocol.errors import KwireError

__all__ = ["held_delegation_token", "forget_delegation_tokens", "RENEWAL_RATIO", "RETRY_AFTER_FAILURE_S"]

log = logging.getLogger("spark_kwire.client")

RENEWAL_RATIO = 0.75
RETRY_AFTER_FAILURE_S = 60.0


@dataclasses.dataclass
class _Held:
    token: DelegationToken
    refresh_at: float  # epoch seconds
    period_s: float  # the expiry period the cluster gave the token at creation (delegation.token.expiry.time.ms)


def _refresh_time(token: DelegationToken, since: float) -> float:
    return since + RENEWAL_RATIO * max(0.0, token.expiry_ms / 1000.0 - since)


_held: dict[tuple, _Held] = {}
_locks: dict[tuple, threading.Lock] = {}
_registry_lock = threading.Lock()


def _cluster_and_principal(client) -> tuple:
    session = client.any_connection().sasl_session
    principal = getattr(session, "principal", None)
    cluster = client.metadata.cluster_id or client.config.bootstrap_servers
    return cluster, principal


def held_delegation_token(client) -> DelegationToken:
    """The delegation token of the cluster and principal `client` authenticates as (over Kerberos or another
    SASL login of its own), created on the first call, renewed or replaced as the module docstring says.
    Raises :class:`~spark_kwire.client.admin.delegation_tokens.DelegationTokenError` (or the client's error)
    when no valid token can be had."""
    key = _cluster_and_principal(client)
    with _registry_lock:
        lock = _locks.setdefault(key, threading.Lock())
    with lock:
        held = _held.get(key)
        now = time.time()
        if held is not None and now < held.refresh_at and held.token.expiry_ms / 1000.0 > now:
            return held.token
        _held[key] = held = _refresh(client, held, now)
        return held.token


def _refresh(client, held: _Held | None, now: float) -> _Held:
    if held is None:
        return _created(client)
    token = held.token
    if token.max_timestamp_ms / 1000.0 >= now + held.period_s:
        try:
            expiry = renew_delegation_token(client, token)
            if expiry > token.expiry_ms:
                renewed = dataclasses.replace(token, expiry_ms=expiry)
                log.info("delegation token %s renewed (expires in %.0f s)", token.token_id, renewed.expires_in_s())
                return _Held(renewed, _refresh_time(renewed, time.time()), held.period_s)
        except KwireError as exc:
            log.warning("renewing delegation token %s failed, creating a new one instead: %s", token.token_id, exc)
    try:
        fresh = _created(client)
    except KwireError as exc:
        left = token.expiry_ms / 1000.0 - time.time()
        if left <= 1.0:
            raise
        retry_in = min(RETRY_AFTER_FAILURE_S, left / 2)
        log.warning("replacing delegation token %s failed; it stays valid for %.0f s, trying again in %.0f s: %s",
                    token.token_id, left, retry_in, exc)
        return _Held(token, time.time() + retry_in, held.period_s)
    log.info("delegation token %s replaces %s (expiring in %.0f s, its maximum lifetime ends in %.0f s)",
             fresh.token.token_id, token.token_id, token.expiry_ms / 1000.0 - now,
             token.max_timestamp_ms / 1000.0 - now)
    return fresh


def _created(client) -> _Held:
    token = create_delegation_token(client)
    log.info("delegation token %s created for %s (expires in %.0f s)", token.token_id, token.owner,
             token.expires_in_s())
    return _Held(token, _refresh_time(token, time.time()), (token.expiry_ms - token.issued_ms) / 1000.0)


def forget_delegation_tokens() -> None:
    """Drop every token this process holds (the next call creates new ones); the tokens stay valid on the
    cluster until they expire."""
    with _registry_lock:
        _held.clear()
        _locks.clear()


def _after_fork_in_child() -> None:
    global _registry_lock
    _registry_lock = threading.Lock()
    _locks.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
