"""The check's parts that need no broker: certificates read from DER (against the cryptography package), Java
properties files (against java.util.Properties itself), the options, the report, the scrubbing of secrets, and the
time bounds (servers that accept and never answer, a resolver that never answers, a run's budget)."""

from __future__ import annotations

import datetime as dt
import ipaddress
import socket
import subprocess
import threading
import time

import pytest

from spark_kwire.client.check import (FAIL, SKIPPED, CheckOptionError, check_connection, parse_check_options,
                                      properties_as_options, read_properties)
from spark_kwire.client.check.connection import network
from spark_kwire.client.check.connection.x509 import names_host, pem_certificates, read_certificate
from spark_kwire.client.check.context import CheckRun
from spark_kwire.client.errors import ConfigError
from harness import generate_test_certificates


# -- certificates ---------------------------------------------------------------------------------------------------

def _certificate(subject_cn: str, sans: list | None, *, days: int = 10, start_days: int = 0, extra_rdns=()):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([*extra_rdns, x509.NameAttribute(NameOID.COMMON_NAME, subject_cn)])
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0) + dt.timedelta(days=start_days)
    builder = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(now)
               .not_valid_after(now + dt.timedelta(days=days)))
    if sans is not None:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    cert = builder.sign(key, hashes.SHA256())
    return cert, cert.public_bytes(serialization.Encoding.DER)


def test_certificates_read_as_the_cryptography_package_reads_them(tmp_path):
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    certs = generate_test_certificates(tmp_path)
    ders = [d for path in (certs.broker_keystore, certs.wrong_host_keystore, certs.expired_keystore, certs.ca_cert,
                           certs.client_cert) for d in pem_certificates(path.read_text())]
    ders.append(_certificate("ünïcode.example", [x509.DNSName("*.example.com"),
                                                 x509.IPAddress(ipaddress.ip_address("2001:db8::1"))],
                             extra_rdns=[x509.NameAttribute(NameOID.COUNTRY_NAME, "DE"),
                                         x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "a,b")])[1])
    ders.append(_certificate("no-san.example", None, days=400)[1])
    assert len(ders) == 10
    for der in ders:
        theirs = x509.load_der_x509_certificate(der)
        ours = read_certificate(der)
        assert ours.not_before == theirs.not_valid_before_utc and ours.not_after == theirs.not_valid_after_utc
        try:
            san = theirs.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
            dns, ips = san.get_values_for_type(x509.DNSName), [str(i) for i in san.get_values_for_type(x509.IPAddress)]
        except x509.ExtensionNotFound:
            dns, ips = [], []
        assert list(ours.dns_names) == dns and list(ours.ip_addresses) == ips
        # the attributes in RFC 4514 order, values unescaped (kwire shows them as they are)
        wanted = [f"{a.rfc4514_attribute_name}={a.value}" for rdn in reversed(theirs.subject.rdns) for a in rdn]
        assert ours.subject == ",".join(wanted)


@pytest.mark.parametrize("sans, host, expected", [
    (["localhost", "127.0.0.1"], "localhost", True),
    (["localhost", "127.0.0.1"], "127.0.0.1", True),
    (["localhost"], "127.0.0.1", False),
    (["*.example.com"], "b1.example.com", True),
    (["*.example.com"], "example.com", False),
    (["*.example.com"], "a.b1.example.com", False),
    (["2001:db8::1"], "2001:db8:0::1", True),
    (["2001:db8::1"], "[2001:db8::1]", True),
    (["B1.Example.COM"], "b1.example.com", True),
])
def test_host_names_match_as_tls_clients_match_them(sans, host, expected):
    from cryptography import x509

    names = [x509.IPAddress(ipaddress.ip_address(s)) if s[0].isdigit() else x509.DNSName(s) for s in sans]
    assert names_host(read_certificate(_certificate("c", names)[1]), host) is expected


def test_the_common_name_counts_only_without_a_subject_alt_name():
    from cryptography import x509

    assert names_host(read_certificate(_certificate("b1.example.com", None)[1]), "b1.example.com")
    with_san = read_certificate(_certificate("b1.example.com", [x509.DNSName("other.example.com")])[1])
    assert not names_host(with_san, "b1.example.com")


# -- properties files -------------------------------------------------------------------------------------------------

JAVA_READER = """
import java.io.*;
import java.util.*;

public class ReadProperties {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        try (Reader r = new InputStreamReader(new FileInputStream(args[0]), "UTF-8")) { p.load(r); }
        for (String k : new TreeSet<>(p.stringPropertyNames()))
            System.out.println(hex(k) + " " + hex(p.getProperty(k)));
    }
    static String hex(String s) {
        StringBuilder b = new StringBuilder("x");
        for (byte x : s.getBytes(java.nio.charset.StandardCharsets.UTF_8)) b.append(String.format("%02x", x));
        return b.toString();
    }
}
"""

PROPERTIES = r"""# spark-kwire client settings
! another comment
bootstrap.servers = broker1:9093,broker2:9093
security.protocol:SASL_SSL
sasl.mechanism SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
    username="alice" \
    password="p\\a=ss:w#rd";
   indented.key=  value with trailing spaces   
key\ with\ spaces=v
key\=with\:separators=x\ty\u00e9
empty=
ssl.truststore.location=C:\\certs\\ca.pem
odd.continuation=a\\\
b
last.line.continues=end\
"""


def test_properties_files_read_as_java_reads_them(tmp_path):
    path = tmp_path / "client.properties"
    path.write_text(PROPERTIES, encoding="utf-8")
    (tmp_path / "ReadProperties.java").write_text(JAVA_READER)
    out = subprocess.run(["java", str(tmp_path / "ReadProperties.java"), str(path)], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    java = {}
    for line in out.splitlines():
        key, value = line.split(" ")
        java[bytes.fromhex(key[1:]).decode()] = bytes.fromhex(value[1:]).decode()
    ours = read_properties(str(path))
    assert ours == java
    assert len(java) == 11 and java["sasl.jaas.config"].endswith('password="p\\a=ss:w#rd";')


def test_properties_become_a_checks_options():
    options = properties_as_options({"bootstrap.servers": "b:9092", "kafka.client.id": "x",
                                     "schema.registry.url": "http://r:8081", "subscribe": "t"})
    assert options == {"kafka.bootstrap.servers": "b:9092", "kafka.client.id": "x",
                       "schema.registry.url": "http://r:8081", "subscribe": "t"}


# -- options ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("options, says", [
    ({"kafka.bootstrap.servers": "b:9092", "subscibe": "t"}, "Did you mean 'subscribe'?"),
    ({"kafka.bootstrap.servers": "b:9092", "bootstrap.servers": "b:9092"}, "Did you mean 'kafka.bootstrap.servers'?"),
    ({"kafka.bootstrap.server": "b:9092"}, "Did you mean 'kafka.bootstrap.servers'?"),
    ({"subscribe": "t"}, "'kafka.bootstrap.servers' is required"),
    ({"kafka.bootstrap.servers": "b:9092", "checkThroughput": "yes"}, "'checkThroughput' must be 'true' or 'false'"),
    ({"kafka.bootstrap.servers": "b:9092", "checkTimeoutMs": "0"}, "'checkTimeoutMs' must be a whole number"),
    ({"kafka.bootstrap.servers": "b:9092", "assign": "orders"}, "JSON object of topics and partitions"),
    ({"kafka.bootstrap.servers": "b:9092", "subscribePattern": "("}, "not a regular expression"),
    ({"kafka.bootstrap.servers": "b:9092", "schema.registry.urll": "http://r"}, "did you mean 'url'?"),
])
def test_wrong_options_are_refused_naming_them(options, says):
    with pytest.raises(ConfigError) as refused:
        parse_check_options(options)
    assert says in str(refused.value)


def test_spark_spells_option_names_in_lower_case():
    settings = parse_check_options({"kafka.bootstrap.servers": "b:9092", "subscribepattern": "o.*",
                                    "checkthroughput": "TRUE", "checksteptimeoutms": "1500"})
    assert settings.topics.pattern == "o.*" and settings.throughput and settings.step_timeout_ms == 1500


def test_secrets_are_scrubbed_from_whatever_a_row_says():
    settings = parse_check_options({
        "kafka.bootstrap.servers": "b:9092", "kafka.security.protocol": "SASL_SSL", "kafka.sasl.mechanism": "PLAIN",
        "kafka.sasl.jaas.config": 'x required username="u" password="pw-one-1";',
        "schema.registry.url": "http://r:8081", "schema.registry.basic.auth.user.info": "reader:pw-two-2"})
    run = CheckRun(settings, host="h", executor="e")
    row = run.fail("connect", "bootstrap pw-one-1", "a message quoting pw-one-1 and reader:pw-two-2", "tcp_refused")
    assert "pw-one-1" not in row.target + row.detail and "pw-two-2" not in row.detail and "***" in row.detail


def test_a_warning_or_failure_without_a_known_kind_is_a_bug():
    run = CheckRun(parse_check_options({"kafka.bootstrap.servers": "b:9092"}), host="h", executor="e")
    with pytest.raises(ValueError):
        run.add("connect", "t", FAIL, "no kind")
    with pytest.raises(KeyError):
        run.fail("connect", "t", "unknown kind", "no_such_kind")


# -- bounded in time --------------------------------------------------------------------------------------------------

@pytest.fixture
def silent_server():
    """A TCP server that accepts connections and never answers (a hung broker, a proxy holding connections)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held = []

    def accept():
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    yield server.getsockname()[1]
    server.close()
    for conn in held:
        conn.close()


@pytest.mark.parametrize("protocol", ["PLAINTEXT", "SSL", "SASL_SSL"])
def test_a_broker_that_never_answers_does_not_hang_the_run(silent_server, protocol):
    options = {"kafka.bootstrap.servers": f"127.0.0.1:{silent_server}", "kafka.security.protocol": protocol,
               "checkStepTimeoutMs": "700"}
    if protocol == "SASL_SSL":
        options.update({"kafka.sasl.mechanism": "PLAIN", "kafka.sasl.jaas.config": 'x required username="u" '
                                                                                   'password="p";'})
    started = time.monotonic()
    report = check_connection(options)
    took = time.monotonic() - started
    failed = report.where(outcome=FAIL)
    assert len(failed) == 1 and failed[0].step == ("api_versions" if protocol == "PLAINTEXT" else "tls_handshake")
    assert took < 3.0 and report.total_ms < 3000, report.text()


def test_the_run_budget_ends_the_run_and_says_so(silent_server):
    servers = ",".join(f"127.0.0.1:{silent_server}" for _ in range(6))
    started = time.monotonic()
    report = check_connection({"kafka.bootstrap.servers": servers.replace("127.0.0.1", "localhost", 3),
                               "checkStepTimeoutMs": "600", "checkTimeoutMs": "2000", "subscribe": "t"})
    took = time.monotonic() - started
    assert took < 3.0, report.text()
    out_of_time = [r for r in report.rows if r.outcome == SKIPPED and "time budget" in r.detail]
    assert out_of_time and "checkTimeoutMs" in out_of_time[0].detail


def test_a_resolver_that_never_answers_is_given_up(monkeypatch):
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: time.sleep(10))
    started = time.monotonic()
    with pytest.raises(network.NetworkError) as raised:
        network.resolve("kafka.example.com", 9092, 0.3)
    assert raised.value.kind == "dns_timeout" and time.monotonic() - started < 1.0


def test_a_name_that_does_not_resolve():
    report = check_connection({"kafka.bootstrap.servers": "no-such-broker.invalid:9092"})
    row = report.where(step="resolve", outcome=FAIL)[0]
    assert "no-such-broker.invalid" in row.detail and "kafka.bootstrap.servers" in row.fix
    assert "resolve failed" in report.where(step="connect", outcome=SKIPPED)[0].detail


def test_settings_travel_pickled_without_their_secrets_in_clear():
    import pickle

    settings = parse_check_options({
        "kafka.bootstrap.servers": "b:9092", "kafka.security.protocol": "SASL_SSL", "kafka.sasl.mechanism": "PLAIN",
        "kafka.sasl.jaas.config": 'x required username="u" password="pw-pickled-1";', "subscribe": "t",
        "schema.registry.url": "http://r:8081", "schema.registry.basic.auth.user.info": "reader:pw-pickled-2"})
    data = pickle.dumps(settings)
    assert b"pw-pickled" not in data
    assert pickle.loads(data) == settings


def test_a_token_provider_that_never_returns_is_given_up(silent_server, tmp_path, monkeypatch):
    (tmp_path / "slow_tokens.py").write_text("import time\n\ndef token():\n    time.sleep(30)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    started = time.monotonic()
    report = check_connection({
        "kafka.bootstrap.servers": f"127.0.0.1:{silent_server}", "kafka.security.protocol": "SASL_PLAINTEXT",
        "kafka.sasl.mechanism": "OAUTHBEARER", "kafka.sasl.login.callback.handler.class": "slow_tokens:token",
        "checkStepTimeoutMs": "500"})
    assert time.monotonic() - started < 3.0, report.text()
    row = report.where(step="sasl_login", outcome=FAIL)[0]
    assert "did not finish within 0.5 s" in row.detail and "slow_tokens:token" in row.detail


def test_settings_that_have_no_effect_are_a_warning():
    report = check_connection({"kafka.bootstrap.servers": "127.0.0.1:1", "kafka.auto.offset.reset": "earliest"})
    row = report.where(step="settings")[0]
    assert row.outcome == "warn" and "kafka.auto.offset.reset (where a read starts is the source option" in row.detail
    assert row.fix.startswith("Remove the settings named")
