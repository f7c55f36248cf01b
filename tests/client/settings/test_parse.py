"""The settings read from the options, without a broker: typed parts, the login of each mechanism (the tagged union),
every name accounted for (honoured, no effect, refused, unknown with the closest name), secrets kept out of sight."""

from __future__ import annotations

import logging
import pickle

import pytest

from spark_kwire.client import ClientConfig, ConfigError
from spark_kwire.client.settings.logins import AwsMskIam, AzureEntra, DelegationTokenLogin, GssapiLogin, \
    OAuthBearerLogin, OidcClientCredentials, OidcTokenFile, PlainLogin, PythonTokenProvider, ScramLogin, \
    UnsecuredToken
from spark_kwire.client.settings.parse import RefusedSettingError, UnknownSettingError, parse_options
from spark_kwire.client.settings.secret import Secret

SECRET = "s3cr3t-Pa55"
BASE = {"bootstrap.servers": "h:1"}
SASL = {**BASE, "security.protocol": "SASL_SSL"}


def _jaas(module: str, **options: str) -> str:
    return f"{module} required " + " ".join(f'{k}="{v}"' for k, v in options.items()) + ";"


SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
KRB5_MODULE = "com.sun.security.auth.module.Krb5LoginModule"


def _config(**options) -> ClientConfig:
    return ClientConfig.from_kafka_options({**SASL, **{k.replace("_", "."): v for k, v in options.items()}})


def test_the_parts_are_typed_and_client_rack_is_a_field():
    c = ClientConfig.from_kafka_options({**BASE, "client.rack": "use1-az1", "fetch.max.wait.ms": "250",
                                         "linger.ms": 5, "acks": "1", "enable.idempotence": "false"})
    assert c.client_rack == "use1-az1" and c.fetch_max_wait_ms == 250 and c.linger_ms == 5 and c.acks == 1
    assert ClientConfig.from_kafka_options(BASE).client_rack is None
    assert c.sasl is None and c.tls.check_hostname and c.tls.verify_certificates  # PLAINTEXT: no login


@pytest.mark.parametrize("options, login_type, check", [
    ({"sasl.mechanism": "PLAIN", "sasl.jaas.config": _jaas("x.PlainLoginModule", username="u", password=SECRET)},
     PlainLogin, lambda login: login.username == "u" and login.password.reveal() == SECRET),
    ({"sasl.mechanism": "SCRAM-SHA-256", "sasl.username": "u", "sasl.password": SECRET},
     ScramLogin, lambda login: (login.mechanism, login.source, login.password.reveal()) ==
     ("SCRAM-SHA-256", "sasl.username", SECRET)),
    ({"sasl.mechanism": "SCRAM-SHA-512",
      "sasl.jaas.config": _jaas(SCRAM_MODULE, username="tok-1", password=SECRET, tokenauth="true")},
     DelegationTokenLogin, lambda login: login.username == "tok-1" and login.password.reveal() == SECRET),
    ({"sasl.mechanism": "OAUTHBEARER", "sasl.oauthbearer.token.endpoint.url": "https://idp/token",
      "sasl.jaas.config": _jaas(OAUTH_MODULE, clientId="app", clientSecret=SECRET, scope="kafka",
                                extension_logicalCluster="lkc-1"),
      "sasl.login.read.timeout.ms": "5000", "sasl.login.refresh.buffer.seconds": "100"},
     OAuthBearerLogin, lambda login: isinstance(login.token_source, OidcClientCredentials)
     and (login.token_source.client_id, login.token_source.scope, login.token_source.attempt_timeout_ms) ==
     ("app", "kafka", 5000) and login.token_source.tls is not None and login.refresh.buffer_s == 100
     and login.extensions == (("logicalCluster", "lkc-1"),)),
    ({"sasl.mechanism": "OAUTHBEARER", "sasl.oauthbearer.token.endpoint.url": "file:/var/run/token"},
     OAuthBearerLogin, lambda login: login.token_source == OidcTokenFile("file:/var/run/token", "/var/run/token")),
    ({"sasl.mechanism": "OAUTHBEARER", "sasl.login.callback.handler.class": "mytokens:fetch",
      "sasl.oauthbearer.config": SECRET},
     OAuthBearerLogin, lambda login: login.token_source == PythonTokenProvider("mytokens:fetch",
                                                                                config=Secret(SECRET))),
    ({"sasl.mechanism": "AWS_MSK_IAM", "kwire.aws.region": "eu-west-1",
      "sasl.jaas.config": _jaas("software.amazon.msk.auth.iam.IAMLoginModule", awsRoleArn="arn:aws:iam::1:role/r")},
     OAuthBearerLogin, lambda login: login.label == "AWS_MSK_IAM" and login.token_source ==
     AwsMskIam("eu-west-1", ("h",), role_arn="arn:aws:iam::1:role/r")),
    ({"sasl.mechanism": "OAUTHBEARER", "sasl.oauthbearer.method": "azure"},
     OAuthBearerLogin, lambda login: login.token_source == AzureEntra(None, ("h",))),
    ({"sasl.mechanism": "OAUTHBEARER", "sasl.jaas.config": _jaas(OAUTH_MODULE, unsecuredLoginStringClaim_sub="dev")},
     OAuthBearerLogin, lambda login: login.token_source == UnsecuredToken((("sub", "dev"),))),
    ({"sasl.jaas.config": _jaas(KRB5_MODULE, useKeyTab="true", keyTab="/k.keytab", principal="etl@R"),
      "sasl.kerberos.service.name": "kafka2"},
     GssapiLogin, lambda login: (login.kerberos.keytab, login.kerberos.principal, login.kerberos.service_name) ==
     ("/k.keytab", "etl@R", "kafka2")),
    ({}, GssapiLogin, lambda login: login.kerberos.use_ticket_cache),  # Kafka's default mechanism, the ticket cache
])
def test_each_mechanism_gets_its_own_login(options, login_type, check):
    config = ClientConfig.from_kafka_options({**SASL, **options})
    assert type(config.sasl) is login_type and check(config.sasl), config.sasl
    back = pickle.loads(pickle.dumps(config))
    assert back == config and back.fingerprint == config.fingerprint
    for text in (repr(config), str(config), repr(config.sasl), str(pickle.dumps(config))):
        assert SECRET not in text


def test_the_jaas_line_is_parsed_once_where_options_are_read(monkeypatch):
    from spark_kwire.client.settings import jaas, values

    calls = []
    original = jaas.parse_jaas_config
    monkeypatch.setattr(values, "parse_jaas_config", lambda text: calls.append(1) or original(text))
    config = _config(sasl_mechanism="SCRAM-SHA-512", sasl_jaas_config=_jaas(SCRAM_MODULE, username="u",
                                                                            password=SECRET))
    from spark_kwire.client.auth.security import security_hooks

    pickle.loads(pickle.dumps(security_hooks(config)))  # the hooks (and a task's copy of them) read no option
    assert calls == [1]


def test_settings_with_no_effect_are_named_once_in_a_warning(caplog):
    with caplog.at_level(logging.WARNING):
        config = ClientConfig.from_kafka_options({**BASE, "max.poll.records": "10", "heartbeat.interval.ms": "3",
                                                  "auto.commit.interval.ms": "5"})
    assert config.ignored == ("auto.commit.interval.ms", "heartbeat.interval.ms", "max.poll.records")
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings
    for name in config.ignored:
        assert warnings[0].count(f"'{name}'") == 1
    assert "no poll loop" in warnings[0] and "join no consumer group" in warnings[0]
    assert ClientConfig.from_kafka_options({**BASE, "max.poll.records": "1"}) == ClientConfig.from_kafka_options(BASE)


@pytest.mark.parametrize("name, closest", [
    ("bootstrap.server", "bootstrap.servers"), ("sasl.mechanisms", "sasl.mechanism"),
    ("ssl.truststore.locaton", "ssl.truststore.location"), ("kwire.max.decompresed.bytes", "kwire.max.decompressed.bytes"),
    ("totally.made.up", None),
])
def test_unknown_settings_are_refused_with_the_closest_name(name, closest):
    with pytest.raises(UnknownSettingError) as info:
        ClientConfig.from_kafka_options({**BASE, name: SECRET})
    text = str(info.value)
    assert f"Unknown Kafka option '{name}'" in text and SECRET not in text and info.value.key == name
    assert info.value.suggestion == closest
    assert (f"Did you mean '{closest}'?" in text) if closest else "Did you mean" not in text
    assert str(pickle.loads(pickle.dumps(info.value))) == text
    with pytest.raises(UnknownSettingError, match=f"Unknown Kafka option 'kafka.{name}'"):
        parse_options({name: "x"}, prefix="kafka.")


@pytest.mark.parametrize("name, reason", [
    ("bootstrap.controllers", "not to KRaft controllers"),
    ("sasl.oauthbearer.assertion.private.key.passphrase", "JWT-bearer grant"),
    ("ssl.engine.factory.class", "cannot run Java classes"),
])
def test_settings_kwire_cannot_honour_are_refused_with_the_reason(name, reason):
    with pytest.raises(RefusedSettingError, match=reason) as info:
        ClientConfig.from_kafka_options({**BASE, name: SECRET})
    assert f"'{name}' is not supported" in str(info.value) and SECRET not in str(info.value)


@pytest.mark.parametrize("options, match", [
    ({"sasl.login.refresh.window.factor": "2"}, r"'sasl.login.refresh.window.factor'.*between 0.5 and 1.0"),
    ({"transaction.timeout.ms": "soon"}, r"'transaction.timeout.ms'.*positive number of milliseconds"),
    ({"ssl.enabled.protocols": "SSLv3"}, r"'ssl.enabled.protocols'.*TLSv1.2, TLSv1.3"),
    ({"ssl.certificate.location": "/c.pem"}, r"ssl.key.location must be set too"),
    ({"sasl.mechanism": "PLAIN"}, r"needs credentials"),
    ({"sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": f"{SCRAM_MODULE} required password=\"{SECRET}\";"},
     r"no username="),
    ({"sasl.mechanism": "OAUTHBEARER", "sasl.login.callback.handler.class": "com.example.Handler"},
     "cannot run Java classes"),
    ({"sasl.mechanism": "AWS_MSK_IAM", "sasl.jaas.config": _jaas("software.amazon.msk.auth.iam.IAMLoginModule",
                                                                 awsProfileName="p", awsRoleArn="r")},
     "either awsProfileName or awsRoleArn"),
    ({"sasl.jaas.config": f"{KRB5_MODULE} required useKeyTab=true keyTab=\"/k\" password=\"{SECRET}\";"},
     "password logins"),
    ({"sasl.jaas.config": "not a jaas line = ;"}, "login-module class"),
])
def test_mistakes_are_refused_when_the_settings_are_built_and_show_no_secret(options, match):
    with pytest.raises(ConfigError, match=match) as info:
        ClientConfig.from_kafka_options({**SASL, **options})
    assert SECRET not in str(info.value) and SECRET not in str(pickle.loads(pickle.dumps(info.value)))


def test_equal_settings_share_a_fingerprint_and_different_secrets_do_not():
    a = _config(sasl_mechanism="PLAIN", sasl_username="u", sasl_password="one")
    b = _config(sasl_mechanism="PLAIN", sasl_username="u", sasl_password="one")
    c = _config(sasl_mechanism="PLAIN", sasl_username="u", sasl_password="two")
    assert a == b and a.fingerprint == b.fingerprint and a.fingerprint != c.fingerprint
    assert "one" not in a.fingerprint and len(a.fingerprint) == 64
    assert a.replace(client_id="other").fingerprint != a.fingerprint


# spark_kwire.admin, with pyspark made unimportable: the settings that go together are checked without Spark.
_ADMIN_WITHOUT_SPARK = """
import sys
sys.modules["pyspark"] = None  # any import of pyspark fails
from spark_kwire import admin
for cluster in {clusters!r}:
    try:
        admin.list_topics(cluster)
    except Exception as error:
        print(type(error).__name__ + ": " + str(error))
    else:
        print("accepted")
"""


def test_admin_refuses_settings_that_contradict_each_other_without_spark():
    import subprocess
    import sys

    clusters = [
        {"bootstrap.servers": "127.0.0.1:1", "sasl.mechanism": "PLAIN", "sasl.username": "u", "sasl.password": SECRET},
        {"kafka.bootstrap.servers": "127.0.0.1:1", "kafka.sasl.jaas.config": _jaas(SCRAM_MODULE, username="u",
                                                                                     password=SECRET)},
        {"bootstrap.servers": "127.0.0.1:1", "security.protocol": "SSL", "sasl.mechanism": "PLAIN"},
        {"bootstrap.servers": "127.0.0.1:1", "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
         "sasl.username": "u", "sasl.password": SECRET, "sasl.kerberos.service.name": "kafka"},
    ]
    run = subprocess.run([sys.executable, "-c", _ADMIN_WITHOUT_SPARK.format(clusters=clusters)], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    assert lines == [
        "ConflictingSettingsError: Option 'sasl.mechanism' configures SASL authentication, but 'security.protocol' "
        "is PLAINTEXT (the default), which does not use SASL: set security.protocol to SASL_SSL (SASL over TLS) or "
        "SASL_PLAINTEXT, as the brokers' listener expects, or remove the sasl.* options.",
        "ConflictingSettingsError: Option 'sasl.jaas.config' configures SASL authentication, but "
        "'security.protocol' is PLAINTEXT (the default), which does not use SASL: set security.protocol to SASL_SSL "
        "(SASL over TLS) or SASL_PLAINTEXT, as the brokers' listener expects, or remove the sasl.* options.",
        "ConflictingSettingsError: Option 'sasl.mechanism' configures SASL authentication, but 'security.protocol' "
        "is SSL, which does not use SASL: set security.protocol to SASL_SSL (SASL over TLS) or SASL_PLAINTEXT, as "
        "the brokers' listener expects, or remove the sasl.* options.",
        "ConflictingSettingsError: Option 'sasl.kerberos.service.name' applies to Kerberos (sasl.mechanism=GSSAPI), "
        "but sasl.mechanism is PLAIN: remove it, or set sasl.mechanism=GSSAPI.",
    ], run.stdout
    assert SECRET not in run.stdout


def test_every_scalar_field_of_the_config_is_one_setting():
    """FIELDS is derived from the setting names: a field no setting spells (or a setting renamed) shows here."""
    import dataclasses

    from spark_kwire.client.settings.config import FIELDS, ConnectionSettings, FetchSettings, ProduceSettings, \
        RetrySettings

    scalar = {f.name for part in (ConnectionSettings, RetrySettings, FetchSettings, ProduceSettings)
              for f in dataclasses.fields(part)}
    assert set(FIELDS.values()) == scalar and len(FIELDS) == len(scalar)
    assert FIELDS["kwire.max.decompressed.bytes"] == "max_decompressed_bytes"
    assert FIELDS["max.in.flight.requests.per.connection"] == "max_in_flight_requests_per_connection"
