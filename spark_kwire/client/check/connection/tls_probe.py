"""Step 2 of a connection: TLS. What the broker's certificate says, and why a handshake failed.

The client's own TLS transport (:class:`~spark_kwire.client.auth.tls.TlsTransport`) makes the connection that
counts; the check adds what that transport keeps to itself:

* a probe transport: the same settings without verification, which completes the handshake with any certificate so
  that the certificate can be described (subject, issuer, expiry, names) even when verification fails, and which
  tells whether the broker requires a client certificate (the same again without the client's certificate);
* :class:`RecordingTransport`, which keeps the TLS socket a transport made (version, cipher, the peer's certificate)
  and the exception it raised;
* :func:`tls_failure`, which says which TLS step a failure belongs to and its kind (:mod:`..fixes`).
"""

from __future__ import annotations

import dataclasses
import os
import socket
import ssl
import time
from dataclasses import dataclass

from spark_kwire.client.auth.tls import TlsError, TlsTransport
from spark_kwire.client.check.connection.x509 import Certificate, pem_certificates, read_certificate
from spark_kwire.client.check.rows import TLS_CERTIFICATE, TLS_CLIENT_CERTIFICATE, TLS_HANDSHAKE, TLS_HOSTNAME
from spark_kwire.client.settings.secret import reveal
from spark_kwire.client.settings.tls import TlsSettings

__all__ = ["TlsMaterial", "RecordingTransport", "TlsSeen", "tls_failure", "make_tls_material", "speaks_tls"]

_UNTRUSTED_HINTS = ("UNKNOWN_CA", "BAD_CERTIFICATE", "CERTIFICATE_UNKNOWN", "CERTIFICATE_EXPIRED",
                    "CERTIFICATE_REVOKED", "UNSUPPORTED_CERTIFICATE", "DECRYPT_ERROR")
_NOT_TLS_HINTS = ("WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "PACKET_LENGTH_TOO_LONG", "UNEXPECTED_EOF",
                  "HTTP_REQUEST")


@dataclass(frozen=True)
class TlsSeen:
    """What a handshake showed: the TLS version and cipher, and the peer's certificate chain (leaf first; Python
    3.13 and later give the whole chain the broker sent, earlier ones the leaf)."""
    version: str
    cipher: str
    chain: tuple[bytes, ...]

    @property
    def leaf(self) -> Certificate | None:
        try:
            return read_certificate(self.chain[0]) if self.chain else None
        except (ValueError, IndexError):
            return None

    def certificates(self) -> list[Certificate]:
        out = []
        for der in self.chain:
            try:
                out.append(read_certificate(der))
            except (ValueError, IndexError):
                break
        return out


def _unverified(transport: TlsTransport) -> TlsTransport:
    transport.context.check_hostname = False
    transport.context.verify_mode = ssl.CERT_NONE
    transport.check_hostname = False
    return transport


@dataclass
class TlsMaterial:
    """The TLS transports of one run, made once: the client's own (verifying), the probe (not verifying, with the
    client certificate when one is configured) and, with a client certificate, a probe without it."""
    settings: TlsSettings
    transport: TlsTransport
    probe: TlsTransport
    probe_without_client_certificate: TlsTransport | None
    client_certificate: Certificate | None
    client_certificate_option: str | None

    def chain_only(self) -> TlsTransport:
        """A transport that verifies the chain (trust, validity) but not the host name."""
        transport = TlsTransport(dataclasses.replace(self.settings, check_hostname=False))
        transport.context.check_hostname = False
        return transport

    @property
    def trust(self) -> str:
        given = self.settings.trust_file or self.settings.trust_pem
        if given is None:
            return "the system's trusted CAs (no ssl.truststore.location or ssl.ca.location)"
        return f"{given.key}={given.value}" if given is self.settings.trust_file else f"{given.key} (inline PEM)"


def _client_certificate(tls: TlsSettings) -> tuple[Certificate | None, str | None]:
    """The client certificate the settings configure (its first certificate) and the option naming it."""
    given = tls.keystore_file or tls.cert_file or tls.chain_pem
    if given is None:
        return None, None
    if given is tls.chain_pem:
        text = reveal(given.value)
    else:
        with open(os.path.expanduser(given.value), "rb") as f:  # build_ssl_context read it already
            text = f.read().decode("ascii", "replace")
    ders = pem_certificates(text)
    try:
        return (read_certificate(ders[0]) if ders else None), given.key
    except ValueError:
        return None, given.key


def make_tls_material(tls: TlsSettings) -> TlsMaterial:
    """The transports of :class:`TlsMaterial`; raises the client's :class:`ConfigError` (naming the option and the
    file) when a file is missing, unreadable or not PEM on this host."""
    transport = TlsTransport(tls)
    probe = _unverified(TlsTransport(tls))
    without = None
    certificate, option = _client_certificate(tls)
    if option is not None:
        bare = dataclasses.replace(tls, keystore_file=None, cert_file=None, key_file=None, chain_pem=None,
                                   key_pem=None)
        without = _unverified(TlsTransport(bare))
    return TlsMaterial(tls, transport, probe, without, certificate, option)


class RecordingTransport:
    """A transport factory that keeps what the wrapped one made: its TLS socket, or the exception it raised."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.seen: TlsSeen | None = None
        self.error: BaseException | None = None
        self.ms = 0.0  # how long the handshake took

    def __call__(self, sock, host: str):
        started = time.perf_counter()
        try:
            tls = self.inner(sock, host)
        except BaseException as exc:
            self.error = exc
            raise
        finally:
            self.ms = round((time.perf_counter() - started) * 1000.0, 1)
        chain = None
        getter = getattr(tls, "get_unverified_chain", None)  # Python 3.13+
        if getter is not None:
            try:
                chain = tuple(bytes(c) for c in getter() or ())  # DER bytes, leaf first
            except (ssl.SSLError, ValueError, TypeError):
                chain = None
        if not chain:
            leaf = tls.getpeercert(binary_form=True)
            chain = (bytes(leaf),) if leaf else ()
        cipher = tls.cipher()
        self.seen = TlsSeen(tls.version() or "?", cipher[0] if cipher else "?", chain)
        return tls


def tls_failure(exc: BaseException, *, client_certificate: bool) -> tuple[str, str] | None:
    """(step, kind) of a failure met during the TLS handshake or on the first read after it (a broker's alert),
    None when it is no TLS failure."""
    if isinstance(exc, TlsError):
        code = exc.verify_code
        if code in (62, 64):
            return TLS_HOSTNAME, "tls_hostname_mismatch"
        if code == 10:
            return TLS_CERTIFICATE, "tls_expired"
        if code == 9:
            return TLS_CERTIFICATE, "tls_not_yet_valid"
        if code is not None:
            return TLS_CERTIFICATE, "tls_untrusted"
        upper = str(exc).upper()
        if "CERTIFICATE_REQUIRED" in upper:
            return TLS_CLIENT_CERTIFICATE, "tls_client_certificate_required"
        if "ALERT" in upper and any(h in upper for h in _UNTRUSTED_HINTS):
            return TLS_CLIENT_CERTIFICATE, ("tls_client_certificate_rejected" if client_certificate
                                            else "tls_client_certificate_required")
        if any(h in upper for h in _NOT_TLS_HINTS):
            return TLS_HANDSHAKE, "not_tls_listener"
        return TLS_HANDSHAKE, "tls_handshake_failed"
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return TLS_HANDSHAKE, "tls_timeout"
    if isinstance(exc, (ConnectionError, ssl.SSLEOFError)):
        return TLS_HANDSHAKE, "not_tls_listener"
    return None


def speaks_tls(host: str, port: int, timeout_s: float) -> bool:
    """Whether ``host:port`` completes a TLS handshake (any certificate): what a listener that closed a plaintext
    connection at once may be."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as sock:
            sock.settimeout(timeout_s)
            with context.wrap_socket(sock, server_hostname=host):
                return True
    except (OSError, ValueError):
        return False
