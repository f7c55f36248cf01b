"""SASL/SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka speaks them.

:class:`ScramClient` is the client side of one exchange (client-first, client-final, then the server signature
is verified); :class:`ScramMechanism` plugs it into the mechanism interface.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from typing import Mapping

from spark_kwire.client.auth.sasl.credentials import UserPasswordMechanism
from spark_kwire.client.auth.sasl.mechanism import SaslMechanismError, SaslSession
from spark_kwire.client.settings.secret import Secret

__all__ = ["ScramClient", "ScramError", "ScramMechanism", "SCRAM_MIN_ITERATIONS"]

SCRAM_MIN_ITERATIONS = 4096  # RFC 7677 / Kafka's minimum


class ScramError(SaslMechanismError):
    """A SCRAM exchange step failed on the client side (bad server message or signature)."""


def _saslname(name: str) -> str:
    return name.replace("=", "=3D").replace(",", "=2C")


def _parse_scram_attributes(message: str) -> list[tuple[str, str]]:
    attrs = []
    for part in message.split(","):
        if len(part) < 2 or part[1] != "=" or not part[0].isalpha():
            raise ScramError("malformed SCRAM message from the broker")
        attrs.append((part[0], part[2:]))
    return attrs


class ScramClient:
    """Client side of SCRAM-SHA-256 / SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka speaks it.

    ``first_message()`` -> client-first; ``respond(server_first)`` -> client-final; ``respond(server_final)``
    verifies the server signature (raises :class:`ScramError` if it does not match) and returns ``None``.
    """

    def __init__(self, mechanism: str, username: str, password: Secret,
                 extensions: Mapping[str, str] | None = None, nonce: str | None = None) -> None:
        if mechanism not in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
            raise ValueError(f"unsupported SCRAM mechanism {mechanism}")
        self.mechanism = mechanism
        self._hash = hashlib.sha256 if mechanism == "SCRAM-SHA-256" else hashlib.sha512
        self._hash_name = "sha256" if mechanism == "SCRAM-SHA-256" else "sha512"
        self._username = username
        self._password = password
        self._extensions = dict(extensions or {})
        self._nonce = nonce or base64.b64encode(secrets.token_bytes(24)).decode("ascii").replace(",", "-")
        self._client_first_bare = ""
        self._server_signature: bytes | None = None
        self._state = "initial"
        self.complete = False

    def __repr__(self) -> str:
        return f"ScramClient({self.mechanism}, user={self._username!r}, state={self._state})"

    def _hmac(self, key: bytes, data: bytes) -> bytes:
        return hmac.new(key, data, self._hash).digest()

    def first_message(self) -> bytes:
        ext = "".join(f",{k}={v}" for k, v in self._extensions.items())
        self._client_first_bare = f"n={_saslname(self._username)},r={self._nonce}{ext}"
        self._state = "first-sent"
        return ("n,," + self._client_first_bare).encode("utf-8")

    def respond(self, challenge: bytes) -> bytes | None:
        if self._state == "first-sent":
            return self._client_final(challenge)
        if self._state == "final-sent":
            self._verify_server_final(challenge)
            return None
        raise ScramError(f"unexpected SCRAM message in state {self._state}")

    def _client_final(self, challenge: bytes) -> bytes:
        try:
            server_first = challenge.decode("utf-8")
        except UnicodeDecodeError:
            raise ScramError("the broker's server-first-message is not UTF-8") from None
        attrs = _parse_scram_attributes(server_first)
        if attrs and attrs[0][0] == "m":
            raise ScramError("the broker requires a SCRAM extension this client does not know")
        values = dict(attrs)
        nonce, salt_b64, iterations_text = values.get("r"), values.get("s"), values.get("i")
        if nonce is None or salt_b64 is None or iterations_text is None:
            raise ScramError("the broker's server-first-message lacks the nonce, salt or iteration count")
        if not nonce.startswith(self._nonce) or len(nonce) <= len(self._nonce):
            raise ScramError("the broker's nonce does not extend the client nonce")
        try:
            salt = base64.b64decode(salt_b64, validate=True)
        except (ValueError, TypeError):
            raise ScramError("the broker's salt is not valid base64") from None
        if not iterations_text.isdigit():
            raise ScramError("the broker's iteration count is not a number")
        iterations = int(iterations_text)
        if iterations < SCRAM_MIN_ITERATIONS:
            raise ScramError(f"the broker asked for {iterations} iterations, fewer than the minimum "
                             f"{SCRAM_MIN_ITERATIONS}")
        salted = hashlib.pbkdf2_hmac(self._hash_name, self._password.reveal().encode("utf-8"), salt, iterations)
        client_key = self._hmac(salted, b"Client Key")
        stored_key = self._hash(client_key).digest()
        without_proof = f"c={base64.b64encode(b'n,,').decode('ascii')},r={nonce}"
        auth_message = f"{self._client_first_bare},{server_first},{without_proof}".encode("utf-8")
        client_signature = self._hmac(stored_key, auth_message)
        proof = bytes(a ^ b for a, b in zip(client_key, client_signature))
        server_key = self._hmac(salted, b"Server Key")
        self._server_signature = self._hmac(server_key, auth_message)
        self._state = "final-sent"
        return f"{without_proof},p={base64.b64encode(proof).decode('ascii')}".encode("utf-8")

    def _verify_server_final(self, challenge: bytes) -> None:
        try:
            attrs = dict(_parse_scram_attributes(challenge.decode("utf-8")))
        except UnicodeDecodeError:
            raise ScramError("the broker's server-final-message is not UTF-8") from None
        if "e" in attrs:
            raise ScramError(f"the broker rejected the authentication: {attrs['e']}")
        signature_b64 = attrs.get("v")
        if signature_b64 is None:
            raise ScramError("the broker's server-final-message has no server signature")
        try:
            signature = base64.b64decode(signature_b64, validate=True)
        except (ValueError, TypeError):
            raise ScramError("the broker's server signature is not valid base64") from None
        if self._server_signature is None or not hmac.compare_digest(signature, self._server_signature):
            raise ScramError("the broker's server signature does not verify: the broker does not know this "
                             "user's SCRAM credentials (or something is intercepting the connection)")
        self._state = "done"
        self.complete = True


class _ScramSession(SaslSession):
    def __init__(self, client: ScramClient) -> None:
        self._client = client

    def challenge(self, data: bytes) -> tuple[bool, bytes | None]:
        reply = self._client.respond(data)
        return self._client.complete, reply


class ScramMechanism(UserPasswordMechanism):
    def begin(self, host: str) -> tuple[SaslSession, bytes]:
        client = ScramClient(self.name, self.principal, self.password, self.extensions)
        return _ScramSession(client), client.first_message()
