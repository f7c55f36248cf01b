"""The TLS rows of one broker address: the handshake, the certificate, the host name and the client certificate,
from what the probe saw (the certificate, whatever its state) and what the client's own connection decided.

OpenSSL reports the first verification failure only; each row is decided on its own where it can be: the expiry from
the certificate's dates, the chain again without the host name when the host name failed, the host name by kwire's
own matching when the chain failed first.
"""

from __future__ import annotations

from dataclasses import dataclass

from spark_kwire.client.auth.tls import TlsError
from spark_kwire.client.check.connection.tls_probe import RecordingTransport, TlsMaterial, tls_failure
from spark_kwire.client.check.connection.x509 import names_host
from spark_kwire.client.check.context import CheckRun, Stopwatch
from spark_kwire.client.check.rows import TLS_CERTIFICATE, TLS_CLIENT_CERTIFICATE, TLS_HANDSHAKE, TLS_HOSTNAME
from spark_kwire.client.core.connection import BrokerConnection
from spark_kwire.protocol.errors import KwireError

__all__ = ["TlsVerdict", "tls_rows", "EXPIRY_WARNING_DAYS"]

EXPIRY_WARNING_DAYS = 30
_LATER = (TLS_CERTIFICATE, TLS_HOSTNAME, TLS_CLIENT_CERTIFICATE)


@dataclass(frozen=True)
class TlsVerdict:
    """``stop``: the handshake failed, nothing after it can run; ``reason``: why credentials are not sent (a
    verification failed), None when TLS passed."""
    stop: bool = False
    reason: str | None = None


def _real_tls_error(real) -> BaseException | None:
    if real is None:
        return None
    if real.transport is not None and real.transport.error is not None:
        return real.transport.error
    return real.error if isinstance(real.error, TlsError) else None


def _chain_verdict(run: CheckRun, rows, tls: TlsMaterial) -> tuple[tuple[str, str] | None, BaseException | None]:
    """Verify the chain without the host name (after a host name failure hid the chain's state)."""
    transport = RecordingTransport(tls.chain_only())
    conn = BrokerConnection(rows.target.host, rows.target.port, run.client_config(), transport)
    try:
        conn.connect()
        return None, None
    except KwireError as exc:
        error = transport.error or exc
        return tls_failure(error, client_certificate=tls.client_certificate_option is not None), error
    finally:
        conn.close()


def tls_rows(run: CheckRun, rows, tls: TlsMaterial, probe, real) -> TlsVerdict:
    """Report the TLS steps of ``rows.target``; see :class:`TlsVerdict`."""
    has_certificate = tls.client_certificate_option is not None
    seen = probe.transport.seen
    if seen is None:  # the probe's handshake failed: no TLS at all
        error = probe.transport.error or probe.error
        step, kind = tls_failure(error, client_certificate=has_certificate) or (TLS_HANDSHAKE, "tls_handshake_failed")
        rows.fail(step, f"the TLS handshake failed: {error}", kind, probe.transport.ms)
        return TlsVerdict(stop=True, reason=f"{step} failed")
    real_error = _real_tls_error(real)
    verdict = tls_failure(real_error, client_certificate=has_certificate) if real_error is not None else None
    if verdict is not None and verdict[0] == TLS_HANDSHAKE:
        rows.fail(TLS_HANDSHAKE, f"the client's TLS handshake failed: {real_error}", verdict[1], real.transport.ms)
        return TlsVerdict(stop=True, reason=f"{TLS_HANDSHAKE} failed")
    rows.ok(TLS_HANDSHAKE, f"{seen.version}, cipher {seen.cipher}", probe.transport.ms)
    if real is None:  # the probe's handshake passed, then the broker did not answer
        rows.block("the connection failed after the TLS handshake (see api_versions)", _LATER)
        return TlsVerdict()
    failed = [step for step in (_certificate_row(run, rows, tls, seen, verdict, real_error),
                                _hostname_row(rows, tls, seen, verdict),
                                _client_certificate_row(rows, tls, probe, verdict, real_error)) if step]
    return TlsVerdict(reason=f"{failed[0]} failed" if failed else None)


def _certificate_row(run, rows, tls, seen, verdict, real_error) -> str | None:
    leaf = seen.leaf
    if leaf is None:
        description = "the broker's certificate could not be read"
    else:
        days = leaf.days_left()
        left = f"{days:.0f} days left" if days >= 0 else f"expired {-days:.1f} days ago"
        description = (f"subject {leaf.subject}; issuer {leaf.issuer}; valid until {leaf.not_after:%Y-%m-%d %H:%M} "
                       f"UTC ({left})")
        chain = seen.certificates()
        if len(chain) > 1:
            description += "; chain: " + " <- ".join(c.subject for c in chain)
    error = real_error
    watch = Stopwatch()
    if verdict is not None and verdict[0] == TLS_HOSTNAME and tls.settings.verify_certificates:
        verdict, error = _chain_verdict(run, rows, tls)
    if verdict is not None and verdict[0] == TLS_CERTIFICATE:
        rows.fail(TLS_CERTIFICATE, f"{description}; not accepted with {tls.trust}: {error}", verdict[1], watch.ms)
        return TLS_CERTIFICATE
    if not tls.settings.verify_certificates:
        rows.warn(TLS_CERTIFICATE, f"{description}; NOT verified (kafka.enable.ssl.certificate.verification=false)",
                  "tls_verification_off", watch.ms)
    elif leaf is not None and leaf.days_left() < 0:
        rows.fail(TLS_CERTIFICATE, f"{description}: expired", "tls_expired", watch.ms)
        return TLS_CERTIFICATE
    elif leaf is not None and leaf.days_left() < EXPIRY_WARNING_DAYS:
        rows.warn(TLS_CERTIFICATE, f"{description}: expires within {EXPIRY_WARNING_DAYS} days", "tls_expires_soon",
                  watch.ms)
    else:
        rows.ok(TLS_CERTIFICATE, f"{description}; trusted ({tls.trust})", watch.ms)
    return None


def _hostname_row(rows, tls, seen, verdict) -> str | None:
    leaf = seen.leaf
    host = rows.target.host
    names = ", ".join(leaf.names) if leaf is not None and leaf.names else "no host name"
    if not tls.settings.verify_certificates:
        rows.skipped(TLS_HOSTNAME, "not checked: kafka.enable.ssl.certificate.verification=false")
    elif not tls.settings.check_hostname:
        rows.warn(TLS_HOSTNAME, f"not checked (kafka.ssl.endpoint.identification.algorithm is empty); the "
                                f"certificate names {names}, connected as {host!r}", "tls_hostname_unchecked")
    elif verdict is not None and verdict[0] == TLS_HOSTNAME:
        rows.fail(TLS_HOSTNAME, f"the certificate names {names}, not {host!r}", "tls_hostname_mismatch")
        return TLS_HOSTNAME
    elif verdict is None or verdict[0] == TLS_CLIENT_CERTIFICATE:  # the client accepted the broker's certificate
        rows.ok(TLS_HOSTNAME, f"the certificate names {names}; {host!r} matches")
    elif leaf is not None and names_host(leaf, host):
        rows.ok(TLS_HOSTNAME, f"the certificate names {names}; {host!r} matches (checked by kwire: the chain did not "
                              f"verify)")
    else:
        rows.fail(TLS_HOSTNAME, f"the certificate names {names}, not {host!r} (checked by kwire: the chain did not "
                                f"verify)", "tls_hostname_mismatch")
        return TLS_HOSTNAME
    return None


def _client_certificate_row(rows, tls, probe, verdict, real_error) -> str | None:
    configured = tls.client_certificate_option is not None
    alert = tls_failure(probe.error, client_certificate=configured) if isinstance(probe.error, TlsError) else None
    refused = next((found for found in (verdict, alert) if found and found[0] == TLS_CLIENT_CERTIFICATE), None)
    if configured:
        subject = tls.client_certificate.subject if tls.client_certificate is not None else "(unreadable)"
        what = f"client certificate {subject} from {tls.client_certificate_option}"
        if refused is not None:
            rows.fail(TLS_CLIENT_CERTIFICATE, f"{what}: {real_error or probe.error}", refused[1])
            return TLS_CLIENT_CERTIFICATE
        if verdict is not None:
            rows.skipped(TLS_CLIENT_CERTIFICATE, f"not run: {verdict[0]} failed before the broker looked at {what}")
            return None
        said = {True: "requires one and accepted it",
                False: "does not require one (ssl.client.auth is not 'required'), so it may not have asked for it"}
        rows.ok(TLS_CLIENT_CERTIFICATE, f"{what} sent; the broker "
                                        f"{said.get(probe.client_certificate_required, 'accepted the connection')}")
        return None
    if refused is not None or probe.client_certificate_required:
        rows.fail(TLS_CLIENT_CERTIFICATE, f"the broker requires a client certificate and none is configured: "
                                          f"{real_error or probe.error}", "tls_client_certificate_required")
        return TLS_CLIENT_CERTIFICATE
    rows.skipped(TLS_CLIENT_CERTIFICATE, "none configured (not mutual TLS), and the broker does not require one")
    return None
