"""SASL/OAUTHBEARER (RFC 7628) as Kafka speaks it (KIP-255).

The client's one message is ``n,,\\x01auth=Bearer <token>\\x01<name>=<value>\\x01...\\x01\\x01`` (GS2 header without
authorization id, the token, then SASL extensions such as Confluent Cloud's ``logicalCluster`` and
``identityPoolId``). An empty answer means success. A broker that refuses the token answers with a JSON
document (``{"status":"invalid_token",...}``), expects a lone ``\\x01`` and then fails the exchange; its reason
goes into the error. Tokens come from :mod:`spark_kwire.client.auth.oauth`, one per credential per process.
"""

from __future__ import annotations

import json

from spark_kwire.client.auth.oauth import OAuthToken, TokenSource
from spark_kwire.client.auth.oauth.refresh import shared_token
from spark_kwire.client.auth.oauth.selection import token_source
from spark_kwire.client.auth.sasl.mechanism import SaslMechanism, SaslSession
from spark_kwire.client.settings.logins import OAuthBearerLogin, RefreshPolicy, check_extensions

__all__ = ["OAuthBearerMechanism", "client_first_message"]

_SEPARATOR = "\x01"


def client_first_message(token: str, extensions: dict[str, str]) -> bytes:
    """The OAUTHBEARER initial client response (extensions in the given order)."""
    pairs = "".join(f"{_SEPARATOR}{name}={value}" for name, value in extensions.items())
    return f"n,,{_SEPARATOR}auth=Bearer {token}{pairs}{_SEPARATOR}{_SEPARATOR}".encode("utf-8")


def describe_server_error(data: bytes, token: OAuthToken | None = None) -> str:
    """The broker's reason (its JSON: status, scope, openid-configuration) and what the client knows of the token."""
    text = data.decode("utf-8", "replace").strip()
    try:
        doc = json.loads(text)
    except ValueError:
        doc = None
    if isinstance(doc, dict):
        parts = [f"{k}={doc[k]}" for k in ("status", "scope", "openid-configuration") if doc.get(k)]
        said = "the broker refused the token (" + (", ".join(parts) or text[:300]) + ")"
    else:
        said = "the broker refused the token: " + " ".join(text.split())[:300]
    if token is None:
        return said
    left = token.remaining()
    state = f"expired {-left:.0f} s ago" if left <= 0 else f"valid for {left:.0f} s more"
    return (f"{said}; the token for {token.principal!r} is {state} by its expiry: check its issuer, audience, "
            f"signing key and scope against the broker's sasl.oauthbearer.* settings (the broker's log names the "
            f"check that failed)")


class _OAuthBearerSession(SaslSession):
    def __init__(self, token: OAuthToken) -> None:
        self._token = token
        self.principal = token.principal

    def challenge(self, data: bytes) -> tuple[bool, bytes | None]:
        if not data:
            return True, None
        self.server_reason = describe_server_error(data, self._token)
        return False, _SEPARATOR.encode("ascii")  # acknowledges the error; the broker then fails the exchange


class OAuthBearerMechanism(SaslMechanism):
    name = "OAUTHBEARER"

    def __init__(self, source: TokenSource, extensions: dict[str, str], policy: RefreshPolicy,
                 label: str = "OAUTHBEARER") -> None:
        self.source = source
        self.extensions = dict(extensions)
        self.policy = policy
        self.label = label

    @classmethod
    def from_login(cls, login: OAuthBearerLogin) -> "OAuthBearerMechanism":
        return cls(token_source(login.token_source), dict(login.extensions), login.refresh, login.label)

    @property
    def principal(self) -> str:
        return self.source.principal

    @property
    def who(self) -> str:
        return self.source.who

    def shared_token(self):
        """This process's token holder for the credential (shared by every client and connection using it)."""
        return shared_token(self.source.cache_key(), self.source.fetch, self.policy, self.source.description)

    def begin(self, host: str) -> tuple[SaslSession, bytes]:
        token = self.shared_token().get()
        extensions = {**self.extensions, **check_extensions(dict(token.extensions), self.source.description)}
        return _OAuthBearerSession(token), client_first_message(token.value.reveal(), extensions)

    def __repr__(self) -> str:
        return f"OAuthBearerMechanism({self.label}, {self.source!r}, extensions={sorted(self.extensions)})"
