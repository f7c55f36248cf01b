"""Clients that keep producing and fetching across several Kerberos ticket lifetimes.

The KDC gives the principals 30-second tickets (tolerating 5 s of skew, not MIT's default 5 minutes) and the
broker makes every connection re-authenticate every 10 s (``connections.max.reauth.ms``, KIP-368), so a client
whose ticket runs out fails within seconds. Four clients run side by side for 2.2 lifetimes:

* a keytab login, which kwire renews itself (the KDC's log counts its logins);
* a ticket cache that something else renews (a thread running ``kinit -kt``, as a cron job or k5start would);
* a renewable ticket cache with ``renewTGT=true``, which kwire renews with ``sasl.kerberos.kinit.cmd -R``
  (a wrapper around kinit records that it ran);
* and, as the control that shows the lifetimes are real, a ticket cache nobody renews: it must fail with a
  ``ticket_expired`` error once its ticket ends, and not before.
"""

from __future__ import annotations

import re
import stat
import threading
import time
import uuid

import pyarrow as pa
import pytest

from spark_kwire.client import KafkaClient, Producer
from spark_kwire.client.admin.admin import Admin
from spark_kwire.client.consumer.fetcher import fetch_range
from spark_kwire.client.auth.kerberos import KerberosError
from tests.client.auth.kerberos_fixtures import (_fresh_logins, cache_jaas, gssapi_options, kerberos,  # noqa: F401
                                            keytab_jaas, start_cluster)

LIFETIME_S = 30
REAUTH_MS = 10_000
RUN_S = 2.2 * LIFETIME_S


@pytest.fixture(scope="module")
def reauth_kafka(kerberos):
    cluster = start_cluster(kerberos, reauth_ms=REAUTH_MS)
    yield cluster
    cluster.stop()


def _kerberos_cause(exc: BaseException | None) -> KerberosError | None:
    """The KerberosError behind `exc` (the producer wraps delivery failures; retries wrap their last error)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, KerberosError):
            return exc
        exc = getattr(exc, "error", None) or getattr(exc, "last_error", None) or exc.__cause__ or exc.__context__
    return None


class Worker(threading.Thread):
    """Produces 10 records and fetches them back, once a second, until `until` or the first failure."""

    def __init__(self, name: str, opts: dict, topic: str, until: float) -> None:
        super().__init__(name=name, daemon=True)
        self.opts, self.topic, self.until = opts, topic, until
        self.rounds = 0
        self.error: BaseException | None = None
        self.failed_at: float | None = None
        self.reauthentications = 0
        self.login = None

    def run(self) -> None:
        try:
            with KafkaClient(self.opts) as client:
                self.login = client.hooks.authenticate.mechanism_impl.login()
                with Producer(client) as producer:
                    offset = 0
                    while time.monotonic() < self.until:
                        values = pa.array([f"{self.name}-{self.rounds}-{i}".encode() for i in range(10)], pa.binary())
                        producer.send_batch(self.topic, 0, values)
                        assert producer.flush()[(self.topic, 0)].records == 10
                        got = [v for b in fetch_range(client, self.topic, 0, offset, offset + 10)
                               for v in b.value.to_pylist()]
                        assert got == values.to_pylist(), f"{self.name}: read back {got[:3]}..."
                        offset += 10
                        self.rounds += 1
                        self.reauthentications = max(
                            (c.sasl_session.reauth_count for c in client._connections.values() if c.sasl_session),
                            default=0)
                        time.sleep(1.0)
        except BaseException as exc:  # reported by the test
            self.error = exc
            self.failed_at = time.monotonic()


def test_clients_run_across_ticket_lifetimes(kerberos, reauth_kafka, tmp_path):
    realm = kerberos.realm
    short = {"max_life": f"{LIFETIME_S} seconds"}
    keytab_user = kerberos.user("keytab-user", **short)
    cache_keytab = kerberos.user("cache-user", **short)
    kerberos.user("renew-user", max_renew_life="10 minutes", **short)
    kerberos.user("control-user", **short)
    renewed_cache = kerberos.cache(tmp_path, "cache-user")
    renewable_cache = kerberos.cache(tmp_path, "renew-user", lifetime=f"{LIFETIME_S}s", renewable="10m")
    control_cache = kerberos.cache(tmp_path, "control-user")
    control_ticket_end = time.monotonic() + LIFETIME_S
    kinit_log = tmp_path / "kinit-calls"
    wrapper = tmp_path / "kinit-wrapper"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {kinit_log}\nexec kinit "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)

    topics = {name: f"lifetimes-{name}-{uuid.uuid4().hex[:6]}" for name in ("keytab", "cache", "renew", "control")}
    logins_before = _as_requests(realm, kerberos.principal("keytab-user"))
    with KafkaClient(gssapi_options(reauth_kafka, keytab_jaas(keytab_user, kerberos.principal("keytab-user")))) as c:
        Admin(c).create_topics([(t, 1, 1) for t in topics.values()])

    stop_kinit = threading.Event()

    def renew_externally() -> None:  # what a cron job or k5start does for a ticket cache
        while not stop_kinit.wait(LIFETIME_S / 3):
            realm.kinit("cache-user", cache_keytab, renewed_cache.split(":", 1)[1])

    renewer = threading.Thread(target=renew_externally, daemon=True)
    renewer.start()
    until = time.monotonic() + RUN_S
    workers = [
        Worker("keytab", gssapi_options(reauth_kafka, keytab_jaas(keytab_user, kerberos.principal("keytab-user"))),
               topics["keytab"], until),
        Worker("cache", gssapi_options(reauth_kafka, cache_jaas(renewed_cache, kerberos.principal("cache-user"))),
               topics["cache"], until),
        Worker("renew", gssapi_options(reauth_kafka, cache_jaas(renewable_cache, kerberos.principal("renew-user"),
                                                                 extra=" renewTGT=true"),
                                       **{"sasl.kerberos.kinit.cmd": str(wrapper)}), topics["renew"], until),
        Worker("control", gssapi_options(reauth_kafka, cache_jaas(control_cache, kerberos.principal("control-user"))),
               topics["control"], until),
    ]
    try:
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(RUN_S + 60)
    finally:
        stop_kinit.set()
    by_name = {w.name: w for w in workers}

    for name in ("keytab", "cache", "renew"):
        worker = by_name[name]
        assert worker.error is None, f"{name} failed after {worker.rounds} rounds: {worker.error!r}"
        assert worker.rounds >= RUN_S * 0.5, f"{name} made only {worker.rounds} rounds"
        assert worker.reauthentications >= RUN_S * 1000 / REAUTH_MS - 2, (name, worker.reauthentications)

    # the keytab login (shared by the admin client and the worker) was renewed by kwire: the KDC issued it a new
    # initial ticket about once per lifetime
    keytab_logins = _as_requests(realm, kerberos.principal("keytab-user")) - logins_before
    login = by_name["keytab"].login
    assert keytab_logins >= 3 and login.keytab_logins == keytab_logins, \
        f"the KDC issued {keytab_logins} tickets, kwire counted {login.keytab_logins} logins; the last ticket " \
        f"ends in {login.expires_at - time.time():.1f} s, the workers ran {RUN_S:.0f} s"
    # the renewable cache was renewed through sasl.kerberos.kinit.cmd, with -R on that cache
    calls = kinit_log.read_text().splitlines() if kinit_log.exists() else []
    assert len(calls) >= 2 and all(c == f"-R -c {renewable_cache}" for c in calls), calls
    assert by_name["renew"].login.cache_renewals == len(calls)

    control = by_name["control"]
    cause = _kerberos_cause(control.error)
    assert cause is not None and cause.kind == "ticket_expired", f"the control client did not fail as expected: " \
                                                                 f"{control.error!r}"
    assert control_ticket_end - 1 <= control.failed_at <= control_ticket_end + REAUTH_MS / 1000 + 5
    assert kerberos.principal("control-user") in str(cause) and "keytab" in str(cause)


def _as_requests(realm, principal: str) -> int:
    return len(re.findall(rf"AS_REQ .*ISSUE.* {re.escape(principal)} for krbtgt/", realm.kdc_log()))
