"""OAuth tokens for SASL/OAUTHBEARER: where they come from, and when they are refreshed.

Token sources (one module each):

* :mod:`.oidc`: OAuth 2 client credentials (KIP-768) against a token endpoint, configured as Java clients do
  (``sasl.login.callback.handler.class=...OAuthBearerLoginCallbackHandler``, ``sasl.oauthbearer.token.endpoint.url``,
  ``clientId``/``clientSecret``/``scope`` in ``sasl.jaas.config`` or Kafka 4.1's options), or a ``file:`` URL;
* :mod:`.provider`: a Python callable ``package.module:function`` returning ``(token, expiry epoch seconds)``;
* :mod:`.aws`: AWS MSK IAM, signed by ``aws-msk-iam-sasl-signer-python`` (extra ``spark-kwire[aws]``);
* :mod:`.azure`: Microsoft Entra ID through ``azure-identity`` (extra ``spark-kwire[azure]``);
* :mod:`.unsecured`: an unsigned JWT for local development (Kafka's ``unsecuredLoginStringClaim_sub``).

:mod:`.selection` makes the source a login's settings name (the options were read into them by
:mod:`spark_kwire.client.settings.oauth_options`); :mod:`.refresh` keeps one token per credential per process,
refreshed with Kafka's window semantics.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from spark_kwire.client.auth.oauth.token import OAuthToken, jwt_claims
from spark_kwire.client.auth.errors import AuthenticationError

__all__ = ["OAuthToken", "TokenError", "TokenSource", "jwt_claims"]


class TokenError(AuthenticationError):
    """No token could be had: the identity provider refused or could not be reached, or a provider failed.

    Not retriable by the client (each source retries what is worth retrying within its own budget). The
    message names the source (token endpoint, provider reference...) and never a secret.
    """

    def __init__(self, message: str, *, source: str | None = None, status: int | None = None,
                 error: str | None = None) -> None:
        self.source = source
        self.status = status  # HTTP status of the token endpoint, when there was one
        self.error = error  # the OAuth error code (invalid_client...), when the provider gave one
        super().__init__(message, mechanism="OAUTHBEARER")


class TokenSource(ABC):
    """Where a process gets tokens for one credential."""

    #: what to call the source in messages, e.g. "token endpoint https://idp/token"
    description: str = "token source"

    @property
    def principal(self) -> str:
        """Who the tokens are for, as far as known before fetching one (never a secret)."""
        return self.description

    @property
    def who(self) -> str:
        return self.principal

    @abstractmethod
    def cache_key(self) -> tuple:
        """Identifies the credential in the per-process token cache (digests of secrets, never secrets)."""

    @abstractmethod
    def fetch(self) -> OAuthToken:
        """A new token; raises :class:`TokenError`."""
