"""What a check reports: one :class:`CheckRow` per step and target, and the :class:`CheckReport` of a run.

A row says where it was measured (``host``, ``executor``: given by the caller, e.g. the CLI's host name and
``cli``, or a Spark executor's id), which step (:data:`STEPS`, in the order they run), against what (``target``:
``bootstrap host:port``, ``broker 2 host:port``, ``topic orders``, a registry URL...), its ``outcome`` (ok, warn,
fail or skipped), how long the step took, what was seen, and for warn and fail the fix in one sentence
(:mod:`.fixes`). Rows never carry a secret.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

__all__ = ["CheckRow", "CheckReport", "OK", "WARN", "FAIL", "SKIPPED", "OUTCOMES", "COLUMNS", "STEPS",
           "SETTINGS", "RESOLVE", "CONNECT", "TLS_FILES", "TLS_HANDSHAKE", "TLS_CERTIFICATE", "TLS_HOSTNAME",
           "TLS_CLIENT_CERTIFICATE", "SASL_LOGIN", "SASL_MECHANISMS", "SASL_AUTHENTICATE", "API_VERSIONS",
           "METADATA", "TOPIC", "TOPIC_ACCESS", "REGISTRY", "REGISTRY_AUTH", "REGISTRY_SUBJECT", "THROUGHPUT"]

OK, WARN, FAIL, SKIPPED = "ok", "warn", "fail", "skipped"
OUTCOMES = (OK, WARN, FAIL, SKIPPED)
_SEVERITY = {SKIPPED: 0, OK: 0, WARN: 1, FAIL: 2}

#: The row's fields, in order (the Spark table's columns).
COLUMNS = ("host", "executor", "step", "target", "outcome", "time_ms", "detail", "fix")

SETTINGS = "settings"
RESOLVE, CONNECT = "resolve", "connect"
TLS_FILES, TLS_HANDSHAKE, TLS_CERTIFICATE = "tls_files", "tls_handshake", "tls_certificate"
TLS_HOSTNAME, TLS_CLIENT_CERTIFICATE = "tls_hostname", "tls_client_certificate"
SASL_LOGIN, SASL_MECHANISMS, SASL_AUTHENTICATE = "sasl_login", "sasl_mechanisms", "sasl_authenticate"
API_VERSIONS, METADATA, TOPIC, TOPIC_ACCESS = "api_versions", "metadata", "topic", "topic_access"
REGISTRY, REGISTRY_AUTH, REGISTRY_SUBJECT, THROUGHPUT = "registry", "registry_auth", "registry_subject", "throughput"

#: Every step, in the order a run reports them, with what it checks (docs/checking-a-connection.md shows this).
STEPS: dict[str, str] = {
    SETTINGS: "the options are read; Kafka settings that have no effect in kwire are named",
    RESOLVE: "the host name resolves (every address it resolves to is listed)",
    CONNECT: "each address accepts a TCP connection",
    TLS_FILES: "the truststore and client certificate files the settings name are on this host and readable",
    TLS_HANDSHAKE: "the TLS handshake completes (a TLS listener, a common version and cipher)",
    TLS_CERTIFICATE: "the broker's certificate: subject, issuer, expiry (warns within 30 days), trusted chain",
    TLS_HOSTNAME: "the certificate names the host connected to",
    TLS_CLIENT_CERTIFICATE: "with mutual TLS, the client certificate is sent and accepted; without, none is required",
    SASL_LOGIN: "the login this host holds: user name, OAuth token (endpoint, expiry), Kerberos ticket (keytab or "
                "ticket cache, principal, expiry)",
    SASL_MECHANISMS: "the mechanisms the listener offers (SaslHandshake) include the configured one",
    SASL_AUTHENTICATE: "authentication with the configured mechanism (the service principal for GSSAPI)",
    API_VERSIONS: "the broker's API versions, and any API kwire needs that the broker lacks",
    METADATA: "the cluster's brokers as Metadata advertises them (each is then checked as the bootstrap servers were)",
    TOPIC: "each topic named exists; its partitions and their leaders",
    TOPIC_ACCESS: "the operations the principal may perform on each topic (KIP-430): READ to read, WRITE to write",
    REGISTRY: "each schema registry URL accepts a TCP connection",
    REGISTRY_AUTH: "the registry answers and accepts the credentials",
    REGISTRY_SUBJECT: "the subjects of the topics' values and keys",
    THROUGHPUT: "checkThroughput: a short fetch from each topic's leaders, in bytes per second from this host",
}


@dataclass(frozen=True)
class CheckRow:
    """One step against one target, as seen from one host (see the module docstring)."""

    host: str
    executor: str
    step: str
    target: str
    outcome: str  # ok | warn | fail | skipped
    time_ms: float
    detail: str
    fix: str | None = None  # one sentence, for warn and fail; None otherwise

    def as_dict(self) -> dict:
        return asdict(self)


def _worst(rows) -> str:
    worst = max((_SEVERITY[r.outcome] for r in rows), default=0)
    return {0: OK, 1: WARN, 2: FAIL}[worst]


@dataclass(frozen=True)
class CheckReport:
    """The rows of one run, where it ran, and how long it took (``total_ms``)."""

    rows: tuple[CheckRow, ...]
    host: str
    executor: str
    total_ms: float

    @property
    def worst(self) -> str:
        """``fail`` when a row failed, else ``warn`` when one warned, else ``ok`` (skipped rows count as ok)."""
        return _worst(self.rows)

    @property
    def ok(self) -> bool:
        """No row failed."""
        return self.worst != FAIL

    def counts(self) -> dict[str, int]:
        return {outcome: sum(1 for r in self.rows if r.outcome == outcome) for outcome in OUTCOMES}

    def where(self, *, step: str | None = None, outcome: str | None = None, target: str | None = None) -> list:
        """The rows of a step, an outcome, and/or whose target starts with ``target``."""
        return [r for r in self.rows if (step is None or r.step == step) and (outcome is None or r.outcome == outcome)
                and (target is None or r.target.startswith(target))]

    def summary(self) -> str:
        counts = self.counts()
        parts = ", ".join(f"{counts[o]} {o}" for o in (FAIL, WARN, OK, SKIPPED) if counts[o])
        return (f"kwire check from {self.host} ({self.executor}): {self.worst.upper()}; {len(self.rows)} rows "
                f"({parts}) in {self.total_ms / 1000:.2f} s")

    def text(self) -> str:
        """The rows as a table (each fix on its own line under its row), with the summary on top."""
        steps = max((len(r.step) for r in self.rows), default=4)
        targets = min(40, max((len(r.target) for r in self.rows), default=6))
        head = f"{'STEP':<{steps}}  {'TARGET':<{targets}}  {'OUTCOME':<7}  {'MS':>8}  DETAIL"
        lines = [self.summary(), "", head]
        indent = " " * (steps + targets + 23)
        for r in self.rows:
            target = r.target if len(r.target) <= targets else r.target[:targets - 1] + "…"
            lines.append(f"{r.step:<{steps}}  {target:<{targets}}  {r.outcome:<7}  {r.time_ms:>8.1f}  {r.detail}")
            if r.fix:
                lines.append(f"{indent}fix: {r.fix}")
        return "\n".join(lines)

    def as_dict(self) -> dict:
        return {"host": self.host, "executor": self.executor, "worst": self.worst, "total_ms": self.total_ms,
                "rows": [r.as_dict() for r in self.rows]}

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=2)
