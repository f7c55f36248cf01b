"""A real OAuth 2 authorization server on loopback for OAUTHBEARER tests: it issues RS256-signed JWTs that a Kafka
broker validates against its JWKS.

* ``POST /token``: the client-credentials grant. Client id and secret in HTTP Basic (as Kafka's Java client and
  librdkafka send them) or in the form (``client_secret_post``, as MSAL / azure-identity send them); a wrong one
  gets HTTP 401 ``{"error": "invalid_client"}``. The token's ``sub`` is the client id, ``scope`` the requested
  scope; ``token_lifetime_s`` (changeable at any time) sets ``exp``. ``reject_with = 503`` (or any status) makes
  every token request fail.
* ``GET /jwks``: the public key (``kid`` listed), for the broker's ``sasl.oauthbearer.jwks.endpoint.url``.
* ``GET /<tenant>/v2.0/.well-known/openid-configuration`` and ``/.well-known/openid-configuration``: discovery
  documents naming the token endpoint (what MSAL fetches before asking for a token).

``https=True`` serves TLS with the harness certificates (``certs`` from :func:`generate_test_certificates`);
``keys_from=other`` and ``issuer=other.issuer`` make a second provider (e.g. the https one) whose tokens a broker
configured for the first accepts.
``issued`` lists every token issued (client id, scope, process id header, time); ``mint()`` signs a token
directly (what a provider callable returns in tests) and ``mint(foreign_key=True)`` signs one with a key the
JWKS does not list. :meth:`broker_properties` gives the ``server.properties`` of a broker listener that
validates this provider's tokens, :meth:`broker_system_properties` the JVM property Kafka 4 needs to allow its
URLs. Needs ``pyjwt`` and ``cryptography`` (the ``test`` extra).
"""

from __future__ import annotations

import base64
import json
import ssl
import threading
import time
import urllib.parse
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["OAuthProvider", "IssuedToken"]

KAFKA_VALIDATOR = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
KAFKA_LOGIN_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
BROKER_JWT_VALIDATOR = "org.apache.kafka.common.security.oauthbearer.BrokerJwtValidator"


@dataclass
class IssuedToken:
    client_id: str
    scope: str | None
    expires_at: float
    issued_at: float
    client_pid: str | None = None  # the X-Client-Pid header, when a test's client sends one
    auth: str = "basic"  # "basic" or "post"


@dataclass
class _Keys:
    private_pem: bytes
    jwk: dict
    kid: str


def _new_keys() -> _Keys:
    import jwt
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    kid = uuid.uuid4().hex[:16]
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    jwk.update(kid=kid, use="sig", alg="RS256")
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    return _Keys(pem, jwk, kid)


class OAuthProvider:
    """See the module docstring. Use as a context manager or call :meth:`start` / :meth:`stop`."""

    def __init__(self, clients: dict[str, str] | None = None, *, token_lifetime_s: float = 3600,
                 audience: str | None = "kafka", https: bool = False, certs=None, issuer: str | None = None,
                 keys_from: "OAuthProvider | None" = None) -> None:
        self.clients = dict(clients or {})
        self.token_lifetime_s = token_lifetime_s
        self.audience = audience
        self.https = https
        self.certs = certs
        if https and certs is None:
            raise ValueError("https=True needs certs (harness.generate_test_certificates)")
        self.reject_with: int | None = None
        self.issued: list[IssuedToken] = []
        self.failed_requests = 0
        self._issuer = issuer
        self._keys = keys_from._keys if keys_from is not None else _new_keys()
        self._foreign_keys = _new_keys()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # -- addresses -------------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"{'https' if self.https else 'http'}://127.0.0.1:{self.port}"

    @property
    def issuer(self) -> str:
        return self._issuer or self.url

    @property
    def token_endpoint(self) -> str:
        return f"{self.url}/token"

    @property
    def jwks_url(self) -> str:
        return f"{self.url}/jwks"

    @property
    def tokens_issued(self) -> int:
        with self._lock:
            return len(self.issued)

    # -- tokens ----------------------------------------------------------------------------------------
    def mint(self, subject: str = "kwire-test", *, lifetime_s: float | None = None, scope: str | None = None,
             foreign_key: bool = False, audience: str | None = None, extra_claims: dict | None = None) -> str:
        """A signed JWT for ``subject`` (``foreign_key``: signed with a key the JWKS does not list)."""
        import jwt

        keys = self._foreign_keys if foreign_key else self._keys
        now = time.time()
        claims = {"iss": self.issuer, "sub": subject, "iat": int(now),
                  "exp": int(now + (self.token_lifetime_s if lifetime_s is None else lifetime_s)),
                  "jti": uuid.uuid4().hex}
        aud = audience if audience is not None else self.audience
        if aud:
            claims["aud"] = aud
        if scope:
            claims["scope"] = scope
        claims.update(extra_claims or {})
        return jwt.encode(claims, keys.private_pem, algorithm="RS256", headers={"kid": keys.kid})

    def jwks(self) -> dict:
        return {"keys": [self._keys.jwk]}

    # -- broker settings -------------------------------------------------------------------------------
    def broker_properties(self, listener: str, *, reauth_ms: int | None = None) -> dict[str, str]:
        """server.properties of an OAUTHBEARER listener (by name) that validates this provider's tokens."""
        name = listener.lower()
        props = {
            f"listener.name.{name}.sasl.enabled.mechanisms": "OAUTHBEARER",
            f"listener.name.{name}.oauthbearer.sasl.server.callback.handler.class": KAFKA_VALIDATOR,
            f"listener.name.{name}.oauthbearer.sasl.jaas.config": f"{KAFKA_LOGIN_MODULE} required ;",
        }
        # Kafka 4.1.1's default sasl.oauthbearer.jwt.validator.class (DefaultJwtValidator), created by the
        # validator callback handler without a key resolver, falls back to ClientJwtValidator, which checks the
        # claims but no signature: a token signed by any key passes. Name the broker validator explicitly.
        settings = {"sasl.oauthbearer.jwt.validator.class": BROKER_JWT_VALIDATOR,
                    "sasl.oauthbearer.jwks.endpoint.url": self.jwks_url,
                    "sasl.oauthbearer.expected.issuer": self.issuer}
        if self.audience:
            settings["sasl.oauthbearer.expected.audience"] = self.audience
        for key, value in settings.items():
            props[key] = value
            props[f"listener.name.{name}.oauthbearer.{key}"] = value
        if reauth_ms is not None:
            props[f"listener.name.{name}.oauthbearer.connections.max.reauth.ms"] = str(reauth_ms)
        return props

    def broker_system_properties(self) -> dict[str, str]:
        """The JVM system property with which Kafka 4 allows this provider's URLs (for brokers and Java clients)."""
        return {"org.apache.kafka.sasl.oauthbearer.allowed.urls": f"{self.jwks_url},{self.token_endpoint}"}

    # -- life cycle ------------------------------------------------------------------------------------
    def start(self) -> "OAuthProvider":
        provider = self

        class Handler(_Handler):
            owner = provider

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        if self.https:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(str(self.certs.broker_keystore))
            server.socket = context.wrap_socket(server.socket, server_side=True)
        self._server = server
        self.port = server.server_address[1]
        self._thread = threading.Thread(target=server.serve_forever, name="oauth-provider", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def __enter__(self) -> "OAuthProvider":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- token requests --------------------------------------------------------------------------------
    def _token_answer(self, headers, form: dict[str, str]) -> tuple[int, dict]:
        if self.reject_with is not None:
            return self.reject_with, {"error": "temporarily_unavailable",
                                      "error_description": "the test switched token issuing off"}
        if form.get("grant_type") != "client_credentials":
            return 400, {"error": "unsupported_grant_type", "error_description": "only client_credentials"}
        auth = headers.get("Authorization") or ""
        if auth.startswith("Basic "):
            try:
                client_id, _, secret = base64.b64decode(auth[6:]).decode("utf-8").partition(":")
            except (ValueError, UnicodeDecodeError):
                return 400, {"error": "invalid_request", "error_description": "malformed Basic credentials"}
            how = "basic"
        else:
            client_id, secret, how = form.get("client_id", ""), form.get("client_secret", ""), "post"
        if client_id not in self.clients or self.clients[client_id] != secret:
            return 401, {"error": "invalid_client", "error_description": "Client authentication failed"}
        scope = form.get("scope")
        lifetime = self.token_lifetime_s
        token = self.mint(client_id, lifetime_s=lifetime, scope=scope)
        now = time.time()
        with self._lock:
            self.issued.append(IssuedToken(client_id, scope, now + lifetime, now, headers.get("X-Client-Pid"), how))
        return 200, {"access_token": token, "token_type": "Bearer", "expires_in": int(lifetime),
                     "ext_expires_in": int(lifetime), **({"scope": scope} if scope else {})}


class _Handler(BaseHTTPRequestHandler):
    owner: OAuthProvider
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args) -> None:  # keep test output clean
        pass

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        path = urllib.parse.urlsplit(self.path).path
        owner = self.owner
        if path == "/jwks":
            self._send(200, owner.jwks())
        elif path.endswith("/.well-known/openid-configuration"):
            base = owner.url + path[: -len("/.well-known/openid-configuration")]
            self._send(200, {"issuer": base, "token_endpoint": owner.token_endpoint, "jwks_uri": owner.jwks_url,
                             "authorization_endpoint": f"{base}/authorize",
                             "response_types_supported": ["code", "token"],
                             "subject_types_supported": ["public"],
                             "id_token_signing_alg_values_supported": ["RS256"]})
        else:
            self._send(404, {"error": "not_found"})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length).decode("utf-8", "replace") if length else ""
        form = dict(urllib.parse.parse_qsl(raw))
        path = urllib.parse.urlsplit(self.path).path
        if not path.endswith("/token"):
            self._send(404, {"error": "not_found"})
            return
        status, body = self.owner._token_answer(self.headers, form)
        if status != 200:
            with self.owner._lock:
                self.owner.failed_requests += 1
        self._send(status, body)
