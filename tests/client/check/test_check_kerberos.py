"""kwire check with GSSAPI against a real MIT KDC and a kerberized broker: the keytab or ticket cache found on this
host, the principal and its ticket, the service principal, clock skew, and what each failure asks for."""

from __future__ import annotations

import pytest

from harness.kerberos import GSSAPI_LISTENER
from spark_kwire.client.check import FAIL, OK, SKIPPED, check_connection
from tests.client.auth.kerberos_fixtures import (_fresh_logins, cache_jaas, gssapi_options,  # noqa: F401
                                                 kerberos, keytab_jaas, skew_ticket_cache, start_cluster)


@pytest.fixture(scope="module")
def cluster(kerberos):  # noqa: F811
    broker = start_cluster(kerberos)
    yield broker
    broker.stop()


def _check(cluster, jaas, **extra):
    options = {f"kafka.{k}": v for k, v in gssapi_options(cluster, jaas).items()}
    options.update(extra)
    return check_connection(options)


def _one(report, step, outcome, target=None):
    rows = report.where(step=step, outcome=outcome, target=target)
    assert len(rows) == 1, report.text()
    return rows[0]


def test_a_keytab_login_reports_the_principal_ticket_and_service_principal(kerberos, cluster):  # noqa: F811
    principal = kerberos.principal("etl")
    report = _check(cluster, keytab_jaas(kerberos.user("etl"), principal), subscribe="nothing-here")
    login = _one(report, "sasl_login", OK).detail
    assert f"Kerberos ticket of {principal} from keytab {kerberos.user('etl')}" in login and "valid for" in login
    auth = _one(report, "sasl_authenticate", OK, "bootstrap").detail
    assert f"authenticated as '{principal}'" in auth and f"service principal kafka/localhost@{kerberos.realm.realm}" \
        in auth
    assert _one(report, "sasl_authenticate", OK, "broker 1")
    assert [(r.step, r.outcome) for r in report.where(outcome=FAIL)] == [("topic", FAIL)]  # only the missing topic


def test_a_ticket_cache_and_an_empty_one(kerberos, cluster, tmp_path):  # noqa: F811
    principal = kerberos.principal("etl")
    cache = kerberos.cache(tmp_path, "etl")
    assert _check(cluster, cache_jaas(cache, principal)).ok
    empty = _check(cluster, cache_jaas(str(tmp_path / "no-such-cache"), principal))
    row = _one(empty, "sasl_login", FAIL)
    assert "kinit" in row.fix
    assert "sasl_login failed" in _one(empty, "sasl_authenticate", SKIPPED, "bootstrap").detail


def test_a_keytab_missing_on_this_host(kerberos, cluster, tmp_path):  # noqa: F811
    missing = tmp_path / "elsewhere" / "etl.keytab"
    report = _check(cluster, keytab_jaas(missing, kerberos.principal("etl")))
    row = _one(report, "sasl_login", FAIL)
    assert row.target == "this host" and f"the keytab {missing} does not exist" in row.detail
    assert "every executor" in row.fix
    assert _one(report, "sasl_mechanisms", OK, "bootstrap")  # the listener is still asked what it offers


def test_a_host_that_is_not_the_one_in_the_brokers_principal(kerberos, cluster):  # noqa: F811
    by_address = cluster.bootstrap(GSSAPI_LISTENER).replace("localhost", "127.0.0.1")
    report = _check(cluster, keytab_jaas(kerberos.user("etl"), kerberos.principal("etl")),
                    **{"kafka.bootstrap.servers": by_address})
    row = _one(report, "sasl_authenticate", FAIL, "bootstrap")
    assert f"kafka/127.0.0.1@{kerberos.realm.realm}" in row.detail and "sasl.kerberos.service.name" in row.fix


def test_clock_skew_as_the_kdc_reveals_it(kerberos, cluster, tmp_path):  # noqa: F811
    """A ticket cache whose library clock runs 10 minutes ahead: the KDC refuses the service ticket for the skew."""
    cache = kerberos.cache(tmp_path, "etl")
    skew_ticket_cache(cache, 600)
    report = _check(cluster, cache_jaas(cache, kerberos.principal("etl")))
    row = _one(report, "sasl_authenticate", FAIL, "bootstrap")
    assert "Clock skew too great" in row.detail and row.fix.startswith("Synchronise the clocks")
