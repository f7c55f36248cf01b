"""The TLS part (:class:`~.tls.TlsSettings`) from the ``ssl.*`` options, with Kafka's Java client names and
librdkafka's names for the files.

* trust: ``ssl.truststore.location`` (a PEM file), ``ssl.ca.location`` (PEM file or directory),
  ``ssl.truststore.certificates`` / ``ssl.ca.pem`` (inline PEM); none of them: the system's trusted CAs.
  JKS and PKCS12 stores are refused when they are read, with a message saying how to convert them.
* client certificate (mutual TLS): ``ssl.keystore.location`` (PEM holding certificate chain and key),
  ``ssl.certificate.location`` + ``ssl.key.location``, or inline ``ssl.keystore.certificate.chain`` +
  ``ssl.keystore.key`` (also ``ssl.certificate.pem`` + ``ssl.key.pem``); ``ssl.key.password`` (else
  ``ssl.keystore.password``) for an encrypted key.
* ``ssl.endpoint.identification.algorithm``: ``https`` (default) verifies the broker's host name; an empty
  value (or ``none``) turns only that check off; ``enable.ssl.certificate.verification=false`` turns all checks
  off. ``ssl.enabled.protocols`` / ``ssl.protocol`` bound the TLS versions (TLSv1.2 and TLSv1.3 by default),
  ``ssl.cipher.suites`` takes OpenSSL cipher names.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from spark_kwire.client.errors import ConfigError
from spark_kwire.client.settings.secret import Secret, is_sensitive_key
from spark_kwire.client.settings.tls import Given, TlsSettings

__all__ = ["tls_settings", "TLS_VERSIONS"]

TLS_VERSIONS = ("TLSV1", "TLSV1.1", "TLSV1.2", "TLSV1.3")


def _first(values, *keys: str) -> Given | None:
    for key in keys:
        value = values.get(key)
        if value is not None:
            return Given(key, value)
    return None


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


def _inline(given: Given | None) -> Given | None:
    if given is None:
        return None
    text = _normalise_inline_pem(given.value.reveal() if isinstance(given.value, Secret) else given.value)
    return Given(given.key, Secret(text) if isinstance(given.value, Secret) else text)


def _versions(values) -> dict:
    enabled = values.get("ssl.enabled.protocols")
    if enabled is not None:
        names = [p.strip().upper() for p in enabled.split(",") if p.strip()]
        if not names or any(p not in TLS_VERSIONS for p in names):
            raise ConfigError("ssl.enabled.protocols", enabled, "a comma-separated list of TLSv1.2, TLSv1.3")
        return {"tls_versions": tuple(sorted(names, key=TLS_VERSIONS.index))}
    protocol = values.get("ssl.protocol")
    if protocol is not None:
        name = protocol.strip().upper()
        if name in TLS_VERSIONS:
            return {"max_version": name}
        if name not in ("TLS", "SSL"):
            raise ConfigError("ssl.protocol", protocol, "TLSv1.2, TLSv1.3, TLS")
    return {}


def _client_certificate(values) -> dict:
    keystore = _first(values, "ssl.keystore.location")
    if keystore is not None:
        return {"keystore_file": keystore}
    cert, key = _first(values, "ssl.certificate.location"), _first(values, "ssl.key.location")
    if cert or key:
        if not (cert and key):
            missing = "ssl.key.location" if cert else "ssl.certificate.location"
            raise ConfigError((cert or key).key, (cert or key).value,
                              reason=f"{missing} must be set too (client certificate and private key)")
        return {"cert_file": cert, "key_file": key}
    chain = _first(values, "ssl.keystore.certificate.chain", "ssl.certificate.pem")
    inline_key = _first(values, "ssl.keystore.key", "ssl.key.pem")
    if chain or inline_key:
        if not (chain and inline_key):
            missing = "ssl.keystore.key" if chain else "ssl.keystore.certificate.chain"
            raise ConfigError((chain or inline_key).key, "(inline PEM)",
                              reason=f"{missing} must be set too (client certificate chain and private key)")
        return {"chain_pem": _inline(chain), "key_pem": _inline(inline_key)}
    return {}


def tls_settings(values) -> TlsSettings:
    """The :class:`TlsSettings` of the ``ssl.*`` options read by :func:`~.parse.parse_options` (or any mapping of
    typed values with ``get``); raises :class:`ConfigError` naming the option."""
    algorithm = values.get("ssl.endpoint.identification.algorithm", "https").strip().lower()
    if algorithm not in ("https", "", "none"):
        raise ConfigError("ssl.endpoint.identification.algorithm", algorithm, "https, '' (empty: no host name check)")
    verify = values.get("enable.ssl.certificate.verification", True)
    ciphers = values.get("ssl.cipher.suites")
    if ciphers is not None:
        ciphers = ":".join(c.strip() for c in ciphers.replace(":", ",").split(",") if c.strip()) or None
    store_type = values.get("ssl.truststore.type")
    keystore_type = values.get("ssl.keystore.type")
    return TlsSettings(
        check_hostname=algorithm == "https" and verify, verify_certificates=verify, **_versions(values),
        ciphers=ciphers, trust_store_type=store_type.upper() if store_type else None,
        trust_file=_first(values, "ssl.truststore.location", "ssl.ca.location"),
        trust_pem=_inline(_first(values, "ssl.truststore.certificates", "ssl.ca.pem")),
        key_password=values.get("ssl.key.password") or values.get("ssl.keystore.password"),
        keystore_type=keystore_type.upper() if keystore_type else None, **_client_certificate(values))


def tls_of_mapping(options: Mapping[str, Any]) -> TlsSettings:
    """The :class:`TlsSettings` of a plain mapping of ``ssl.*`` names to strings (or Secrets), read with the
    settings' kinds: what a JAAS line's ``ssl.*`` options or a schema registry's ``ssl.*`` options give."""
    from spark_kwire.client.settings.names import HONOURED, NO_EFFECT

    typed = {}
    for key, value in options.items():
        kind = HONOURED.get(key)
        if key in NO_EFFECT and key.startswith("ssl."):
            continue
        if kind is None or not key.startswith(("ssl.", "enable.ssl.")):
            raise ConfigError(key, Secret("") if is_sensitive_key(key) else value,
                              reason="not a TLS setting kwire knows")
        typed[key] = kind.parse(key, value)
    return tls_settings(typed)
