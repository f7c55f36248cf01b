"""OAuth 2 client credentials (KIP-768): POST ``grant_type=client_credentials`` to a token endpoint.

As Kafka's Java client does it: the client id and secret go in an HTTP Basic ``Authorization`` header
(URL-encoded first only when ``sasl.oauthbearer.header.urlencode=true``), ``scope`` in the form body when set;
the answer's ``access_token`` is the token, its JWT ``exp`` (or the answer's ``expires_in``) its expiry. HTTP
400, 401, 403, 404 and the like are answered at once with a clear error naming the endpoint and the provider's
``error`` / ``error_description``; connection failures, timeouts and 5xx answers are retried with
``sasl.login.retry.backoff.ms`` doubling, for at most ``sasl.login.retry.backoff.max.ms`` (10 s), each attempt
bounded by ``request.timeout.ms`` (or ``sasl.login.connect.timeout.ms`` / ``sasl.login.read.timeout.ms``).

An ``https`` endpoint is verified with the same trust options as the brokers (``ssl.truststore.location``,
``ssl.ca.location``...) plus the system's CAs, or with ``ssl.*`` options in the JAAS line (as Java reads them).
A ``file:`` endpoint URL reads the token from that file at every refresh.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import socket
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request

from spark_kwire.client.settings.secret import Secret
from spark_kwire.client.auth.oauth import OAuthToken, TokenError, TokenSource, jwt_claims

__all__ = ["ClientCredentialsSource", "FileTokenSource", "display_url"]

log = logging.getLogger(__name__)

# Answers that retrying cannot fix (as the Java client's list)
_UNRETRYABLE_STATUS = {400, 401, 402, 403, 404, 405, 406, 407, 409, 410, 411, 412, 413, 414, 415}
_MAX_ERROR_BODY = 64 * 1024
_MAX_TOKEN_RESPONSE = 1024 * 1024


def display_url(url: str) -> str:
    """``url`` without user info or query string (either may carry credentials)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


def _digest(secret: Secret | None) -> str:
    return hashlib.sha256(secret.reveal().encode("utf-8")).hexdigest() if secret is not None else ""


def _describe_error_body(body: bytes) -> tuple[str | None, str]:
    """(OAuth error code, readable detail) from an error answer; the body of an error never holds a token."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        code = data.get("error") or data.get("errorCode")
        description = data.get("error_description") or data.get("errorSummary") or ""
        if code:
            return str(code), f"{code}: {description}".rstrip(": ") if description else str(code)
    snippet = " ".join(text.split())[:300]
    return None, snippet or "(empty answer)"


def token_from_answer(access_token: str, answer: dict, *, principal_claim: str, fallback_principal: str,
                      where: str) -> OAuthToken:
    """An :class:`OAuthToken` from a token endpoint's answer; its expiry from the JWT or ``expires_in``."""
    now = time.time()
    claims = jwt_claims(access_token) or {}
    expires_at = claims.get("exp")
    if not isinstance(expires_at, (int, float)) or isinstance(expires_at, bool):
        expires_in = answer.get("expires_in")
        try:
            expires_at = now + float(expires_in) if expires_in is not None else None
        except (TypeError, ValueError):
            expires_at = None
    if expires_at is None:
        raise TokenError(f"the token from {where} has no expiry: it is not a JWT with an 'exp' claim and the answer "
                         f"has no 'expires_in'", source=where)
    issued_at = claims.get("iat") if isinstance(claims.get("iat"), (int, float)) else None
    principal = claims.get(principal_claim)
    return OAuthToken(Secret(access_token), float(expires_at), str(principal) if principal else fallback_principal,
                      float(issued_at) if issued_at is not None else None)


class ClientCredentialsSource(TokenSource):
    """Tokens from an OAuth 2 token endpoint with the client-credentials grant (see the module docstring)."""

    def __init__(self, endpoint: str, client_id: str, client_secret: Secret, scope: str | None = None, *,
                 ssl_context: ssl.SSLContext | None = None, attempt_timeout_s: float = 30.0,
                 retry_backoff_ms: int = 100, retry_backoff_max_ms: int = 10_000, urlencode_header: bool = False,
                 principal_claim: str = "sub", trust_key: tuple = ()) -> None:
        self.endpoint = endpoint
        self.client_id = client_id
        self._client_secret = client_secret
        self.scope = scope
        self._ssl_context = ssl_context
        self.attempt_timeout_s = attempt_timeout_s
        self.retry_backoff_ms = retry_backoff_ms
        self.retry_backoff_max_ms = retry_backoff_max_ms
        self.urlencode_header = urlencode_header
        self.principal_claim = principal_claim
        self._trust_key = trust_key
        self.description = f"token endpoint {display_url(endpoint)}"

    @property
    def principal(self) -> str:
        return self.client_id

    @property
    def who(self) -> str:
        return f"client {self.client_id!r} ({self.description})"

    def __repr__(self) -> str:
        return f"ClientCredentialsSource({display_url(self.endpoint)}, client_id={self.client_id!r}, scope={self.scope!r})"

    def cache_key(self) -> tuple:
        return ("client_credentials", self.endpoint, self.client_id, _digest(self._client_secret), self.scope,
                self.urlencode_header, self.principal_claim, self._trust_key)

    # -- the request --------------------------------------------------------------------------------------
    def _request(self) -> urllib.request.Request:
        client_id, secret = self.client_id, self._client_secret.reveal()
        if self.urlencode_header:
            client_id, secret = urllib.parse.quote_plus(client_id), urllib.parse.quote_plus(secret)
        basic = base64.b64encode(f"{client_id}:{secret}".encode("utf-8")).decode("ascii")
        form = {"grant_type": "client_credentials"}
        if self.scope:
            form["scope"] = self.scope
        return urllib.request.Request(
            self.endpoint, data=urllib.parse.urlencode(form).encode("ascii"), method="POST",
            headers={"Authorization": f"Basic {basic}", "Accept": "application/json", "Cache-Control": "no-cache",
                     "Content-Type": "application/x-www-form-urlencoded"})

    def _where(self) -> str:
        return f"{self.description} for client {self.client_id!r}"

    def _fail(self, detail: str, *, status: int | None = None, error: str | None = None) -> TokenError:
        return TokenError(f"OAUTHBEARER token request to {self._where()} failed: {detail}",
                          source=display_url(self.endpoint), status=status, error=error)

    def fetch(self) -> OAuthToken:
        started = time.monotonic()
        budget_end = started + self.retry_backoff_max_ms / 1000.0
        attempt = 0
        while True:
            attempt += 1
            try:
                return self._attempt()
            except _Retriable as exc:
                left = budget_end - time.monotonic()
                delay = min(self.retry_backoff_ms / 1000.0 * 2 ** (attempt - 1), left)
                if delay <= 0:
                    raise self._fail(f"{exc} (gave up after {attempt} attempt{'s' * (attempt > 1)} in "
                                     f"{time.monotonic() - started:.1f} s; sasl.login.retry.backoff.max.ms="
                                     f"{self.retry_backoff_max_ms})", status=exc.status) from None
                log.debug("OAUTHBEARER token request to %s failed (attempt %d), retrying in %.2f s: %s",
                          self._where(), attempt, delay, exc)
                time.sleep(delay)

    def _attempt(self) -> OAuthToken:
        try:
            with urllib.request.urlopen(self._request(), timeout=self.attempt_timeout_s,
                                        context=self._ssl_context) as answer:
                body = answer.read(_MAX_TOKEN_RESPONSE + 1)
        except urllib.error.HTTPError as exc:
            try:
                error_body = exc.read(_MAX_ERROR_BODY)
            except OSError:
                error_body = b""
            error, detail = _describe_error_body(error_body)
            if exc.code in _UNRETRYABLE_STATUS:
                raise self._fail(f"HTTP {exc.code} {detail}", status=exc.code, error=error) from None
            raise _Retriable(f"HTTP {exc.code} {detail}", exc.code) from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, ssl.SSLCertVerificationError):
                raise self._fail(f"the TLS certificate of the token endpoint is not trusted "
                                 f"({reason.verify_message or reason}); set ssl.truststore.location or "
                                 f"ssl.ca.location to the CA that signed it") from None
            if isinstance(reason, ssl.SSLError):
                raise self._fail(f"TLS with the token endpoint failed: {reason.reason or reason}") from None
            text = getattr(reason, "strerror", None) or str(reason)
            raise _Retriable(f"cannot reach the token endpoint: {text}") from None
        except (socket.timeout, TimeoutError):
            raise _Retriable(f"no answer within {self.attempt_timeout_s:.0f} s") from None
        except (ConnectionError, OSError) as exc:
            raise _Retriable(f"cannot reach the token endpoint: {exc.strerror or exc}") from None
        if len(body) > _MAX_TOKEN_RESPONSE:
            raise self._fail("the answer is larger than 1 MiB")
        try:
            answer = json.loads(body)
        except ValueError:
            raise self._fail("the answer is not JSON") from None
        access_token = answer.get("access_token") if isinstance(answer, dict) else None
        if not isinstance(access_token, str) or not access_token.strip():
            keys = sorted(answer) if isinstance(answer, dict) else type(answer).__name__
            raise self._fail(f"the answer has no access_token (it has {keys})")
        return token_from_answer(access_token.strip(), answer, principal_claim=self.principal_claim,
                                 fallback_principal=self.client_id, where=self._where())


class _Retriable(Exception):
    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class FileTokenSource(TokenSource):
    """A token read from a file at every refresh (``sasl.oauthbearer.token.endpoint.url=file:/path``)."""

    def __init__(self, path: str, principal_claim: str = "sub") -> None:
        self.path = path
        self.principal_claim = principal_claim
        self.description = f"token file {path}"

    def cache_key(self) -> tuple:
        return ("file", self.path, self.principal_claim)

    def fetch(self) -> OAuthToken:
        try:
            with open(self.path, encoding="utf-8") as f:
                text = f.read(_MAX_TOKEN_RESPONSE).strip()
        except OSError as exc:
            raise TokenError(f"cannot read the OAUTHBEARER token from {self.description}: {exc.strerror or exc}",
                             source=self.path) from None
        if not text:
            raise TokenError(f"the {self.description} is empty", source=self.path)
        return token_from_answer(text, {}, principal_claim=self.principal_claim,
                                 fallback_principal=os.path.basename(self.path), where=self.description)
