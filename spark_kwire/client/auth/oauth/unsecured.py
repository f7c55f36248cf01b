"""Unsecured (unsigned) JWTs for local development, as Kafka's default login handler makes them from its JAAS options
(read into :class:`~spark_kwire.client.settings.logins.UnsecuredToken` by the settings).

``OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="alice";`` makes a token ``{"alg":"none"}``
with claims ``sub``, ``iat`` and ``exp`` (``unsecuredLoginLifetimeSeconds``, default 3600). Also read:
``unsecuredLoginStringClaim_<name>``, ``unsecuredLoginNumberClaim_<name>``, ``unsecuredLoginListClaim_<name>``
(the first character separates the items, e.g. ``",read,write"``), ``unsecuredLoginPrincipalClaimName``
(default ``sub``) and ``unsecuredLoginExtension_<name>`` (SASL extensions). Brokers accept such tokens only
with Kafka's unsecured validator (no ``sasl.server.callback.handler.class``): never in production.
"""

from __future__ import annotations

import base64
import json
import time

from spark_kwire.client.auth.oauth import OAuthToken, TokenSource
from spark_kwire.client.settings.logins import UnsecuredToken
from spark_kwire.client.settings.secret import Secret

__all__ = ["UnsecuredTokenSource"]


def _b64(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode("utf-8")).rstrip(b"=").decode()


class UnsecuredTokenSource(TokenSource):
    """See the module docstring."""

    def __init__(self, token: UnsecuredToken) -> None:
        self.claims = {name: list(value) if isinstance(value, tuple) else value for name, value in token.claims}
        self.extensions = dict(token.extensions)
        self.principal_claim = token.principal_claim
        self.lifetime_s = token.lifetime_s
        self.description = f"unsecured token for {self.claims[self.principal_claim]!r}"

    @property
    def principal(self) -> str:
        return str(self.claims[self.principal_claim])

    def cache_key(self) -> tuple:
        return ("unsecured", json.dumps(self.claims, sort_keys=True), self.lifetime_s,
                tuple(sorted(self.extensions.items())))

    def fetch(self) -> OAuthToken:
        now = time.time()
        claims = {"exp": round(now + self.lifetime_s, 3), "iat": round(now, 3), **self.claims}
        token = f"{_b64({'alg': 'none'})}.{_b64(claims)}."
        return OAuthToken(Secret(token), now + self.lifetime_s, self.principal, now, dict(self.extensions))
