"""Security hooks for broker connections: TLS transport and SASL authentication (PLAIN, SCRAM-SHA-256/512).

The client layer calls :func:`security_hooks` once per :class:`~spark_kwire.client.cluster.KafkaClient`
and passes the two hooks to every :class:`~spark_kwire.client.connection.BrokerConnection`:

* ``transport_factory(sock, host) -> sock-like``: wraps the connected TCP socket in TLS (``SSL`` and
  ``SASL_SSL``) and completes the handshake, verifying the broker's certificate and host name.
* ``authenticate(conn) -> None``: runs after ApiVersions negotiation on a fresh connection: SaslHandshake v1
  and SaslAuthenticate exchanges via ``conn.request(api, body)`` (``SASL_PLAINTEXT`` and ``SASL_SSL``).

Options carry Kafka's Java client names (Spark's ``kafka.`` prefix removed), plus librdkafka's names for
the TLS files:

* ``security.protocol``: ``PLAINTEXT`` (default), ``SSL``, ``SASL_PLAINTEXT``, ``SASL_SSL``.
* ``sasl.mechanism``: ``PLAIN``, ``SCRAM-SHA-256``, ``SCRAM-SHA-512``.
* credentials: ``sasl.jaas.config`` (``<any LoginModule class> required username="..." password="...";``,
  whatever the class is called, e.g. Databricks' ``kafkashaded.org.apache.kafka...``), or
  ``sasl.username`` + ``sasl.password``.
* trust: ``ssl.truststore.location`` (a PEM file), ``ssl.ca.location`` (PEM file or directory),
  ``ssl.truststore.certificates`` / ``ssl.ca.pem`` (inline PEM); none of them: the system's trusted CAs.
  JKS and PKCS12 stores are refused with a message saying how to convert them.
* client certificate (mutual TLS): ``ssl.keystore.location`` (PEM holding certificate chain and key),
  ``ssl.certificate.location`` + ``ssl.key.location``, or inline ``ssl.keystore.certificate.chain`` +
  ``ssl.keystore.key`` (also ``ssl.certificate.pem`` + ``ssl.key.pem``); ``ssl.key.password`` for an
  encrypted key.
* ``ssl.endpoint.identification.algorithm``: ``https`` (default) verifies the broker's host name; an empty
  value (or ``none``) turns only that check off. ``ssl.enabled.protocols`` / ``ssl.protocol`` bound the TLS
  versions (TLSv1.2 and TLSv1.3 by default), ``ssl.cipher.suites`` takes OpenSSL cipher names.

Re-authentication (KIP-368): when SaslAuthenticate returns ``session_lifetime_ms`` (the broker sets
``connections.max.reauth.ms``), the connection re-authenticates before the session expires, like the Java
client, at a random point between 85% and 95% of the lifetime: the next request sent after that point first
waits for the answers in flight, then runs the SASL exchange again on the same connection.

Secrets (passwords, JAAS configs, private keys) stay in :class:`~spark_kwire.client.config.Secret` until the
moment they are used; no log line, exception, ``repr`` or pickle shows them.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import logging
import os
import random
import re
import secrets
import socket
import ssl
import tempfile
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

from spark_kwire.client.config import ClientConfig, Secret
from spark_kwire.client.errors import ClientError, ConfigError
from spark_kwire.protocol import messages as m
from spark_kwire.protocol.errors import KwireError, error_info

TransportFactory = Callable[[Any, str], Any]
Authenticator = Callable[[Any], None]

__all__ = [
    "SecurityHooks", "security_hooks", "TransportFactory", "Authenticator",
    "AuthenticationError", "TlsError", "JaasConfig", "parse_jaas_config", "build_ssl_context",
    "TlsTransport", "SaslAuthenticator", "ScramClient", "SUPPORTED_SASL_MECHANISMS",
]

log = logging.getLogger(__name__)

SUPPORTED_SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
SCRAM_MIN_ITERATIONS = 4096  # RFC 7677 / Kafka's minimum
_REAUTH_WINDOW = (0.85, 0.95)  # fraction of the session lifetime after which to re-authenticate (as Java)

_UNSUPPORTED_SASL_MECHANISM = 33
_ILLEGAL_SASL_STATE = 34


# -- errors ----------------------------------------------------------------------------------------------

class AuthenticationError(ClientError):
    """SASL authentication with a broker failed (wrong credentials, mechanism not enabled...). Not retriable.

    ``mechanism`` and ``broker`` (host:port) say where; the message never contains a secret.
    """

    retriable = False

    def __init__(self, message: str, *, mechanism: str | None = None, broker: str | None = None,
                 code: int | None = None) -> None:
        self.mechanism = mechanism
        self.broker = broker
        self.code = code
        super().__init__(message)


class TlsError(ClientError):
    """The TLS handshake with a broker failed (untrusted certificate, host name mismatch...). Not retriable."""

    retriable = False

    def __init__(self, message: str, *, host: str | None = None, port: int | None = None,
                 verify_code: int | None = None) -> None:
        self.host = host
        self.port = port
        self.verify_code = verify_code
        super().__init__(message)


# -- hooks -----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SecurityHooks:
    transport_factory: Optional[TransportFactory] = None
    authenticate: Optional[Authenticator] = None


def security_hooks(config: ClientConfig) -> SecurityHooks:
    """The transport/authentication hooks for ``config.security_protocol``.

    Everything that can be checked without a broker is checked here (files exist and are PEM, the mechanism
    is supported, credentials are present), so a bad setting fails when the client is built.
    """
    protocol = config.security_protocol
    if protocol == "PLAINTEXT":
        return SecurityHooks()
    if protocol not in ("SSL", "SASL_PLAINTEXT", "SASL_SSL"):
        raise ConfigError("security.protocol", protocol, "PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL")
    authenticate = SaslAuthenticator(config) if protocol.startswith("SASL_") else None
    transport = TlsTransport(config) if protocol.endswith("SSL") else None
    return SecurityHooks(transport, authenticate)


def _rebuild_from_config(cls, config: ClientConfig):
    return cls(config)


# -- option helpers --------------------------------------------------------------------------------------

def _reveal(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, Secret):
        return value.reveal()
    return str(value)


def _opt(options: Mapping[str, Any], *keys: str) -> tuple[str | None, Any]:
    """The first of ``keys`` that is set to a non-empty value: ``(key, raw value)``."""
    for key in keys:
        value = options.get(key)
        if value is not None and _reveal(value).strip() != "":
            return key, value
    return None, None


# -- JAAS ------------------------------------------------------------------------------------------------

_JAAS_FLAGS = ("required", "requisite", "sufficient", "optional")
_SECRET_JAAS_KEYS = re.compile(r"(password|secret|token|credential|key)", re.IGNORECASE)


class JaasConfig:
    """One parsed JAAS login-module entry: ``login_module``, ``flag`` and ``options`` (a dict of strings).

    ``repr`` masks option values whose names look secret (``password``, ``clientSecret``...).
    """

    __slots__ = ("login_module", "flag", "options")

    def __init__(self, login_module: str, flag: str, options: dict[str, str]) -> None:
        self.login_module = login_module
        self.flag = flag
        self.options = options

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.options.get(key, default)

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={'***' if _SECRET_JAAS_KEYS.search(k) else repr(v)}" for k, v in self.options.items())
        return f"JaasConfig({self.login_module} {self.flag}: {shown})"

    __str__ = __repr__

    def __reduce__(self):  # never pickle the clear-text options
        raise TypeError("JaasConfig holds secrets and is not picklable; pickle the ClientConfig instead")


def _jaas_error(reason: str) -> ConfigError:
    # The value is shown as '***': a JAAS config holds the password.
    return ConfigError("sasl.jaas.config", Secret(""), reason=reason)


def parse_jaas_config(text: str | Secret) -> JaasConfig:
    """Parse ``<LoginModuleClass> <flag> key=value ... ;`` (Kafka's ``sasl.jaas.config`` syntax).

    Values may be double- or single-quoted (a backslash escapes the next character) or bare words. The
    login-module class is not interpreted (any class name, shaded or not, is accepted). Errors name the
    position, never the text.
    """
    src = _reveal(text) or ""
    n = len(src)
    pos = 0

    def skip_ws(i: int) -> int:
        while i < n and src[i].isspace():
            i += 1
        return i

    def word(i: int) -> tuple[str, int]:
        start = i
        while i < n and not src[i].isspace() and src[i] not in "=;\"'":
            i += 1
        return src[start:i], i

    pos = skip_ws(pos)
    module, pos = word(pos)
    if not module:
        raise _jaas_error("expected '<LoginModule class> required username=\"...\" password=\"...\";' "
                          "but the value is empty or does not start with a login-module class name")
    if not re.fullmatch(r"[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*", module):
        raise _jaas_error("it must start with a login-module class name such as "
                          "org.apache.kafka.common.security.scram.ScramLoginModule")
    pos = skip_ws(pos)
    flag, pos = word(pos)
    if flag.lower() not in _JAAS_FLAGS:
        raise _jaas_error(f"the login-module class must be followed by a control flag "
                          f"({', '.join(_JAAS_FLAGS)}) at character {pos - len(flag)}")
    options: dict[str, str] = {}
    while True:
        pos = skip_ws(pos)
        if pos >= n:
            break  # a missing final ';' is tolerated
        if src[pos] == ";":
            pos = skip_ws(pos + 1)
            if pos < n:
                raise _jaas_error(f"unexpected text after ';' at character {pos} (only one login module is "
                                  f"allowed in a client's sasl.jaas.config)")
            break
        key, pos = word(pos)
        if not key:
            raise _jaas_error(f"expected an option name at character {pos}")
        pos = skip_ws(pos)
        if pos >= n or src[pos] != "=":
            raise _jaas_error(f"option {key!r} has no '=' and value (character {pos})")
        pos = skip_ws(pos + 1)
        if pos < n and src[pos] in "\"'":
            quote = src[pos]
            pos += 1
            chars = []
            while True:
                if pos >= n:
                    raise _jaas_error(f"the value of option {key!r} has no closing {quote} quote")
                c = src[pos]
                if c == "\\" and pos + 1 < n:
                    chars.append(src[pos + 1])
                    pos += 2
                    continue
                if c == quote:
                    pos += 1
                    break
                chars.append(c)
                pos += 1
            value = "".join(chars)
        else:
            value, pos = word(pos)
            if not value:
                raise _jaas_error(f"option {key!r} has an empty value (character {pos}); quote it")
        options[key] = value
    return JaasConfig(module, flag.lower(), options)


# -- TLS -------------------------------------------------------------------------------------------------

_TLS_VERSIONS = {
    "TLSV1": ssl.TLSVersion.TLSv1,
    "TLSV1.1": ssl.TLSVersion.TLSv1_1,
    "TLSV1.2": ssl.TLSVersion.TLSv1_2,
    "TLSV1.3": ssl.TLSVersion.TLSv1_3,
}

_TRUSTSTORE_HOWTO = (
    "spark-kwire reads PEM only; convert the store to a PEM file of CA certificates, e.g. "
    "`keytool -exportcert -rfc -keystore truststore.jks -alias <alias> -file ca.pem` (each CA; "
    "`keytool -list -rfc -keystore truststore.jks` prints them all) or "
    "`openssl pkcs12 -in truststore.p12 -nokeys -out ca.pem`, then set ssl.truststore.location=ca.pem "
    "(or ssl.ca.location=ca.pem)"
)
_KEYSTORE_HOWTO = (
    "spark-kwire reads PEM only; convert the keystore to one PEM file holding the certificate chain and the "
    "private key, e.g. `keytool -importkeystore -srckeystore keystore.jks -destkeystore keystore.p12 "
    "-deststoretype PKCS12` (JKS only) then `openssl pkcs12 -in keystore.p12 -out client.pem` (add -nodes "
    "for an unencrypted key, else set ssl.key.password), and set ssl.keystore.type=PEM and "
    "ssl.keystore.location=client.pem (or ssl.certificate.location + ssl.key.location)"
)


def _read_store_file(key: str, path: str, store_type: str | None, howto: str) -> bytes:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise ConfigError(key, path, reason="no such file") from None
    except IsADirectoryError:
        raise ConfigError(key, path, reason="is a directory, expected a PEM file") from None
    except OSError as exc:
        raise ConfigError(key, path, reason=f"cannot be read: {exc.strerror or exc}") from None
    if b"-----BEGIN " in data:
        return data
    if data[:4] == b"\xfe\xed\xfe\xed":
        kind = "a Java KeyStore (JKS)"
    elif data[:4] == b"\xce\xce\xce\xce":
        kind = "a Java JCEKS keystore"
    elif data[:1] == b"\x30":
        kind = "a PKCS12 (or DER) file"
    else:
        kind = "not a PEM file"
    declared = f" (ssl.*.type={store_type})" if store_type else ""
    raise ConfigError(key, path, reason=f"the file is {kind}{declared}; {howto}")


def _store_type(value: Any) -> str | None:
    text = (_reveal(value) or "").strip().upper()
    return text or None


@contextlib.contextmanager
def _private_pem_files(*contents: str | None):
    """Write PEM texts to private (0600) temporary files for OpenSSL, which loads keys only from files;
    the files are deleted as soon as the context exits. Uses /dev/shm (memory) when available."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    directory = tempfile.mkdtemp(prefix="kwire-tls-", dir=base)
    paths = []
    try:
        for i, text in enumerate(contents):
            if text is None:
                paths.append(None)
                continue
            path = os.path.join(directory, f"{i}.pem")
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(text if text.endswith("\n") else text + "\n")
            paths.append(path)
        yield paths
    finally:
        for path in paths:
            if path:
                with contextlib.suppress(OSError):
                    os.unlink(path)
        with contextlib.suppress(OSError):
            os.rmdir(directory)


def _normalise_inline_pem(text: str) -> str:
    # Kafka accepts inline PEM on one line in a properties file; OpenSSL needs the line breaks.
    text = text.strip()
    if "\n" in text:
        return text + "\n"
    out = []
    for block in re.finditer(r"(-----BEGIN [A-Z0-9 ]+-----)\s*(.*?)\s*(-----END [A-Z0-9 ]+-----)", text):
        header, body, footer = block.groups()
        # Encrypted legacy keys carry "Proc-Type: ..." headers: keep lines with ':' separate.
        parts = body.split()
        lines = [header]
        chunk = "".join(p for p in parts if ":" not in p)
        for p in parts:
            if ":" in p:
                lines.append(p)
        lines += [chunk[i:i + 64] for i in range(0, len(chunk), 64)]
        lines.append(footer)
        out.append("\n".join(lines))
    return "\n".join(out) + "\n" if out else text + "\n"


def _is_encrypted_key(pem: bytes | str) -> bool:
    text = pem.decode("ascii", "replace") if isinstance(pem, bytes) else pem
    return "ENCRYPTED PRIVATE KEY" in text or "Proc-Type: 4,ENCRYPTED" in text


def _load_client_cert(ctx: ssl.SSLContext, key: str, certfile: str | None, keyfile: str | None,
                      password: str | None, encrypted: bool = False) -> None:
    if encrypted and not password:
        raise ConfigError(key, "(client certificate/key)",
                          reason="the private key is encrypted: set ssl.key.password")
    try:
        ctx.load_cert_chain(certfile, keyfile, password=password if password else None)
    except ssl.SSLError as exc:
        reason = getattr(exc, "reason", None) or str(exc)
        hint = ""
        if encrypted or "BAD_DECRYPT" in str(exc).upper():
            hint = "; the private key is encrypted and ssl.key.password is wrong"
        elif "KEY_VALUES_MISMATCH" in str(exc).upper():
            hint = "; the private key does not belong to the certificate"
        elif "NO_START_LINE" in str(exc).upper() or reason == "PEM lib":
            hint = "; expected PEM with a certificate and a PKCS#8 (or PKCS#1) private key"
        raise ConfigError(key, "(client certificate/key)", reason=f"cannot load the client certificate and key: "
                                                             f"{reason}{hint}") from None
    except (OSError, ValueError) as exc:
        raise ConfigError(key, "(client certificate/key)", reason=f"cannot load the client certificate and key: "
                                                             f"{exc}") from None


def build_ssl_context(config: ClientConfig) -> ssl.SSLContext:
    """An :class:`ssl.SSLContext` for the client from the ``ssl.*`` options (see the module docstring)."""
    opts = dict(config.ssl)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)

    # -- verification ------------------------------------------------------------------------------------
    algorithm_set = "ssl.endpoint.identification.algorithm" in opts
    algorithm = (_reveal(opts.get("ssl.endpoint.identification.algorithm")) or "").strip().lower()
    if not algorithm_set:
        algorithm = "https"
    if algorithm not in ("https", "", "none"):
        raise ConfigError("ssl.endpoint.identification.algorithm", algorithm, "https, '' (empty: no host name check)")
    verify = (_reveal(config.extra.get("enable.ssl.certificate.verification")) or "true").strip().lower()
    if verify not in ("true", "false"):
        raise ConfigError("enable.ssl.certificate.verification", verify, "true, false")
    ctx.check_hostname = algorithm == "https" and verify == "true"
    ctx.verify_mode = ssl.CERT_REQUIRED if verify == "true" else ssl.CERT_NONE
    if verify == "false":
        log.warning("enable.ssl.certificate.verification=false: broker certificates are NOT verified "
                    "(anyone on the network path can impersonate the brokers)")

    # -- protocols and ciphers ---------------------------------------------------------------------------
    enabled_key, enabled = _opt(opts, "ssl.enabled.protocols")
    if enabled_key:
        names = [p.strip().upper() for p in _reveal(enabled).split(",") if p.strip()]
        bad = [p for p in names if p not in _TLS_VERSIONS]
        if bad or not names:
            raise ConfigError(enabled_key, _reveal(enabled), "a comma-separated list of TLSv1.2, TLSv1.3")
        versions = sorted(_TLS_VERSIONS[p] for p in names)
        ctx.minimum_version, ctx.maximum_version = versions[0], versions[-1]
    else:
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        proto_key, proto = _opt(opts, "ssl.protocol")
        if proto_key:
            name = _reveal(proto).strip().upper()
            if name in ("TLS", "SSL"):
                pass
            elif name in _TLS_VERSIONS:
                ctx.maximum_version = _TLS_VERSIONS[name]
                if _TLS_VERSIONS[name] < ctx.minimum_version:
                    ctx.minimum_version = _TLS_VERSIONS[name]
            else:
                raise ConfigError(proto_key, _reveal(proto), "TLSv1.2, TLSv1.3, TLS")
    cipher_key, ciphers = _opt(opts, "ssl.cipher.suites")
    if cipher_key:
        spec = ":".join(c.strip() for c in _reveal(ciphers).replace(":", ",").split(",") if c.strip())
        try:
            ctx.set_ciphers(spec)
        except ssl.SSLError:
            raise ConfigError(cipher_key, _reveal(ciphers),
                              reason="no cipher in the list is known to OpenSSL: use OpenSSL cipher names "
                                     "(e.g. ECDHE-RSA-AES256-GCM-SHA384); TLSv1.3 suites are always enabled") from None

    # -- trusted CAs --------------------------------------------------------------------------------------
    if verify == "true":
        trust_type = _store_type(opts.get("ssl.truststore.type"))
        loaded = False
        key, location = _opt(opts, "ssl.truststore.location", "ssl.ca.location")
        if key:
            path = os.path.expanduser(_reveal(location).strip())
            if key == "ssl.ca.location" and os.path.isdir(path):
                try:
                    ctx.load_verify_locations(capath=path)
                except (ssl.SSLError, OSError) as exc:
                    raise ConfigError(key, path, reason=f"cannot load CA certificates: {exc}") from None
            else:
                data = _read_store_file(key, path, trust_type, _TRUSTSTORE_HOWTO)
                try:
                    ctx.load_verify_locations(cadata=data.decode("ascii", "replace"))
                except (ssl.SSLError, ValueError) as exc:
                    raise ConfigError(key, path, reason=f"holds no usable PEM certificate: {exc}") from None
            loaded = True
        inline_key, inline = _opt(opts, "ssl.truststore.certificates", "ssl.ca.pem")
        if inline_key:
            try:
                ctx.load_verify_locations(cadata=_normalise_inline_pem(_reveal(inline)))
            except (ssl.SSLError, ValueError) as exc:
                raise ConfigError(inline_key, "(inline PEM)", reason=f"holds no usable PEM certificate: {exc}") from None
            loaded = True
        if not loaded:  # like Java's default cacerts (a bare ssl.truststore.type is harmless)
            ctx.load_default_certs(ssl.Purpose.SERVER_AUTH)

    # -- client certificate (mutual TLS) -------------------------------------------------------------------
    key_password = _reveal(_opt(opts, "ssl.key.password")[1]) or _reveal(_opt(opts, "ssl.keystore.password")[1])
    keystore_type = _store_type(opts.get("ssl.keystore.type"))
    ks_key, ks_location = _opt(opts, "ssl.keystore.location")
    cert_key, cert_location = _opt(opts, "ssl.certificate.location")
    keyloc_key, key_location = _opt(opts, "ssl.key.location")
    chain_key, chain = _opt(opts, "ssl.keystore.certificate.chain", "ssl.certificate.pem")
    inline_key_key, inline_key = _opt(opts, "ssl.keystore.key", "ssl.key.pem")
    if ks_key:
        path = os.path.expanduser(_reveal(ks_location).strip())
        data = _read_store_file(ks_key, path, keystore_type, _KEYSTORE_HOWTO)
        if b"PRIVATE KEY-----" not in data:
            raise ConfigError(ks_key, path, reason="the PEM keystore holds no private key (it needs the client's "
                                                   "certificate chain and its private key, PKCS#8)")
        _load_client_cert(ctx, ks_key, path, None, key_password, _is_encrypted_key(data))
    elif cert_key or keyloc_key:
        if not (cert_key and keyloc_key):
            missing = "ssl.key.location" if cert_key else "ssl.certificate.location"
            raise ConfigError(cert_key or keyloc_key, _reveal(cert_location or key_location),
                              reason=f"{missing} must be set too (client certificate and private key)")
        cert_path = os.path.expanduser(_reveal(cert_location).strip())
        key_path = os.path.expanduser(_reveal(key_location).strip())
        _read_store_file(cert_key, cert_path, None, _KEYSTORE_HOWTO)
        key_data = _read_store_file(keyloc_key, key_path, None, _KEYSTORE_HOWTO)
        _load_client_cert(ctx, cert_key, cert_path, key_path, key_password, _is_encrypted_key(key_data))
    elif chain_key or inline_key_key:
        if not (chain_key and inline_key_key):
            missing = "ssl.keystore.key" if chain_key else "ssl.keystore.certificate.chain"
            raise ConfigError(chain_key or inline_key_key, "(inline PEM)",
                              reason=f"{missing} must be set too (client certificate chain and private key)")
        key_text = _normalise_inline_pem(_reveal(inline_key))
        with _private_pem_files(_normalise_inline_pem(_reveal(chain)), key_text) as (cert_path, key_path):
            _load_client_cert(ctx, chain_key, cert_path, key_path, key_password, _is_encrypted_key(key_text))
    return ctx


_VERIFY_HINTS = {
    62: "the certificate does not match the host name",
    64: "the certificate does not match the IP address",
    18: "the broker's certificate is self-signed and not trusted",
    19: "the certificate chain ends in a CA that is not trusted",
    20: "the certificate was not issued by a trusted CA",
    21: "the certificate was not issued by a trusted CA",
    10: "the certificate has expired",
    9: "the certificate is not yet valid",
}


def _tls_failure_hint(reason: str) -> str:
    upper = (reason or "").upper()
    if "WRONG_VERSION_NUMBER" in upper or "RECORD_LAYER_FAILURE" in upper or "PACKET_LENGTH_TOO_LONG" in upper:
        return " (is this a TLS listener? check security.protocol and the port)"
    if "CERTIFICATE_REQUIRED" in upper or "HANDSHAKE_FAILURE" in upper:
        return (" (the broker requires a client certificate: set ssl.keystore.location, or ssl.certificate.location "
                "+ ssl.key.location)")
    if "BAD_CERTIFICATE" in upper or "UNKNOWN_CA" in upper or "CERTIFICATE_UNKNOWN" in upper:
        return (" (the broker rejected the client certificate, or requires one: it must be signed by a CA in the "
                "broker's truststore; set ssl.keystore.location, or ssl.certificate.location + ssl.key.location)")
    return ""


class _KwireSSLSocket(ssl.SSLSocket):
    """An SSLSocket whose first read turns a TLS alert into :class:`TlsError`.

    With TLS 1.3 the client's handshake completes before the broker has checked the client certificate, so a
    broker that rejects it (or needs one) answers with an alert on the first read. Raised as :class:`TlsError`
    (not an OSError) it is not retried as a connection error; later reads pass errors through unchanged.
    """

    _kwire_checked = False
    _kwire_where = "?"

    def recv_into(self, buffer, nbytes=0, flags=0):
        if self._kwire_checked:
            return super().recv_into(buffer, nbytes, flags)
        try:
            n = super().recv_into(buffer, nbytes, flags)
        except (ssl.SSLEOFError, ssl.SSLZeroReturnError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            raise
        except ssl.SSLError as exc:
            reason = getattr(exc, "reason", None) or str(exc)
            host, _, port = self._kwire_where.rpartition(":")
            raise TlsError(f"TLS connection to broker at {self._kwire_where} failed: the broker sent the alert "
                           f"{reason}{_tls_failure_hint(reason)}", host=host.strip("[]"),
                           port=int(port) if port.isdigit() else None) from None
        self._kwire_checked = True
        return n


class TlsTransport:
    """The ``transport_factory`` for SSL / SASL_SSL: ``TlsTransport(config)(sock, host) -> ssl.SSLSocket``."""

    def __init__(self, config: ClientConfig) -> None:
        self._config = config
        self.context = build_ssl_context(config)
        self.context.sslsocket_class = _KwireSSLSocket
        self.check_hostname = self.context.check_hostname

    def __repr__(self) -> str:
        return f"TlsTransport(check_hostname={self.check_hostname})"

    def __reduce__(self):
        return (_rebuild_from_config, (TlsTransport, self._config))

    def __call__(self, sock: socket.socket, host: str):
        try:
            port = sock.getpeername()[1]
        except (OSError, IndexError):
            port = None
        where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        try:
            tls = self.context.wrap_socket(sock, server_hostname=host, do_handshake_on_connect=False)
        except (ssl.SSLError, ValueError) as exc:
            raise TlsError(f"TLS setup for broker at {where} failed: {exc}", host=host, port=port) from None
        try:
            tls.do_handshake()
        except ssl.SSLCertVerificationError as exc:
            code = getattr(exc, "verify_code", None)
            detail = getattr(exc, "verify_message", None) or str(exc)
            hint = _VERIFY_HINTS.get(code, "certificate verification failed")
            if code in (62, 64):
                advice = (f"the broker's certificate must name {host!r} in its subjectAltName; "
                          f"ssl.endpoint.identification.algorithm= (empty) turns host name checks off")
            else:
                advice = ("set ssl.truststore.location (PEM) or ssl.ca.location to the CA that signed the "
                          "broker's certificate")
            tls.close()
            raise TlsError(f"TLS handshake with broker at {where} failed: {hint} ({detail}); {advice}",
                           host=host, port=port, verify_code=code) from None
        except (ssl.SSLEOFError, ssl.SSLZeroReturnError, ConnectionError) as exc:
            tls.close()
            # Retriable (a broker may be restarting), but say what it usually means.
            raise ConnectionResetError(
                f"the broker closed the connection during the TLS handshake ({exc.__class__.__name__}); is "
                f"{where} a TLS listener? check security.protocol and the port") from None
        except socket.timeout:
            tls.close()
            raise  # the connection layer reports it as a retriable connection error
        except ssl.SSLError as exc:
            tls.close()
            reason = getattr(exc, "reason", None) or str(exc)
            raise TlsError(f"TLS handshake with broker at {where} failed: {reason}{_tls_failure_hint(reason)}",
                           host=host, port=port) from None
        tls._kwire_where = where
        log.debug("TLS handshake with %s done (%s, %s)", where, tls.version(), (tls.cipher() or ("?",))[0])
        return tls


# -- SASL mechanisms ---------------------------------------------------------------------------------------

class _PlainClient:
    """RFC 4616: one message ``authzid NUL authcid NUL passwd`` (authzid empty)."""

    def __init__(self, username: str, password: Secret) -> None:
        self._username = username
        self._password = password
        self.complete = False

    def first_message(self) -> bytes:
        return b"\0" + self._username.encode("utf-8") + b"\0" + self._password.reveal().encode("utf-8")

    def respond(self, challenge: bytes) -> bytes | None:
        self.complete = True
        return None


class ScramError(Exception):
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


# -- SASL authenticator ------------------------------------------------------------------------------------

def _sasl_credentials(config: ClientConfig) -> tuple[str, Secret, dict[str, str], str]:
    """(username, password, SCRAM extensions, where they came from) from sasl.jaas.config or sasl.username."""
    username: str | None = None
    password: Secret | None = None
    extensions: dict[str, str] = {}
    source = ""
    if config.sasl_jaas_config is not None and config.sasl_jaas_config.reveal().strip():
        jaas = parse_jaas_config(config.sasl_jaas_config)
        username = jaas.get("username")
        pw = jaas.get("password")
        password = Secret(pw) if pw is not None else None
        if (jaas.get("tokenauth") or "").lower() == "true":
            extensions["tokenauth"] = "true"
        source = "sasl.jaas.config"
        if username is None or password is None:
            if config.sasl_username and config.sasl_password is not None:
                username, password, source = config.sasl_username, config.sasl_password, "sasl.username"
            else:
                missing = "username" if username is None else "password"
                raise ConfigError("sasl.jaas.config", config.sasl_jaas_config,
                                  reason=f"the login module has no {missing}=\"...\" option (needed for "
                                         f"{config.sasl_mechanism})")
    elif config.sasl_username is not None or config.sasl_password is not None:
        username, password, source = config.sasl_username, config.sasl_password, "sasl.username"
        if not username:
            raise ConfigError("sasl.username", username, reason="sasl.password is set but sasl.username is not")
        if password is None:
            raise ConfigError("sasl.password", None, reason="sasl.username is set but sasl.password is not")
    else:
        raise ConfigError("sasl.jaas.config", None,
                          reason=f"security.protocol={config.security_protocol} needs credentials: set "
                                 f"sasl.jaas.config (e.g. org.apache.kafka.common.security.scram.ScramLoginModule "
                                 f"required username=\"...\" password=\"...\";) or sasl.username and "
                                 f"sasl.password")
    return username, password, extensions, source


class _SessionState:
    """Per-connection SASL session bookkeeping, stored on the connection as ``conn.sasl_session``."""

    __slots__ = ("mechanism", "username", "lifetime_ms", "deadline", "authenticated_at", "reauth_count",
                 "busy", "inflight", "lock", "original_send")

    def __init__(self, mechanism: str, username: str) -> None:
        self.mechanism = mechanism
        self.username = username
        self.lifetime_ms = 0
        self.deadline: float | None = None  # time.monotonic() after which to re-authenticate
        self.authenticated_at = 0.0
        self.reauth_count = 0
        self.busy = False
        self.inflight: deque = deque()
        self.lock = None
        self.original_send = None

    def due(self, now: float | None = None) -> bool:
        return self.deadline is not None and (time.monotonic() if now is None else now) >= self.deadline

    def __repr__(self) -> str:
        return (f"SaslSession({self.mechanism}, user={self.username!r}, lifetime_ms={self.lifetime_ms}, "
                f"reauthentications={self.reauth_count})")


class SaslAuthenticator:
    """The ``authenticate`` hook: SaslHandshake v1 + SaslAuthenticate with PLAIN or SCRAM-SHA-256/512.

    After it ran, ``conn.sasl_session`` holds the session state (``lifetime_ms``, ``deadline``,
    ``reauth_count``). When the broker gave the session a lifetime, the connection's ``send`` is wrapped so
    that the first request after the re-authentication point re-runs the exchange on the same connection.
    """

    def __init__(self, config: ClientConfig) -> None:
        mechanism = config.sasl_mechanism
        if mechanism not in SUPPORTED_SASL_MECHANISMS:
            default = " (Kafka's default when sasl.mechanism is not set)" if mechanism == "GSSAPI" else ""
            raise ConfigError("sasl.mechanism", mechanism, ", ".join(SUPPORTED_SASL_MECHANISMS),
                              reason=f"spark-kwire does not implement {mechanism}{default}; "
                                     f"set sasl.mechanism to one it supports")
        self._config = config
        self.mechanism = mechanism
        self.username, self._password, self._extensions, self.source = _sasl_credentials(config)

    def __repr__(self) -> str:
        return f"SaslAuthenticator({self.mechanism}, user={self.username!r})"

    def __reduce__(self):
        return (_rebuild_from_config, (SaslAuthenticator, self._config))

    def _mechanism_client(self):
        if self.mechanism == "PLAIN":
            return _PlainClient(self.username, self._password)
        return ScramClient(self.mechanism, self.username, self._password, self._extensions)

    # -- the hook ----------------------------------------------------------------------------------------
    def __call__(self, conn) -> None:
        state = getattr(conn, "sasl_session", None)
        if not isinstance(state, _SessionState):
            state = _SessionState(self.mechanism, self.username)
            state.lock = getattr(conn, "_lock", None)
            conn.sasl_session = state
        state.deadline = None
        state.inflight.clear()
        self._exchange(conn, state, reauthentication=False)

    def _exchange(self, conn, state: _SessionState, *, reauthentication: bool) -> None:
        address = getattr(conn, "address", "?")
        mech = self.mechanism
        what = "re-authentication" if reauthentication else "authentication"
        state.busy = True
        try:
            hs_version = conn.version_for(m.SASL_HANDSHAKE)
            if hs_version < 1:
                raise AuthenticationError(
                    f"SASL {mech} {what} with broker at {address} failed: the broker supports only SaslHandshake "
                    f"v0 (Kafka < 1.0), which spark-kwire does not speak", mechanism=mech, broker=address)
            response = conn.request(m.SASL_HANDSHAKE, {"mechanism": mech}, 1)
            code = response.get("error_code", 0)
            if code:
                enabled = list(response.get("mechanisms") or [])
                if code == _UNSUPPORTED_SASL_MECHANISM:
                    detail = (f"the broker's listener does not enable SASL mechanism {mech} (enabled: "
                              f"{', '.join(enabled) or 'none'}); set sasl.mechanism to one of those")
                elif code == _ILLEGAL_SASL_STATE:
                    detail = ("the broker refused the SASL handshake (ILLEGAL_SASL_STATE): is this a SASL listener? "
                              "check security.protocol and the port")
                else:
                    detail = f"SaslHandshake failed with {error_info(code).name}"
                raise AuthenticationError(f"SASL {mech} {what} with broker at {address} failed: {detail}",
                                          mechanism=mech, broker=address, code=code)
            version = conn.version_for(m.SASL_AUTHENTICATE)
            client = self._mechanism_client()
            token = client.first_message()
            while True:
                sent_at = time.monotonic()
                response = conn.request(m.SASL_AUTHENTICATE, {"auth_bytes": token}, version)
                code = response.get("error_code", 0)
                if code:
                    message = response.get("error_message") or error_info(code).description
                    raise AuthenticationError(
                        f"SASL {mech} {what} as user {self.username!r} with broker at {address} failed: "
                        f"{error_info(code).name}: {message}", mechanism=mech, broker=address, code=code)
                try:
                    token = client.respond(bytes(response.get("auth_bytes") or b""))
                except ScramError as exc:
                    raise AuthenticationError(
                        f"SASL {mech} {what} as user {self.username!r} with broker at {address} failed: {exc}",
                        mechanism=mech, broker=address) from None
                if client.complete:
                    break
                if token is None:
                    raise AuthenticationError(f"SASL {mech} {what} with broker at {address} ended early",
                                              mechanism=mech, broker=address)
        finally:
            state.busy = False
        lifetime = int(response.get("session_lifetime_ms") or 0)
        state.lifetime_ms = lifetime
        state.authenticated_at = sent_at
        if lifetime > 0:
            state.deadline = sent_at + lifetime / 1000.0 * random.uniform(*_REAUTH_WINDOW)
            _install_reauth(conn, state, self)
        else:
            state.deadline = None
        log.debug("SASL %s %s as %r with broker at %s succeeded (session lifetime %s)", mech, what, self.username,
                  address, f"{lifetime} ms" if lifetime else "unlimited")

    def reauthenticate(self, conn, state: _SessionState) -> None:
        """Re-run the exchange on ``conn`` after the answers in flight arrived (KIP-368)."""
        lock = state.lock if state.lock is not None else contextlib.nullcontext()
        with lock:
            if state.busy or not state.due() or not getattr(conn, "connected", False):
                return
            while state.inflight:
                pending = state.inflight.popleft()
                if not pending.done:
                    try:
                        pending.result()  # reads (and keeps) the answer for its owner
                    except KwireError:
                        pass  # its owner sees the error; a broken connection reconnects on the next send
            if not getattr(conn, "connected", False):
                return
            log.debug("SASL %s session with broker at %s is due for re-authentication", self.mechanism,
                      getattr(conn, "address", "?"))
            try:
                self._exchange(conn, state, reauthentication=True)
            except AuthenticationError:
                conn.close()
                raise
            state.reauth_count += 1


def _install_reauth(conn, state: _SessionState, authenticator: SaslAuthenticator) -> None:
    """Wrap ``conn.send`` (once) so that a request sent after the session's re-authentication point first
    re-authenticates. Requests of the SASL exchange itself and of ApiVersions negotiation pass through."""
    if state.original_send is not None:
        return
    original = conn.send
    state.original_send = original

    def send(*args, **kwargs):
        if state.deadline is not None and not state.busy and not kwargs.get("_negotiating") and state.due():
            authenticator.reauthenticate(conn, state)
        pending = original(*args, **kwargs)
        if state.deadline is not None and not state.busy and not pending.done:
            inflight = state.inflight
            while inflight and inflight[0].done:
                inflight.popleft()
            inflight.append(pending)
        return pending

    send.__doc__ = getattr(original, "__doc__", None)
    conn.send = send
