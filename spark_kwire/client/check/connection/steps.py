"""Steps 1 to 4 for one broker address, in order: resolve, connect, TLS, SASL, ApiVersions. The runner calls it for
each bootstrap server, and again for each broker the cluster's Metadata advertises.

Two connections are made after TCP: a probe, which shows what the broker tells anyone (its certificate without
verifying it, its API versions, the SASL mechanisms it offers; no credential is sent), and the client's own
connection, with its TLS verification and SASL login, which is what a query gets. A step that cannot run because an
earlier one failed gets a skipped row naming that step; credentials are never sent to a broker whose certificate
did not verify.
"""

from __future__ import annotations

from dataclasses import dataclass

from spark_kwire.client.check.connection.credentials import HostCredentials
from spark_kwire.client.check.connection.network import NetworkError, family_name, resolve, tcp_connect
from spark_kwire.client.check.connection.sasl_probe import (ILLEGAL_SASL_STATE, RecordingAuthenticator,
                                                            offered_mechanisms, sasl_failure)
from spark_kwire.client.check.connection.tls_probe import (RecordingTransport, TlsMaterial, speaks_tls,
                                                           tls_failure)
from spark_kwire.client.check.connection.tls_rows import tls_rows
from spark_kwire.client.check.connection.versions import api_gaps, describe_versions
from spark_kwire.client.check.context import CheckRun, Stopwatch
from spark_kwire.client.check.rows import (API_VERSIONS, CONNECT, RESOLVE, SASL_AUTHENTICATE, SASL_MECHANISMS,
                                           TLS_CERTIFICATE, TLS_CLIENT_CERTIFICATE, TLS_HANDSHAKE, TLS_HOSTNAME)
from spark_kwire.client.auth.tls import TlsError
from spark_kwire.client.core.connection import BrokerConnection
from spark_kwire.protocol import messages as m
from spark_kwire.protocol.errors import KwireError

__all__ = ["Target", "TargetRows", "check_target", "connection_steps", "handshake_name", "Probe"]

TLS_STEPS = (TLS_HANDSHAKE, TLS_CERTIFICATE, TLS_HOSTNAME, TLS_CLIENT_CERTIFICATE)
SASL_STEPS = (SASL_MECHANISMS, SASL_AUTHENTICATE)


@dataclass(frozen=True)
class Target:
    """A broker address to check: a bootstrap server, or a broker as Metadata advertises it."""
    role: str  # "bootstrap" | "broker"
    host: str
    port: int
    node_id: int | None = None

    @property
    def address(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    def __str__(self) -> str:
        return f"bootstrap {self.address}" if self.role == "bootstrap" else f"broker {self.node_id} {self.address}"


def handshake_name(mechanism: str) -> str:
    """The mechanism named in SaslHandshake (AWS_MSK_IAM speaks OAUTHBEARER)."""
    return "OAUTHBEARER" if mechanism == "AWS_MSK_IAM" else mechanism


def connection_steps(run: CheckRun) -> tuple[str, ...]:
    """The steps each address goes through with these settings."""
    protocol = run.settings.client.security_protocol
    return ((RESOLVE, CONNECT) + (TLS_STEPS if protocol.endswith("SSL") else ())
            + (SASL_STEPS if protocol.startswith("SASL_") else ()) + (API_VERSIONS,))


class TargetRows:
    """The rows of one target: each step once in order; :meth:`block` gives the steps not reported a skipped row."""

    def __init__(self, run: CheckRun, target: Target) -> None:
        self.run = run
        self.target = target
        self.pending = list(connection_steps(run))
        self.failed = False

    def _done(self, step: str) -> None:
        if step in self.pending:
            self.pending.remove(step)

    def ok(self, step, detail, ms=0.0, target=None):
        self._done(step)
        self.run.ok(step, target or self.target, detail, ms)

    def warn(self, step, detail, kind, ms=0.0, target=None):
        self._done(step)
        self.run.warn(step, target or self.target, detail, kind, ms)

    def fail(self, step, detail, kind, ms=0.0, target=None):
        self._done(step)
        self.failed = True
        self.run.fail(step, target or self.target, detail, kind, ms)

    def skipped(self, step, detail):
        self._done(step)
        self.run.skipped(step, self.target, detail)

    def block(self, reason: str, steps=None) -> None:
        chosen = [s for s in self.pending if steps is None or s in steps]
        self.run.blocked(chosen, self.target, reason)
        for step in chosen:
            self._done(step)


@dataclass
class Probe:
    """What the probe connection showed (see the module docstring)."""
    transport: RecordingTransport | None = None
    error: BaseException | None = None  # why the probe stopped early
    api_versions: dict | None = None
    sasl_code: int | None = None
    mechanisms: tuple[str, ...] | None = None
    mechanisms_ms: float = 0.0
    client_certificate_required: bool | None = None
    wants_tls: bool = False
    ms: float = 0.0


@dataclass
class Real:
    """What the client's own connection did."""
    conn: BrokerConnection
    transport: RecordingTransport | None
    recorder: RecordingAuthenticator | None
    error: BaseException | None = None
    ms: float = 0.0


def _network(run: CheckRun, rows: TargetRows, target: Target) -> bool:
    watch = Stopwatch()
    try:
        addresses = resolve(target.host, target.port, run.step_timeout_s())
    except NetworkError as exc:
        kind = "advertised_unresolved" if target.role == "broker" else exc.kind
        rows.fail(RESOLVE, str(exc), kind, watch.ms)
        rows.block(f"{RESOLVE} failed")
        return False
    if addresses == [target.host.strip("[]")]:
        rows.ok(RESOLVE, "an IP address: nothing to resolve", watch.ms)
    else:
        listed = ", ".join(f"{a} ({family_name(a)})" for a in addresses)
        rows.ok(RESOLVE, f"{target.host} resolves to {listed}", watch.ms)
    results = []
    for address in addresses:
        watch = Stopwatch()
        try:
            tcp_connect(address, target.port, run.step_timeout_s())
            results.append((address, None, watch.ms))
        except NetworkError as exc:
            results.append((address, exc, watch.ms))
    accepted = [a for a, error, _ in results if error is None]
    for address, error, ms in results:
        where = target if len(addresses) == 1 else f"{target} via {address}"
        if error is None:
            rows.ok(CONNECT, f"{address} accepted a TCP connection", ms, target=where)
        elif accepted:
            rows.warn(CONNECT, f"{address}: {error}; {', '.join(accepted)} accepted", "tcp_some_addresses", ms,
                      target=where)
        else:
            kind = "advertised_unreachable" if target.role == "broker" else error.kind
            advertised = " (the address the cluster advertises for this broker)" if target.role == "broker" else ""
            rows.fail(CONNECT, f"{address}{advertised}: {error}", kind, ms, target=where)
    if not accepted:
        rows.block(f"{CONNECT} failed")
        return False
    return True


def _probe(run: CheckRun, target: Target, tls: TlsMaterial | None, mechanism: str) -> Probe:
    config = run.client_config()
    probe = Probe(transport=RecordingTransport(tls.probe) if tls else None)
    watch = Stopwatch()
    conn = BrokerConnection(target.host, target.port, config, probe.transport, node_id=target.node_id)
    try:
        conn.connect()
        probe.api_versions = conn.api_versions
        if conn.supports(m.SASL_HANDSHAKE, 1):
            sasl_watch = Stopwatch()
            probe.sasl_code, probe.mechanisms = offered_mechanisms(conn, mechanism)
            probe.mechanisms_ms = sasl_watch.ms
    except KwireError as exc:
        probe.error = exc
        if tls is None and probe.api_versions is None:
            probe.wants_tls = speaks_tls(target.host, target.port, run.step_timeout_s())
    finally:
        conn.close()
    probe.ms = watch.ms
    if tls is not None and tls.probe_without_client_certificate is not None and probe.api_versions is not None:
        bare = BrokerConnection(target.host, target.port, config, tls.probe_without_client_certificate)
        try:
            bare.connect()
            probe.client_certificate_required = False
        except KwireError as exc:
            found = tls_failure(exc, client_certificate=False)
            if found and found[1] == "tls_client_certificate_required":
                probe.client_certificate_required = True
        finally:
            bare.close()
    return probe


def _connect(run: CheckRun, target: Target, tls: TlsMaterial | None, authenticate) -> Real:
    transport = RecordingTransport(tls.transport) if tls else None
    recorder = RecordingAuthenticator(authenticate) if authenticate is not None else None
    conn = BrokerConnection(target.host, target.port, run.client_config(), transport, recorder,
                            node_id=target.node_id)
    real = Real(conn, transport, recorder)
    watch = Stopwatch()
    try:
        conn.connect()
    except KwireError as exc:
        real.error = exc
        conn.close()
    real.ms = watch.ms
    return real


def _sasl_rows(run: CheckRun, rows: TargetRows, probe: Probe, real: Real | None, credentials: HostCredentials,
               tls_reason: str | None) -> None:
    configured = run.settings.client.sasl_mechanism
    recorder = real.recorder if real is not None else None
    code = probe.sasl_code if probe.sasl_code is not None else (recorder.handshake_code if recorder else None)
    offered = probe.mechanisms if probe.mechanisms is not None else (recorder.mechanisms if recorder else None)
    name = handshake_name(configured)
    if code is None:
        rows.block(tls_reason or "the connection failed before SaslHandshake (see api_versions)", SASL_STEPS)
        return
    listed = ", ".join(offered or ()) or "none"
    if code == ILLEGAL_SASL_STATE:
        rows.fail(SASL_MECHANISMS, "the listener answered SaslHandshake with ILLEGAL_SASL_STATE: it is not a SASL "
                                   "listener", "not_sasl_listener", probe.mechanisms_ms)
        rows.block(f"{SASL_MECHANISMS} failed", SASL_STEPS)
        return
    if name not in (offered or ()):
        rows.fail(SASL_MECHANISMS, f"the listener offers {listed}; kafka.sasl.mechanism={configured} is not among "
                                   f"them", "sasl_mechanism_not_offered", probe.mechanisms_ms)
        rows.block(f"{SASL_MECHANISMS} failed", SASL_STEPS)
        return
    rows.ok(SASL_MECHANISMS, f"the listener offers {listed}; {configured} is configured", probe.mechanisms_ms)
    if credentials.login_failed:
        rows.block("sasl_login failed on this host", SASL_STEPS)
    elif tls_reason:
        rows.block(f"{tls_reason}: credentials are sent only to a broker whose certificate verified", SASL_STEPS)
    elif recorder is None or (recorder.outcome is None and recorder.error is None):
        rows.block("the connection failed before authentication (see api_versions)", SASL_STEPS)
    elif recorder.error is not None:
        found = sasl_failure(recorder.error)
        rows.fail(SASL_AUTHENTICATE, str(recorder.error), found[1] if found else "sasl_failed", real.ms)
    else:
        outcome = recorder.outcome
        lifetime = f"{outcome.session_lifetime_ms / 1000:.0f} s" if outcome.session_lifetime_ms else "no limit"
        detail = f"authenticated as {outcome.principal!r} with {outcome.mechanism}; session lifetime {lifetime}"
        service = getattr(credentials.authenticator().mechanism_impl, "service_principal", None)
        if service is not None:
            detail += f"; service principal {service(rows.target.host)}"
        rows.ok(SASL_AUTHENTICATE, detail, real.ms)


def _versions_row(run: CheckRun, rows: TargetRows, probe: Probe, real: Real | None, tls_reason: str | None) -> None:
    ranges, seen_by = None, ""
    if real is not None and real.recorder is not None and real.recorder.api_versions:
        ranges = real.recorder.api_versions
    elif real is not None and real.error is None:
        ranges = real.conn.api_versions
    if not ranges and probe.api_versions:
        ranges, seen_by = probe.api_versions, " (seen by the probe, without logging in)"
    if not ranges and tls_reason:
        rows.block(tls_reason, (API_VERSIONS,))
        return
    if not ranges:
        error = probe.error or (real.error if real is not None else None)
        rows.fail(API_VERSIONS, f"no ApiVersions answer: {error}", "api_versions_failed", probe.ms)
        return
    missing, optional = api_gaps(ranges, sasl=run.settings.client.security_protocol.startswith("SASL_"))
    text = describe_versions(ranges) + seen_by
    if missing:
        rows.fail(API_VERSIONS, f"{text}; kwire needs: {'; '.join(missing)}", "api_missing")
    elif optional:
        rows.warn(API_VERSIONS, f"{text}; features unavailable: {'; '.join(optional)}", "api_optional_missing")
    else:
        rows.ok(API_VERSIONS, text)


def check_target(run: CheckRun, credentials: HostCredentials, target: Target) -> BrokerConnection | None:
    """Report steps 1-4 for ``target``; the client's connection to it when every step passed (the caller closes
    it), else None."""
    rows = TargetRows(run, target)
    if run.out_of_time:
        rows.block(run.out_of_time_reason)
        return None
    if not _network(run, rows, target):
        return None
    protocol = run.settings.client.security_protocol
    tls = None
    if protocol.endswith("SSL"):
        tls = credentials.tls()
        if tls is None:
            rows.block("tls_files failed on this host")
            return None
    sasl = protocol.startswith("SASL_")
    authenticator = credentials.authenticator() if sasl else None
    mechanism = handshake_name(run.settings.client.sasl_mechanism)
    probe = _probe(run, target, tls, mechanism if sasl else "PLAIN")
    # the client's own connection, unless the probe already failed where credentials play no part (no TLS, no
    # answer); after a TLS alert it still shows how the client judged the broker's certificate
    usable = (probe.transport is None or probe.transport.seen is not None) and \
        (probe.error is None or isinstance(probe.error, TlsError))
    if usable and run.out_of_time:
        rows.block(run.out_of_time_reason)
        return None
    offered = probe.sasl_code in (None, 0) and (probe.mechanisms is None or mechanism in probe.mechanisms)
    real = _connect(run, target, tls, authenticator if (sasl and offered) else None) if usable else None
    tls_reason = None
    if tls is not None:
        verdict = tls_rows(run, rows, tls, probe, real)
        if verdict.stop:
            rows.block(verdict.reason)
            return _close(real)
        tls_reason = verdict.reason
    elif probe.wants_tls:
        rows.fail(TLS_HANDSHAKE, f"the listener answered a TLS handshake, and kafka.security.protocol={protocol} "
                                 f"speaks without TLS ({probe.error})", "listener_wants_tls", probe.ms)
        rows.block(f"{TLS_HANDSHAKE} failed")
        return _close(real)
    if sasl:
        _sasl_rows(run, rows, probe, real, credentials, tls_reason)
    elif probe.sasl_code is not None and probe.sasl_code != ILLEGAL_SASL_STATE:
        rows.fail(SASL_MECHANISMS, f"the listener is a SASL listener (it offers {', '.join(probe.mechanisms or ())}"
                                   f") and kafka.security.protocol={protocol} configures no SASL login",
                  "listener_wants_sasl", probe.mechanisms_ms)
    _versions_row(run, rows, probe, real, tls_reason)
    rows.block("an earlier step failed")
    authenticated = not sasl or (real is not None and real.recorder is not None and real.recorder.outcome is not None)
    if real is not None and real.error is None and real.conn.connected and authenticated and not rows.failed:
        return real.conn
    return _close(real)


def _close(real: Real | None) -> None:
    if real is not None:
        real.conn.close()
    return None
