"""SASL/GSSAPI against a real Apache Kafka broker whose only SASL mechanism is GSSAPI, with a real MIT KDC.

Logins from a keytab (Sun's and IBM's JAAS lines), from a ``kinit -kt`` ticket cache named in the JAAS line and
from KRB5CCNAME with no JAAS line; Kafka's Java console tools (an independent client) read what kwire wrote and
write what kwire reads; each failure a user meets (a keytab without the principal's key, a stale key, an unknown
principal, a KDC that is down or silent, clock skew, a broker host without a service principal, an empty ticket
cache, the gssapi package missing) fails within seconds, says which, names principal, realm and KDC, and shows no
key material; option mistakes are refused when the client is built.
"""

from __future__ import annotations

import logging
import pickle
import re
import socket
import subprocess
import sys
import time

import pytest

from spark_kwire.client import ClientConfig, ConfigError, KafkaClient
from spark_kwire.client.admin.delegation_tokens import DelegationTokenError, create_delegation_token
from spark_kwire.client.consumer.fetcher import fetch_range
from spark_kwire.client.auth.kerberos import KerberosError
from harness.processes import free_port
from tests.client.auth.kerberos_fixtures import (KRB5_MODULE, _fresh_logins, cache_jaas, gssapi_options,  # noqa: F401
                                            java_client_properties, java_console_consume, java_console_produce,
                                            kerberos, keytab_jaas, keytab_keys, roundtrip, skew_ticket_cache,
                                            start_cluster)

FAIL_WITHIN_S = 20


@pytest.fixture(scope="module")
def gssapi_kafka(kerberos):
    """One broker whose SASL_PLAINTEXT listener (advertised as localhost) enables GSSAPI only; no token secret."""
    cluster = start_cluster(kerberos)
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def alice(kerberos):
    return kerberos.user("alice")


def _as_requests(kerberos, name: str) -> int:
    """How many initial tickets the KDC issued to `name` (its own log, not kwire's)."""
    return len(re.findall(rf"AS_REQ .*ISSUE.* {re.escape(kerberos.principal(name))} for krbtgt/",
                          kerberos.realm.kdc_log()))


# -- logins ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("module", [KRB5_MODULE, "com.ibm.security.auth.module.Krb5LoginModule"])
def test_keytab_login_produces_and_fetches(kerberos, gssapi_kafka, alice, module):
    principal = kerberos.principal("alice")
    if module.startswith("com.ibm"):
        jaas = f'{module} required useKeytab="file:{alice}" principal="{principal}" credsType=initiator;'
    else:
        jaas = keytab_jaas(alice, principal)
    before = _as_requests(kerberos, "alice")
    with KafkaClient(gssapi_options(gssapi_kafka, jaas)) as client, \
            KafkaClient(gssapi_options(gssapi_kafka, jaas)) as second:
        roundtrip(client)
        assert second.list_topics()
        session = client.any_connection().sasl_session
        assert (session.mechanism, session.principal) == ("GSSAPI", principal)
    # two clients, several connections, one process: one login (the KDC's count), and service tickets for the
    # broker's principal were asked for
    assert _as_requests(kerberos, "alice") - before == 1
    assert f"{principal} for kafka/localhost@{kerberos.realm.realm}" in kerberos.realm.kdc_log()


def test_ticket_cache_named_in_the_jaas_line(kerberos, gssapi_kafka, tmp_path):
    cache = kerberos.cache(tmp_path, "bob")
    before = _as_requests(kerberos, "bob")
    opts = gssapi_options(gssapi_kafka, cache_jaas(cache, kerberos.principal("bob")))
    with KafkaClient(opts) as client:
        roundtrip(client)
        assert client.any_connection().sasl_session.principal == kerberos.principal("bob")
    assert _as_requests(kerberos, "bob") == before  # the cache's ticket was used: no new login


def test_default_cache_from_krb5ccname_without_jaas_or_mechanism(kerberos, gssapi_kafka, tmp_path, monkeypatch):
    """No sasl.jaas.config and no sasl.mechanism (Kafka's default is GSSAPI): the process's ticket cache."""
    monkeypatch.setenv("KRB5CCNAME", kerberos.cache(tmp_path, "carl"))
    opts = gssapi_options(gssapi_kafka)
    del opts["sasl.mechanism"], opts["sasl.kerberos.service.name"]
    with KafkaClient(opts) as client:
        roundtrip(client, 5)
        assert client.any_connection().sasl_session.principal == kerberos.principal("carl")


def test_java_clients_read_what_kwire_wrote_and_write_what_it_reads(kerberos, gssapi_kafka, alice, tmp_path):
    """Kafka's Java console consumer and producer, with a Krb5LoginModule keytab login, as the independent client."""
    principal = kerberos.principal("alice")
    java_config = java_client_properties(tmp_path / "java-client.properties", gssapi_kafka, alice, principal)
    with KafkaClient(gssapi_options(gssapi_kafka, keytab_jaas(alice, principal))) as client:
        topic = roundtrip(client, 25)
        assert java_console_consume(kerberos, gssapi_kafka, topic, 25, java_config) == \
            [f"{topic}-{i}" for i in range(25)]
    lines = [f"from-java-{i}" for i in range(15)]
    java_console_produce(kerberos, gssapi_kafka, topic, lines, java_config)
    cache = kerberos.cache(tmp_path, "bob")
    with KafkaClient(gssapi_options(gssapi_kafka, cache_jaas(cache))) as reader:
        got = [v.decode() for b in fetch_range(reader, topic, 0, 25, 40) for v in b.value.to_pylist()]
    assert got == lines


def test_pickled_config_carries_no_key_material_and_logs_in_again(kerberos, gssapi_kafka, alice):
    opts = gssapi_options(gssapi_kafka, keytab_jaas(alice, kerberos.principal("alice")))
    config = ClientConfig.from_kafka_options(opts)
    data = pickle.dumps(config)
    with open(alice, "rb") as f:
        keytab_bytes = f.read()
    assert keytab_bytes[-16:] not in data and str(alice).encode() not in data  # the JAAS line travels masked
    with KafkaClient(pickle.loads(data)) as client:
        hooks = pickle.loads(pickle.dumps(client.hooks))
        assert hooks.authenticate.mechanism == "GSSAPI"
        roundtrip(client, 3)


def test_delegation_tokens_disabled_without_the_secret_key(kerberos, gssapi_kafka, alice):
    with KafkaClient(gssapi_options(gssapi_kafka, keytab_jaas(alice, kerberos.principal("alice")))) as client:
        with pytest.raises(DelegationTokenError, match=r"DELEGATION_TOKEN_AUTH_DISABLED.*delegation\.token\.secret\.key"):
            create_delegation_token(client)


# -- failures ----------------------------------------------------------------------------------------------------

@pytest.fixture
def no_secrets(kerberos, caplog):
    """Checks, after the test, that no key of any keytab made so far shows in logs or in the texts it collected."""
    caplog.set_level(logging.DEBUG, logger="spark_kwire")
    seen: list[str] = []
    yield seen
    keys = [form for keytab in kerberos.keytabs.values() if keytab.exists() for form in keytab_keys(keytab)]
    texts = seen + [r.getMessage() for r in caplog.records]
    for text in texts:
        for key in keys:
            assert key not in text


def _fails(opts: dict, seen: list, error=KerberosError, kind: str | None = None) -> BaseException:
    """Build a client and list topics; the failure must come within FAIL_WITHIN_S. Returns the error."""
    started = time.monotonic()
    with pytest.raises(error) as info:
        with KafkaClient(opts) as client:
            client.list_topics()
    elapsed = time.monotonic() - started
    assert elapsed < FAIL_WITHIN_S, f"took {elapsed:.1f} s: {info.value}"
    exc = info.value
    seen += [str(exc), repr(exc), str(pickle.loads(pickle.dumps(exc)))]
    if kind is not None:
        assert exc.kind == kind, str(exc)
        assert not exc.retriable
    return exc


def _names_realm_and_kdc(text: str, kerberos, kdc: str | None = None) -> None:
    assert f"realm {kerberos.realm.realm}" in text.lower().replace(kerberos.realm.realm.lower(), kerberos.realm.realm)
    assert f"KDC {kdc or f'127.0.0.1:{kerberos.realm.port}'}" in text, text
    assert str(kerberos.realm.krb5_conf) in text, text


def test_keytab_without_the_principals_key_is_refused_when_the_client_is_built(kerberos, gssapi_kafka, no_secrets):
    bob = kerberos.user("bob")
    opts = gssapi_options(gssapi_kafka, keytab_jaas(bob, kerberos.principal("alice")))
    started = time.monotonic()
    with pytest.raises(ConfigError) as info:
        KafkaClient(opts)
    assert time.monotonic() - started < 2
    text = str(info.value)
    no_secrets.append(text)
    assert f"keytab {bob} holds no key for {kerberos.principal('alice')}" in text
    assert f"it holds keys for: {kerberos.principal('bob')}" in text and "klist -kt" in text


def test_stale_keytab_key(kerberos, gssapi_kafka, no_secrets):
    keytab = kerberos.user("dora")
    kerberos.realm.randomize_key("dora")  # the keytab now holds a key the KDC no longer has
    exc = _fails(gssapi_options(gssapi_kafka, keytab_jaas(keytab, kerberos.principal("dora"))), no_secrets,
                 kind="wrong_key")
    assert exc.principal == kerberos.principal("dora") and "Export a new keytab" in str(exc)
    _names_realm_and_kdc(str(exc), kerberos)


def test_unknown_principal(kerberos, gssapi_kafka, no_secrets):
    keytab = kerberos.user("ghost")
    kerberos.realm.delete_principal("ghost")
    exc = _fails(gssapi_options(gssapi_kafka, keytab_jaas(keytab, kerberos.principal("ghost"))), no_secrets,
                 kind="unknown_principal")
    assert f"the KDC does not know the principal {kerberos.principal('ghost')}" in str(exc)
    _names_realm_and_kdc(str(exc), kerberos)


def test_kdc_unreachable(kerberos, gssapi_kafka, alice, no_secrets, tmp_path, monkeypatch):
    dead = f"127.0.0.1:{free_port()}"
    monkeypatch.setenv("KRB5_CONFIG", str(kerberos.realm.write_krb5_conf(tmp_path / "krb5.conf", kdc=dead)))
    exc = _fails(gssapi_options(gssapi_kafka, keytab_jaas(alice, kerberos.principal("alice"))), no_secrets,
                 kind="kdc_unreachable")
    assert "no KDC of the realm answered" in str(exc) and f"KDC {dead}" in str(exc)
    assert str(tmp_path / "krb5.conf") in str(exc)


def test_kdc_that_never_answers_fails_within_request_timeout(kerberos, gssapi_kafka, alice, no_secrets, tmp_path,
                                                             monkeypatch):
    """MIT's library alone waits ~50 s on a KDC that accepts connections and stays silent."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    try:
        kdc = f"127.0.0.1:{silent.getsockname()[1]}"
        monkeypatch.setenv("KRB5_CONFIG", str(kerberos.realm.write_krb5_conf(tmp_path / "krb5.conf", kdc=kdc)))
        started = time.monotonic()
        exc = _fails(gssapi_options(gssapi_kafka, keytab_jaas(alice, kerberos.principal("alice")),
                                    **{"request.timeout.ms": "3000"}), no_secrets, kind="kdc_timeout")
        assert 2.9 < time.monotonic() - started < 8
        assert "no answer from the KDC within request.timeout.ms (3000 ms)" in str(exc) and f"KDC {kdc}" in str(exc)
    finally:
        silent.close()


def test_clock_skew(kerberos, gssapi_kafka, no_secrets, tmp_path):
    """A ticket cache whose library clock runs 10 minutes ahead: the KDC refuses the service-ticket request."""
    cache = kerberos.cache(tmp_path, "erin")
    skew_ticket_cache(cache, 600)
    exc = _fails(gssapi_options(gssapi_kafka, cache_jaas(cache, kerberos.principal("erin"))), no_secrets,
                 kind="clock_skew")
    assert "Clock skew too great" in str(exc) and "NTP" in str(exc)
    _names_realm_and_kdc(str(exc), kerberos)
    assert "service principal kafka/localhost@" in str(exc)


def test_broker_host_without_a_service_principal(kerberos, gssapi_kafka, alice, no_secrets):
    """The broker's principal is kafka/localhost; a client that bootstraps through 127.0.0.1 asks for another."""
    opts = gssapi_options(gssapi_kafka, keytab_jaas(alice, kerberos.principal("alice")))
    opts["bootstrap.servers"] = opts["bootstrap.servers"].replace("localhost", "127.0.0.1")
    exc = _fails(opts, no_secrets, kind="unknown_service")
    text = str(exc)
    assert f"the KDC has no service principal kafka/127.0.0.1@{kerberos.realm.realm}" in text
    assert "advertised" in text and "sasl.kerberos.service.name" in text
    _names_realm_and_kdc(text, kerberos)


def test_wrong_service_name(kerberos, gssapi_kafka, alice, no_secrets):
    opts = gssapi_options(gssapi_kafka, keytab_jaas(alice, kerberos.principal("alice")),
                          **{"sasl.kerberos.service.name": "kafka-typo"})
    exc = _fails(opts, no_secrets, kind="unknown_service")
    assert f"kafka-typo/localhost@{kerberos.realm.realm}" in str(exc)


def test_empty_ticket_cache(kerberos, gssapi_kafka, no_secrets, tmp_path, monkeypatch):
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{tmp_path / 'nothing-here'}")
    exc = _fails(gssapi_options(gssapi_kafka), no_secrets, kind="no_ticket")
    assert "Run kinit" in str(exc) and str(tmp_path / "nothing-here") in str(exc)


def test_ticket_cache_of_another_principal(kerberos, gssapi_kafka, no_secrets, tmp_path):
    cache = kerberos.cache(tmp_path, "bob")
    exc = _fails(gssapi_options(gssapi_kafka, cache_jaas(cache, kerberos.principal("alice"))), no_secrets,
                 kind="no_ticket")
    assert f"holds no ticket for {kerberos.principal('alice')}" in str(exc)


def test_missing_gssapi_package_is_a_config_error_before_any_connection(kerberos, gssapi_kafka, alice):
    code = (
        "import sys; sys.modules['gssapi'] = None\n"  # as if `pip install spark-kwire` had no [kerberos] extra
        "from spark_kwire.client import KafkaClient, ConfigError\n"
        f"opts = {gssapi_options(gssapi_kafka, keytab_jaas(alice, 'alice'))!r}\n"
        "try:\n    KafkaClient(opts)\nexcept ConfigError as exc:\n    print('CONFIG-ERROR', exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "CONFIG-ERROR" in out.stdout, out.stdout + out.stderr
    assert "pip install 'spark-kwire[kerberos]'" in out.stdout and "libkrb5-dev" in out.stdout
    assert "krb5-devel" in out.stdout


# -- options -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("jaas, extra, match", [
    (f'{KRB5_MODULE} required useKeyTab=true keyTab="{{keytab}}";', {}, r"useKeyTab=true needs principal"),
    (f'{KRB5_MODULE} required useKeyTab=true keyTab="{{keytab}}" principal="alice" password="pw123";', {},
     r"password logins"),
    (f'{KRB5_MODULE} required useKeyTab=true keyTab="{{keytab}}" principal="alice" useKeytab=yes;', {},
     r"unknown Krb5LoginModule option 'useKeytab'"),
    (f'{KRB5_MODULE} required useKeyTab=maybe keyTab="{{keytab}}" principal="alice";', {}, r"true or false"),
    (f'{KRB5_MODULE} required doNotPrompt=true;', {}, r"neither reads a keytab nor a ticket cache"),
    (f'{KRB5_MODULE} required keyTab="{{keytab}}" principal="alice";', {}, r"useKeyTab is not true"),
    (f'{KRB5_MODULE} required useKeyTab=true renewTGT=true keyTab="{{keytab}}" principal="alice";', {},
     r"renewTGT=true renews a ticket cache"),
    (f'{KRB5_MODULE} required useKeyTab=true keyTab="{{keytab}}" principal="alice" isInitiator=false;', {},
     r"isInitiator=false"),
    ('org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="pw123";', {},
     r"needs a Kerberos login module"),
    (f'{KRB5_MODULE} required useTicketCache=true serviceName="kafka";', {"sasl.kerberos.service.name": "other"},
     r"conflicts with serviceName='kafka'"),
    (f'{KRB5_MODULE} required useTicketCache=true;', {"sasl.kerberos.ticket.renew.window.factor": "1.5"},
     r"sasl.kerberos.ticket.renew.window.factor.*between 0.5 and 1.0"),
    (f'{KRB5_MODULE} required useTicketCache=true;', {"sasl.kerberos.min.time.before.relogin": "soon"},
     r"min.time.before.relogin"),
    (f'{KRB5_MODULE} required useTicketCache=true;', {"sasl.kerberos.service.nmae": "kafka"},
     r"unknown Kerberos option.*sasl.kerberos.service.name"),
    (f'{KRB5_MODULE} required useKeyTab=true keyTab="/nonexistent/alice.keytab" principal="alice";', {},
     r"keytab /nonexistent/alice.keytab does not exist"),
    (f'{KRB5_MODULE} required useTicketCache=true;', {"sasl.username": "u", "sasl.password": "pw123"},
     r"'sasl.username': sasl.username and sasl.password are for PLAIN and SCRAM, but sasl.mechanism is GSSAPI"),
    (f'{KRB5_MODULE} required useTicketCache=true;', {"sasl.oauthbearer.token.endpoint.url": "https://idp/token"},
     r"'sasl.oauthbearer.token.endpoint.url': it configures OAUTHBEARER or AWS_MSK_IAM logins"),
])
def test_option_mistakes_are_refused_when_the_client_is_built(kerberos, alice, jaas, extra, match):
    opts = {"bootstrap.servers": "localhost:1", "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI",
            "sasl.jaas.config": jaas.replace("{keytab}", str(alice)), **extra}
    with pytest.raises(ConfigError, match=match) as info:
        KafkaClient(opts)
    assert "pw123" not in str(info.value)


def test_accepted_options_that_mean_nothing_to_a_client_initiator(kerberos, gssapi_kafka, alice):
    """storeKey, doNotPrompt=false, refreshKrb5Config, debug and the kafkashaded prefix are accepted (see the
    settings module for why), and the login still works."""
    jaas = keytab_jaas(alice, kerberos.principal("alice"), module=f"kafkashaded.{KRB5_MODULE}",
                       extra=" doNotPrompt=false refreshKrb5Config=true debug=true")
    with KafkaClient(gssapi_options(gssapi_kafka, jaas, **{"sasl.kerberos.kinit.cmd": "/usr/bin/kinit",
                                                          "sasl.kerberos.ticket.renew.jitter": "0.1"})) as client:
        assert client.list_topics() is not None


def test_ticket_cache_first_then_keytab(kerberos, gssapi_kafka, alice, tmp_path):
    """useTicketCache=true and useKeyTab=true: the cache when it holds a ticket, else the keytab (Java's order)."""
    principal = kerberos.principal("alice")
    missing = tmp_path / "not-yet"
    jaas = (f'{KRB5_MODULE} required useTicketCache=true ticketCache="{missing}" useKeyTab=true keyTab="{alice}" '
            f'principal="{principal}";')
    before = _as_requests(kerberos, "alice")
    with KafkaClient(gssapi_options(gssapi_kafka, jaas)) as client:
        roundtrip(client, 3)
        login = client.hooks.authenticate.mechanism_impl.login()
        assert (login.keytab_logins, login.cache_reads) == (1, 0)
    assert _as_requests(kerberos, "alice") == before + 1
    kerberos.realm.kinit("alice", alice, missing)
    from spark_kwire.client.auth.kerberos.login import forget_kerberos_logins

    forget_kerberos_logins()
    with KafkaClient(gssapi_options(gssapi_kafka, jaas)) as client:
        roundtrip(client, 3)
        login = client.hooks.authenticate.mechanism_impl.login()
        assert (login.keytab_logins, login.cache_reads) == (0, 1)


def test_keytab_principals_as_klist_lists_them(kerberos, tmp_path):
    """The keytab reader behind the 'holds no key for' message, against MIT's klist (several principals and key
    versions in one keytab)."""
    from spark_kwire.client.auth.kerberos.keytab import keytab_entries

    keytab = tmp_path / "several.keytab"
    for name in ("alice", "bob"):
        kerberos.user(name)
        kerberos.realm.export_keytab(name, keytab)
    kerberos.realm.randomize_key("bob")  # a second key version of bob
    kerberos.realm.export_keytab("bob", keytab)
    listed = subprocess.run(["klist", "-k", str(keytab)], capture_output=True, text=True, check=True).stdout
    expected = [(p, int(v)) for v, p in re.findall(r"^\s*(\d+) (\S+@\S+)$", listed, re.M)]
    assert len({p for p, _ in expected}) == 2 and len({v for p, v in expected if p.startswith("bob")}) == 2
    assert [(e.principal, e.kvno) for e in keytab_entries(str(keytab))] == expected


@pytest.mark.parametrize("lifetime_s, last_login_ago_s, low, high", [
    (30, None, 24.0, 25.5),       # Java: 80 % + up to 5 % jitter; min.time.before.relogin (60 s) would pass expiry
    (36000, None, 28800, 30600),  # a 10-hour ticket: at 8 h to 8.5 h
    (120, 10, 96, 102),           # last login 10 s ago: min.time.before.relogin ends before the 80 % point
    (90, 50, 72, 76.5),           # last login 50 s ago: the same, nearer
])
def test_refresh_time_follows_kafkas_rule(lifetime_s, last_login_ago_s, low, high):
    from spark_kwire.client.auth.kerberos.login import refresh_time
    from spark_kwire.client.settings.logins import KerberosSettings

    now = 1_000_000.0
    last = now - last_login_ago_s if last_login_ago_s is not None else -1e12
    for _ in range(200):
        at = refresh_time(now, now + lifetime_s, now, last, KerberosSettings()) - now
        assert low <= at <= high
    # min.time.before.relogin after the last login comes after the 80-85 % point but before expiry: it wins
    assert refresh_time(now, now + 100, now, now, KerberosSettings(min_time_before_relogin_ms=90_000)) - now == 90


def test_every_keytab_login_plans_its_renewal_at_the_window_not_at_expiry(monkeypatch):
    """The second and later logins of a short ticket renew at 80-85 % of it too. min.time.before.relogin counts
    from the login just made (Java's rule): counted from the previous one, it landed at the very end of the
    second ticket, so a stream renewed at the last moment (seen in the lifetimes test)."""
    from spark_kwire.client.auth.kerberos import login as login_module
    from spark_kwire.client.settings.logins import KerberosSettings

    clock = [1_000_000.0]
    monkeypatch.setattr(login_module.time, "time", lambda: clock[0])

    class ThirtySecondCredentials:  # what gss_acquire_cred_from gives: a 30-second ticket
        def __init__(self, name, usage, store):
            self.name, self.lifetime = name, 30

    class FakeGss:
        class NameType:
            kerberos_principal = "krb5"

        Name = staticmethod(lambda principal, kind: principal)
        Credentials = ThirtySecondCredentials

    login = login_module.KerberosLogin(
        KerberosSettings(use_keytab=True, use_ticket_cache=False, principal="svc@EXAMPLE.COM"), FakeGss)
    renewals = []
    for _ in range(4):
        login.credentials(5.0)
        renewals.append(login._refresh_at - clock[0])
        clock[0] = login._refresh_at + 5.5  # the next authentication, some seconds after the renewal time
    assert login.keytab_logins == 4
    assert all(24.0 <= at <= 25.5 for at in renewals), renewals


def test_example_kerberos_settings_file_is_valid():
    """conf/client-kerberos.properties: the keytab line, and the ticket-cache line it offers instead, read as the
    Krb5LoginModule options they are; every name is one the client knows."""
    from harness import REPO_ROOT

    def kerberos_settings(config):
        return config.sasl.kerberos

    lines = (REPO_ROOT / "conf" / "client-kerberos.properties").read_text().splitlines()
    props = dict(line.split("=", 1) for line in lines if line.strip() and not line.startswith("#"))
    cache_line = next(line[1:] for line in lines if line.startswith("#sasl.jaas.config=") and "useTicketCache" in line)
    keytab = kerberos_settings(ClientConfig.from_kafka_options(props))
    assert (keytab.use_keytab, keytab.keytab, keytab.principal, keytab.use_ticket_cache) == \
        (True, "/etc/security/keytabs/etl.keytab", "etl@EXAMPLE.COM", False)
    assert keytab.service_name == "kafka" and ClientConfig.from_kafka_options(props).ignored == ()
    cache = kerberos_settings(ClientConfig.from_kafka_options({**props, "sasl.jaas.config": cache_line.split("=", 1)[1]}))
    assert (cache.use_ticket_cache, cache.ticket_cache, cache.use_keytab) == (True, "/tmp/krb5cc_etl", False)
    renewal = {line[1:].split("=", 1)[0]: line.split("=", 1)[1] for line in lines
               if line.startswith("#sasl.kerberos.")}
    defaults = kerberos_settings(ClientConfig.from_kafka_options({**props, **renewal}))
    assert (defaults.renew_window_factor, defaults.renew_jitter, defaults.min_time_before_relogin_ms) == \
        (keytab.renew_window_factor, keytab.renew_jitter, keytab.min_time_before_relogin_ms)
