"""TLS for broker connections (``SSL`` and ``SASL_SSL``): an :class:`ssl.SSLContext` from the TLS part of the
settings (:class:`~spark_kwire.client.settings.tls.TlsSettings`, which the ``ssl.*`` options make), and the
transport hook that wraps a connected socket and completes the handshake.

The files are read here: PEM only; JKS and PKCS12 stores are refused with a message saying how to convert them.
Private keys stay in :class:`~spark_kwire.client.settings.secret.Secret` until OpenSSL loads them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import ssl
import tempfile

from spark_kwire.client.errors import ClientError, ConfigError
from spark_kwire.client.settings.tls import TlsSettings

__all__ = ["TlsError", "TlsTransport", "build_ssl_context"]

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



_TLS_VERSIONS = {  # the names the settings keep (upper case), as OpenSSL knows them
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


def _trust(ctx: ssl.SSLContext, tls: TlsSettings, system_cas_too: bool) -> None:
    loaded = False
    if tls.trust_file is not None:
        key, path = tls.trust_file.key, os.path.expanduser(tls.trust_file.value)
        if key == "ssl.ca.location" and os.path.isdir(path):
            try:
                ctx.load_verify_locations(capath=path)
            except (ssl.SSLError, OSError) as exc:
                raise ConfigError(key, path, reason=f"cannot load CA certificates: {exc}") from None
        else:
            data = _read_store_file(key, path, tls.trust_store_type, _TRUSTSTORE_HOWTO)
            try:
                ctx.load_verify_locations(cadata=data.decode("ascii", "replace"))
            except (ssl.SSLError, ValueError) as exc:
                raise ConfigError(key, path, reason=f"holds no usable PEM certificate: {exc}") from None
        loaded = True
    if tls.trust_pem is not None:
        try:
            ctx.load_verify_locations(cadata=tls.trust_pem.value)
        except (ssl.SSLError, ValueError) as exc:
            raise ConfigError(tls.trust_pem.key, "(inline PEM)", reason=f"holds no usable PEM certificate: {exc}") \
                from None
        loaded = True
    if not loaded or system_cas_too:  # like Java's default cacerts (a bare ssl.truststore.type is harmless)
        ctx.load_default_certs(ssl.Purpose.SERVER_AUTH)


def _client_certificate(ctx: ssl.SSLContext, tls: TlsSettings) -> None:
    key_password = tls.key_password.reveal() if tls.key_password is not None else None  # for OpenSSL only
    if tls.keystore_file is not None:
        key, path = tls.keystore_file.key, os.path.expanduser(tls.keystore_file.value)
        data = _read_store_file(key, path, tls.keystore_type, _KEYSTORE_HOWTO)
        if b"PRIVATE KEY-----" not in data:
            raise ConfigError(key, path, reason="the PEM keystore holds no private key (it needs the client's "
                                                "certificate chain and its private key, PKCS#8)")
        _load_client_cert(ctx, key, path, None, key_password, _is_encrypted_key(data))
    elif tls.cert_file is not None:
        cert_path = os.path.expanduser(tls.cert_file.value)
        key_path = os.path.expanduser(tls.key_file.value)
        _read_store_file(tls.cert_file.key, cert_path, None, _KEYSTORE_HOWTO)
        key_data = _read_store_file(tls.key_file.key, key_path, None, _KEYSTORE_HOWTO)
        _load_client_cert(ctx, tls.cert_file.key, cert_path, key_path, key_password, _is_encrypted_key(key_data))
    elif tls.chain_pem is not None:
        key_text = tls.key_pem.value.reveal()
        with _private_pem_files(tls.chain_pem.value, key_text) as (cert_path, key_path):
            _load_client_cert(ctx, tls.chain_pem.key, cert_path, key_path, key_password, _is_encrypted_key(key_text))


def build_ssl_context(tls: TlsSettings, *, system_cas_too: bool = False) -> ssl.SSLContext:
    """An :class:`ssl.SSLContext` for the client from the TLS part of the settings.

    ``system_cas_too`` trusts the system's CAs besides the configured ones (for an identity provider, which
    is often public while the brokers' CA is private)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = tls.check_hostname
    ctx.verify_mode = ssl.CERT_REQUIRED if tls.verify_certificates else ssl.CERT_NONE
    if not tls.verify_certificates:
        log.warning("enable.ssl.certificate.verification=false: broker certificates are NOT verified "
                    "(anyone on the network path can impersonate the brokers)")
    if tls.tls_versions:
        versions = sorted(_TLS_VERSIONS[p] for p in tls.tls_versions)
        ctx.minimum_version, ctx.maximum_version = versions[0], versions[-1]
    else:
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        if tls.max_version is not None:
            ctx.maximum_version = _TLS_VERSIONS[tls.max_version]
            if ctx.maximum_version < ctx.minimum_version:
                ctx.minimum_version = ctx.maximum_version
    if tls.ciphers:
        try:
            ctx.set_ciphers(tls.ciphers)
        except ssl.SSLError:
            raise ConfigError("ssl.cipher.suites", tls.ciphers,
                              reason="no cipher in the list is known to OpenSSL: use OpenSSL cipher names "
                                     "(e.g. ECDHE-RSA-AES256-GCM-SHA384); TLSv1.3 suites are always enabled") from None
    if tls.verify_certificates:
        _trust(ctx, tls, system_cas_too)
    _client_certificate(ctx, tls)
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
    """The ``transport_factory`` for SSL / SASL_SSL: ``TlsTransport(tls_settings)(sock, host) -> ssl.SSLSocket``."""

    def __init__(self, tls: TlsSettings) -> None:
        self._tls = tls
        self.context = build_ssl_context(tls)
        self.context.sslsocket_class = _KwireSSLSocket
        self.check_hostname = self.context.check_hostname

    def __repr__(self) -> str:
        return f"TlsTransport(check_hostname={self.check_hostname})"

    def __reduce__(self):
        return (TlsTransport, (self._tls,))

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
            elif code == 10:
                advice = "the broker's certificate must be renewed (or this host's clock is wrong)"
            elif code == 9:
                advice = "this host's clock is behind the certificate's start (or the certificate is too new)"
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
