"""TLS for broker connections (``SSL`` and ``SASL_SSL``): an :class:`ssl.SSLContext` from the ``ssl.*`` options,
and the transport hook that wraps a connected socket and completes the handshake.

Options carry Kafka's Java client names (Spark's ``kafka.`` prefix removed), plus librdkafka's names for the
files:

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

Private keys stay in :class:`~spark_kwire.client.config.Secret` until OpenSSL loads them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import socket
import ssl
import tempfile
from typing import Any, Mapping

from spark_kwire.client.config import ClientConfig, reveal as _reveal
from spark_kwire.client.errors import ClientError, ConfigError

__all__ = ["TlsError", "TlsTransport", "build_ssl_context", "option_value"]

log = logging.getLogger(__name__)


class TlsError(ClientError):
    """The TLS handshake with a broker failed (untrusted certificate, host name mismatch...). Not retriable."""

    retriable = False

    def __init__(self, message: str, *, host: str | None = None, port: int | None = None,
                 verify_code: int | None = None) -> None:
        self.host = host
        self.port = port
        self.verify_code = verify_code
        super().__init__(message)



def option_value(options: Mapping[str, Any], *keys: str) -> tuple[str | None, Any]:
    """The first of ``keys`` that is set to a non-empty value: ``(key, raw value)``."""
    for key in keys:
        value = options.get(key)
        if value is not None and _reveal(value).strip() != "":
            return key, value
    return None, None


_opt = option_value


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


def build_ssl_context(config: ClientConfig, *, system_cas_too: bool = False) -> ssl.SSLContext:
    """An :class:`ssl.SSLContext` for the client from the ``ssl.*`` options (see the module docstring).

    ``system_cas_too`` trusts the system's CAs besides the configured ones (for an identity provider, which
    is often public while the brokers' CA is private)."""
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
        if not loaded or system_cas_too:  # like Java's default cacerts (a bare ssl.truststore.type is harmless)
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
        return (TlsTransport, (self._config,))

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
