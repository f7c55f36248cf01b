"""An OAuth access token as OAUTHBEARER sends it, and what can be read from a JWT without verifying it."""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass, field

from spark_kwire.client.settings.secret import Secret

__all__ = ["OAuthToken", "jwt_claims"]


@dataclass(frozen=True)
class OAuthToken:
    """A bearer token: ``value`` (a :class:`Secret`), ``expires_at`` (epoch seconds), who it names, and SASL
    extensions to send with it. Never pickled: each process gets its own."""

    value: Secret
    expires_at: float
    principal: str | None = None
    issued_at: float | None = None  # epoch seconds; the refresh window counts from here when known
    extensions: dict = field(default_factory=dict)

    def remaining(self, now: float | None = None) -> float:
        return self.expires_at - (time.time() if now is None else now)

    def __repr__(self) -> str:
        return (f"OAuthToken(principal={self.principal!r}, expires_at={self.expires_at:.0f}, "
                f"extensions={sorted(self.extensions)})")

    __str__ = __repr__

    def __reduce__(self):
        raise TypeError("OAuthToken is not picklable: tokens stay in the process that fetched them")


def jwt_claims(token: str) -> dict | None:
    """The claims of a JWS compact token (``header.payload.signature``), not verified; ``None`` if it is not one.

    The broker verifies tokens; the client only reads ``exp``, ``iat`` and the subject to plan refreshes.
    """
    parts = token.split(".")
    if len(parts) != 3:
        return None
    payload = parts[1]
    try:
        data = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
        claims = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    return claims if isinstance(claims, dict) else None
