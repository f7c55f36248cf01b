"""The registry client's options: confluent-kafka's names, clear errors for everything it cannot use (never an
option accepted and ignored), and the subject name strategies."""

from __future__ import annotations

import pickle

import pytest

from spark_kwire.client.registry import (RegistryClient, RegistryConfig, RegistryConfigError, record_name_strategy,
                                         subject_name_strategy, topic_name_strategy, topic_record_name_strategy)
from tests.client.registry.conftest import SECRET_PASSWORD, SECRET_TOKEN


def test_defaults_and_every_documented_key():
    config = RegistryConfig.from_options({
        "url": "https://a.example:8081/, https://b.example:8081/base", "basic.auth.user.info": f"u:{SECRET_PASSWORD}",
        "ssl.ca.location": "/ca.pem", "ssl.key.password": SECRET_PASSWORD, "timeout": "2.5",
        "total.timeout.ms": "9000", "max.retries": 5, "retries.wait.ms": "10", "retries.max.wait.ms": "100",
        "cache.capacity": "50", "cache.latest.ttl.sec": "30"})
    assert config.urls == ("https://a.example:8081", "https://b.example:8081/base")
    assert (config.basic_source, config.timeout_s, config.total_timeout_ms, config.max_retries) == \
        ("USER_INFO", 2.5, 9000, 5)
    assert (config.retries_wait_ms, config.retries_max_wait_ms, config.cache_capacity, config.cache_latest_ttl_s) == \
        (10, 100, 50, 30.0)
    assert config.ssl_options["ssl.ca.location"] == "/ca.pem"
    defaults = RegistryConfig.from_options({"url": "http://r:8081"})
    assert (defaults.timeout_s, defaults.max_retries, defaults.retries_wait_ms, defaults.retries_max_wait_ms,
            defaults.total_timeout_ms, defaults.cache_capacity, defaults.cache_latest_ttl_s) == \
        (10.0, 3, 1000, 20000, 60000, 1000, None)
    for shown in (repr(config), str(config), repr(pickle.loads(pickle.dumps(config)))):
        assert SECRET_PASSWORD not in shown
    assert SECRET_PASSWORD.encode() not in pickle.dumps(config)
    assert pickle.loads(pickle.dumps(config)) == config


@pytest.mark.parametrize("options, key, words", [
    ({"url": "http://r", "bearer.auth.tokn": "x"}, "bearer.auth.tokn", "did you mean 'bearer.auth.token'"),
    ({"url": "http://r", "basic.auth.userinfo": "a:b"}, "basic.auth.userinfo", "did you mean 'basic.auth.user.info'"),
    ({"url": "http://r", "schema.registry.url": "http://r"}, "schema.registry.url", "without the prefix: 'url'"),
    ({"url": "http://r", "proxy": "http://p:3128"}, "proxy", "HTTPS_PROXY"),
    ({"url": "http://r", "auto.register.schemas": "true"}, "auto.register.schemas", "is unknown"),
    ({}, "url", "is required"),
    ({"url": "registry:8081"}, "url", "http:// or https://"),
    ({"url": "http://r:80x"}, "url", "port"),
    ({"url": " , "}, "url", "http:// or https://"),
    ({"url": f"http://u:{SECRET_PASSWORD}@r", "basic.auth.user.info": f"u:{SECRET_PASSWORD}"},
     "basic.auth.user.info", "given twice"),
    ({"url": "http://r", "basic.auth.credentials.source": "URL"}, "url", "user:password@ in every URL"),
    ({"url": "http://r", "basic.auth.credentials.source": "USER_INFO"}, "basic.auth.user.info", "is required"),
    ({"url": "http://r", "basic.auth.credentials.source": "SASL_INHERIT"}, "basic.auth.credentials.source",
     "does not read the Kafka SASL settings"),
    ({"url": "http://r", "basic.auth.user.info": "no-colon"}, "basic.auth.user.info", "user:password"),
    ({"url": "http://r", "bearer.auth.credentials.source": "STATIC_TOKEN"}, "bearer.auth.token", "is required"),
    ({"url": "http://r", "bearer.auth.credentials.source": "CUSTOM"}, "bearer.auth.credentials.source",
     "STATIC_TOKEN, OAUTHBEARER"),
    ({"url": "http://r", "bearer.auth.token": SECRET_TOKEN}, "bearer.auth.token", "bearer.auth.credentials.source"),
    ({"url": "http://r", "bearer.auth.credentials.source": "OAUTHBEARER", "bearer.auth.client.id": "c",
      "bearer.auth.client.secret": SECRET_PASSWORD}, "bearer.auth.issuer.endpoint.url", "is required"),
    ({"url": "http://r", "bearer.auth.credentials.source": "STATIC_TOKEN", "bearer.auth.token": SECRET_TOKEN,
      "bearer.auth.scope": "s"}, "bearer.auth.scope", "not used with"),
    ({"url": "http://r", "bearer.auth.credentials.source": "STATIC_TOKEN", "bearer.auth.token": SECRET_TOKEN,
      "basic.auth.user.info": f"u:{SECRET_PASSWORD}"}, "bearer.auth.credentials.source", "keep one"),
    ({"url": "http://r", "bearer.auth.logical.cluster": "lsrc-1"}, "bearer.auth.logical.cluster",
     "bearer.auth.credentials.source"),
    ({"url": "http://r", "timeout": "soon"}, "timeout", "number"),
    ({"url": "http://r", "max.retries": "-1"}, "max.retries", ">= 0"),
    ({"url": "http://r", "retries.wait.ms": "500", "retries.max.wait.ms": "100"}, "retries.max.wait.ms",
     ">= retries.wait.ms"),
])
def test_bad_options_are_refused_naming_the_key(options, key, words):
    with pytest.raises(RegistryConfigError) as caught:
        RegistryConfig.from_options(options)
    assert caught.value.key == key
    assert words in str(caught.value)
    assert SECRET_PASSWORD not in str(caught.value) and SECRET_TOKEN not in str(caught.value)


def test_credentials_in_the_url_are_kept_out_of_the_shown_urls():
    config = RegistryConfig.from_options(
        {"url": f"http://reader:{SECRET_PASSWORD}@r:8081, http://reader:{SECRET_PASSWORD}@r2:8081"})
    assert config.urls == ("http://r:8081", "http://r2:8081")
    assert config.basic_source == "URL"
    client = RegistryClient(config)
    assert SECRET_PASSWORD not in repr(client) and "reader" in repr(client)


def test_missing_tls_files_are_named_when_the_client_is_built():
    with pytest.raises(RegistryConfigError) as caught:
        RegistryClient({"url": "https://r:8081", "ssl.ca.location": "/no/such/ca.pem"})
    assert caught.value.key == "ssl.ca.location"
    assert "schema registry option" in str(caught.value) and "no such file" in str(caught.value)


def test_subject_name_strategies():
    assert topic_name_strategy("orders", False) == "orders-value"
    assert topic_name_strategy("orders", True, "com.acme.Order") == "orders-key"
    assert record_name_strategy("orders", False, "com.acme.Order") == "com.acme.Order"
    assert topic_record_name_strategy("orders", True, "com.acme.Order") == "orders-com.acme.Order"
    with pytest.raises(ValueError, match="fully-qualified name"):
        record_name_strategy("orders", False, None)
    for name in ("TopicNameStrategy", "io.confluent.kafka.serializers.subject.TopicNameStrategy",
                 "kafkashaded.io.confluent.kafka.serializers.subject.TopicNameStrategy", "topic_subject_name_strategy",
                 "topicnamestrategy"):
        assert subject_name_strategy(name) is topic_name_strategy
    assert subject_name_strategy("io.confluent.kafka.serializers.subject.RecordNameStrategy") is record_name_strategy
    assert subject_name_strategy("topic_record_subject_name_strategy") is topic_record_name_strategy
    with pytest.raises(RegistryConfigError, match="TopicNameStrategy, RecordNameStrategy, TopicRecordNameStrategy"):
        subject_name_strategy("SubjectPerTopicStrategy", key="value.subject.name.strategy")
