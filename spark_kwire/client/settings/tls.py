"""The TLS part of the settings: what to trust, which client certificate to present, which TLS versions and ciphers.

Built from the ``ssl.*`` options by :mod:`.tls_options`; :mod:`spark_kwire.client.auth.tls` makes the
:class:`ssl.SSLContext` from it (loading files is its job, not the settings'). Each file or inline PEM is kept with
the option that named it (:class:`Given`), so that an error about it names what the user wrote.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import NamedTuple

from spark_kwire.client.settings.secret import Secret, digest, reveal

__all__ = ["Given", "TlsSettings"]


class Given(NamedTuple):
    """A value and the option it came from (e.g. ``("ssl.ca.location", "/etc/ca.pem")``)."""
    key: str
    value: str | Secret


@dataclass(frozen=True)
class TlsSettings:
    """How a connection (or an identity provider's endpoint) is protected by TLS. Defaults: verify the peer's
    certificate and host name against the system's CAs, TLSv1.2 and TLSv1.3."""

    check_hostname: bool = True  # ssl.endpoint.identification.algorithm=https
    verify_certificates: bool = True  # enable.ssl.certificate.verification (librdkafka's name)
    tls_versions: tuple[str, ...] = ()  # ssl.enabled.protocols, e.g. ("TLSv1.2", "TLSv1.3"); () = 1.2 and 1.3
    max_version: str | None = None  # ssl.protocol=TLSv1.x (without ssl.enabled.protocols)
    ciphers: str | None = None  # ssl.cipher.suites as an OpenSSL cipher list ("A:B")
    trust_store_type: str | None = None
    trust_file: Given | None = None  # ssl.truststore.location or ssl.ca.location (a PEM file; a directory for the latter)
    trust_pem: Given | None = None  # ssl.truststore.certificates or ssl.ca.pem (inline PEM)
    key_password: Secret | None = None  # ssl.key.password, else ssl.keystore.password
    keystore_type: str | None = None
    keystore_file: Given | None = None  # ssl.keystore.location: certificate chain and key in one PEM file
    cert_file: Given | None = None  # ssl.certificate.location (with key_file)
    key_file: Given | None = None  # ssl.key.location
    chain_pem: Given | None = None  # ssl.keystore.certificate.chain or ssl.certificate.pem (with key_pem)
    key_pem: Given | None = None  # ssl.keystore.key or ssl.key.pem (a Secret)

    def fingerprint(self) -> tuple:
        """Identifies these settings in caches: digests of the values, never a secret."""
        out = []
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Given):
                value = f"{value.key}={reveal(value.value)}"
            out.append((f.name, digest(value)))
        return tuple(out)
