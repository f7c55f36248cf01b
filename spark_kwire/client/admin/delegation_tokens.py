"""Kafka delegation tokens (KIP-48): create, renew, expire and describe them through a
:class:`~spark_kwire.client.core.kafka_client.KafkaClient`, admin-style (``create_delegation_token(client, ...)``).

A token is requested over a channel authenticated with the holder's own credentials (Kerberos, SCRAM, OAUTHBEARER;
never a token, never PLAINTEXT). Whoever holds its id and HMAC then authenticates as the token's owner with
SCRAM (the id as user name, the base64 HMAC as password, the SCRAM extension ``tokenauth=true``):
:meth:`DelegationToken.login` gives that login for a client's settings (Spark tasks, which have no keytab), and
:meth:`DelegationToken.client_options` the Kafka options that say the same.

Brokers enable tokens with ``delegation.token.secret.key``; tokens live ``delegation.token.expiry.time.ms`` (one
day) unless renewed, and never beyond their maximum lifetime (``delegation.token.max.lifetime.ms``, 7 days, or
the smaller one asked for at creation).
"""

from __future__ import annotations

import base64
import logging
import time
from dataclasses import dataclass
from typing import Iterable, Union

from spark_kwire.client.settings.logins import DelegationTokenLogin
from spark_kwire.client.settings.secret import Secret
from spark_kwire.client.errors import ClientError
from spark_kwire.protocol import messages as m
from spark_kwire.protocol.errors import error_info

__all__ = ["DelegationToken", "DelegationTokenError", "create_delegation_token", "renew_delegation_token",
           "expire_delegation_token", "describe_delegation_tokens"]

log = logging.getLogger("spark_kwire.client")

AUTH_DISABLED, NOT_FOUND, OWNER_MISMATCH, REQUEST_NOT_ALLOWED, AUTHORIZATION_FAILED, EXPIRED = 61, 62, 63, 64, 65, 66
_EXPLANATIONS = {
    AUTH_DISABLED: "delegation tokens are disabled on the cluster: every broker and controller needs "
                   "delegation.token.secret.key (the same value) in its configuration",
    NOT_FOUND: "the cluster knows no token with this HMAC (it expired and was removed, or it is another cluster's)",
    OWNER_MISMATCH: "the authenticated principal is neither the token's owner nor one of its renewers",
    AUTHORIZATION_FAILED: "the authenticated principal is not allowed to do this (an ACL on the DelegationToken or "
                          "User resource is missing)",
    EXPIRED: "the token has expired: create a new one (and renew tokens before delegation.token.expiry.time.ms "
             "passes)",
}


class DelegationTokenError(ClientError):
    """A delegation-token request failed; ``code`` / ``error_name`` are the broker's error. Not retriable."""

    def __init__(self, message: str, *, code: int | None = None) -> None:
        self.code = code
        self.error_name = error_info(code).name if code is not None else None
        super().__init__(message)


def _principal(text: str) -> tuple[str, str]:
    """``User:alice`` -> ("User", "alice"); a bare name is a ``User``."""
    kind, sep, name = text.partition(":")
    return (kind, name) if sep and kind and name else ("User", text)


def _principal_text(kind: str | None, name: str | None) -> str | None:
    return f"{kind}:{name}" if kind and name else None


@dataclass(frozen=True)
class DelegationToken:
    """A delegation token: its id, HMAC (a :class:`Secret` holding base64, shown as ``'***'``), owner, who asked
    for it, renewers, and its times (epoch milliseconds)."""
    token_id: str
    hmac: Secret
    owner: str
    requester: str | None
    issued_ms: int
    expiry_ms: int
    max_timestamp_ms: int
    renewers: tuple[str, ...] = ()

    @property
    def hmac_bytes(self) -> bytes:
        return base64.b64decode(self.hmac.reveal())

    def expires_in_s(self, now: float | None = None) -> float:
        return self.expiry_ms / 1000.0 - (time.time() if now is None else now)

    def login(self, mechanism: str = "SCRAM-SHA-512") -> DelegationTokenLogin:
        """The settings' SASL login that authenticates with this token (SCRAM with ``tokenauth=true``)."""
        if mechanism not in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
            raise ValueError(f"delegation tokens authenticate with SCRAM-SHA-256 or SCRAM-SHA-512, not {mechanism}")
        return DelegationTokenLogin(mechanism, self.token_id, self.hmac, source="a delegation token")

    def client_options(self, mechanism: str = "SCRAM-SHA-512") -> dict:
        """Kafka client options that authenticate with this token (SCRAM with ``tokenauth=true``); the JAAS line
        is a :class:`Secret`. Add ``bootstrap.servers`` and ``security.protocol`` (SASL_PLAINTEXT or SASL_SSL)."""
        self.login(mechanism)  # checks the mechanism
        jaas = (f'org.apache.kafka.common.security.scram.ScramLoginModule required username="{self.token_id}" '
                f'password="{self.hmac.reveal()}" tokenauth=true;')
        return {"sasl.mechanism": mechanism, "sasl.jaas.config": Secret(jaas)}


def _hmac_bytes(token: Union[DelegationToken, Secret, bytes, str]) -> bytes:
    if isinstance(token, DelegationToken):
        return token.hmac_bytes
    if isinstance(token, bytes):
        return token
    text = token.reveal() if isinstance(token, Secret) else str(token)
    try:
        return base64.b64decode(text, validate=True)
    except ValueError:
        raise ValueError("a token's HMAC is given as the DelegationToken, its raw bytes, or its base64 text") from None


def _check(response: dict, what: str, client, token_id: str | None = None) -> None:
    code = response.get("error_code", 0)
    if not code:
        return
    config = client.config
    channel = f"security.protocol={config.security_protocol}" + \
        (f", sasl.mechanism={config.sasl_mechanism}" if config.security_protocol.startswith("SASL_") else "")
    if code == REQUEST_NOT_ALLOWED:
        detail = (f"the broker refuses delegation-token requests on this connection ({channel}): they must come over "
                  f"a SASL channel authenticated with the principal's own credentials (Kerberos, SCRAM, OAUTHBEARER), "
                  f"not over PLAINTEXT or SSL and not over a channel that a delegation token authenticated")
    else:
        detail = _EXPLANATIONS.get(code) or error_info(code).description
    which = f" {token_id}" if token_id else ""
    raise DelegationTokenError(f"{what}{which} failed with {error_info(code).name}: {detail}", code=code)


def create_delegation_token(client, *, renewers: Iterable[str] = (), max_lifetime_ms: int = -1,
                            owner: str | None = None, wait: bool = True) -> DelegationToken:
    """A new token owned by the authenticated principal (or `owner`, e.g. ``User:etl``, KIP-373, which needs the
    right to create tokens for it); `renewers` (``User:name``) may renew it too; `max_lifetime_ms` -1 takes the
    broker's ``delegation.token.max.lifetime.ms``.

    A KRaft controller creates the token and the brokers learn of it from the metadata log a moment later; until
    then they refuse it. With `wait` (the default) this returns once every broker lists the token (or logs a
    warning after ``request.timeout.ms``)."""
    renewer_list = [{"principal_type": k, "principal_name": n} for k, n in map(_principal, renewers)]
    owner_kind, owner_name = _principal(owner) if owner else (None, None)

    def body(version: int) -> dict:
        if owner and version < 3:
            raise DelegationTokenError("creating a token for another owner needs CreateDelegationToken v3 "
                                       "(Kafka 3.3+); the broker speaks an older version")
        return {"owner_principal_type": owner_kind, "owner_principal_name": owner_name, "renewers": renewer_list,
                "max_lifetime_ms": int(max_lifetime_ms)}

    response = client.send_to(None, m.CREATE_DELEGATION_TOKEN, body, what="CreateDelegationToken")
    _check(response, "creating a delegation token", client)
    token = DelegationToken(
        token_id=response["token_id"], hmac=Secret(base64.b64encode(bytes(response["hmac"])).decode("ascii")),
        owner=_principal_text(response.get("principal_type"), response.get("principal_name")) or "",
        requester=_principal_text(response.get("token_requester_principal_type"),
                                  response.get("token_requester_principal_name")),
        issued_ms=response["issue_timestamp_ms"], expiry_ms=response["expiry_timestamp_ms"],
        max_timestamp_ms=response["max_timestamp_ms"], renewers=tuple(f"{k}:{n}" for k, n in map(_principal, renewers)))
    if wait:
        _wait_until_listed(client, token)
    return token


def _wait_until_listed(client, token: DelegationToken) -> None:
    """Poll DescribeDelegationToken on every broker until each lists `token` (request.timeout.ms at most)."""
    deadline = time.monotonic() + client.config.request_timeout_ms / 1000.0
    waiting = sorted(client.metadata.brokers)
    body = {"owners": [dict(zip(("principal_type", "principal_name"), _principal(token.owner)))]}
    while waiting:
        node = waiting[0]
        response = client.send_to(node, m.DESCRIBE_DELEGATION_TOKEN, body, what="DescribeDelegationToken")
        if any(t["token_id"] == token.token_id for t in response.get("tokens") or ()):
            waiting.pop(0)
            continue
        if time.monotonic() > deadline:
            log.warning("delegation token %s was created but broker(s) %s do not list it after request.timeout.ms "
                        "(%d ms): they refuse it until their metadata catches up", token.token_id, waiting,
                        client.config.request_timeout_ms)
            return
        time.sleep(0.05)


def renew_delegation_token(client, token: Union[DelegationToken, Secret, bytes, str],
                           renew_period_ms: int = -1) -> int:
    """Push the token's expiry `renew_period_ms` from now (-1: ``delegation.token.expiry.time.ms``), never past its
    maximum lifetime; returns the new expiry (epoch ms). Only the owner and the renewers may."""
    body = {"hmac": _hmac_bytes(token), "renew_period_ms": int(renew_period_ms)}
    response = client.send_to(None, m.RENEW_DELEGATION_TOKEN, body, what="RenewDelegationToken")
    _check(response, "renewing delegation token", client, getattr(token, "token_id", None))
    return response["expiry_timestamp_ms"]


def expire_delegation_token(client, token: Union[DelegationToken, Secret, bytes, str],
                            expiry_period_ms: int = -1) -> int:
    """Make the token expire `expiry_period_ms` from now (-1: at once, after which brokers refuse it); returns the
    new expiry (epoch ms)."""
    body = {"hmac": _hmac_bytes(token), "expiry_time_period_ms": int(expiry_period_ms)}
    response = client.send_to(None, m.EXPIRE_DELEGATION_TOKEN, body, what="ExpireDelegationToken")
    _check(response, "expiring delegation token", client, getattr(token, "token_id", None))
    return response["expiry_timestamp_ms"]


def describe_delegation_tokens(client, owners: Iterable[str] | None = None) -> list[DelegationToken]:
    """The tokens of `owners` (``User:name``; None: every token the principal may see), HMACs as :class:`Secret`."""
    owner_list = None if owners is None else \
        [{"principal_type": k, "principal_name": n} for k, n in map(_principal, owners)]
    response = client.send_to(None, m.DESCRIBE_DELEGATION_TOKEN, {"owners": owner_list},
                              what="DescribeDelegationToken")
    _check(response, "describing delegation tokens", client)
    return [DelegationToken(
        token_id=t["token_id"], hmac=Secret(base64.b64encode(bytes(t["hmac"])).decode("ascii")),
        owner=_principal_text(t.get("principal_type"), t.get("principal_name")) or "",
        requester=_principal_text(t.get("token_requester_principal_type"), t.get("token_requester_principal_name")),
        issued_ms=t["issue_timestamp"], expiry_ms=t["expiry_timestamp"], max_timestamp_ms=t["max_timestamp"],
        renewers=tuple(_principal_text(r["principal_type"], r["principal_name"]) for r in t.get("renewers") or ()))
        for t in response.get("tokens") or ()]
