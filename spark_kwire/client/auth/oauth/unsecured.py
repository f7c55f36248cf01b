"""Unsecured (unsigned) JWTs for local development, from the JAAS options Kafka's default login handler reads.

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
from typing import Mapping

from spark_kwire.client.config import Secret
from spark_kwire.client.errors import ConfigError
from spark_kwire.client.auth.oauth import OAuthToken, TokenSource

__all__ = ["UnsecuredTokenSource", "UNSECURED_PREFIX"]

UNSECURED_PREFIX = "unsecuredLogin"
_STRING, _NUMBER, _LIST = "unsecuredLoginStringClaim_", "unsecuredLoginNumberClaim_", "unsecuredLoginListClaim_"
_EXTENSION = "unsecuredLoginExtension_"
_KNOWN = {"unsecuredLoginLifetimeSeconds", "unsecuredLoginPrincipalClaimName", "unsecuredLoginScopeClaimName"}


def _b64(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode("utf-8")).rstrip(b"=").decode()


def _jaas_error(reason: str) -> ConfigError:
    return ConfigError("sasl.jaas.config", Secret(""), reason=reason)


class UnsecuredTokenSource(TokenSource):
    """See the module docstring."""

    def __init__(self, options: Mapping[str, str]) -> None:
        self.claims: dict = {}
        self.extensions: dict[str, str] = {}
        for key, value in options.items():
            if not key.startswith(UNSECURED_PREFIX):
                continue
            if key.startswith(_STRING):
                self.claims[key[len(_STRING):]] = value
            elif key.startswith(_NUMBER):
                try:
                    number = float(value)
                except ValueError:
                    raise _jaas_error(f"{key} must be a number") from None
                self.claims[key[len(_NUMBER):]] = int(number) if number.is_integer() else number
            elif key.startswith(_LIST):
                separator, items = (value[:1], value[1:]) if value else (",", "")
                self.claims[key[len(_LIST):]] = [item for item in items.split(separator) if item]
            elif key.startswith(_EXTENSION):
                self.extensions[key[len(_EXTENSION):]] = value
            elif key not in _KNOWN:
                raise _jaas_error(f"unknown option {key} (known: {_STRING}<name>, {_NUMBER}<name>, {_LIST}<name>, "
                                  f"{_EXTENSION}<name>, {', '.join(sorted(_KNOWN))})")
        for reserved in ("iat", "exp"):
            if reserved in self.claims:
                raise _jaas_error(f"the claim {reserved!r} is set by the client; remove it")
        self.principal_claim = (options.get("unsecuredLoginPrincipalClaimName") or "sub").strip()
        subject = self.claims.get(self.principal_claim)
        if not isinstance(subject, str) or not subject.strip():
            raise _jaas_error(f"an unsecured token needs its principal: set unsecuredLoginStringClaim_"
                              f"{self.principal_claim}=\"<name>\"")
        try:
            self.lifetime_s = int(options.get("unsecuredLoginLifetimeSeconds") or 3600)
        except ValueError:
            raise _jaas_error("unsecuredLoginLifetimeSeconds must be a whole number of seconds") from None
        if self.lifetime_s <= 0:
            raise _jaas_error("unsecuredLoginLifetimeSeconds must be positive")
        self.description = f"unsecured token for {subject!r}"

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
