"""Every Kafka client setting kwire knows, and what it does with each: the one list of names.

* :data:`HONOURED`: read into a typed field (its value :class:`~.values.Kind` here), Kafka's Java client names
  (``ConsumerConfig``, ``ProducerConfig``, ``AdminClientConfig`` of Kafka 4.1), the librdkafka names kwire also
  reads (``ssl.ca.location``, ``sasl.username``...) and kwire's own ``kwire.*`` settings;
* :data:`NO_EFFECT`: Java-client settings that mean nothing to kwire, each with the reason, named once in a warning;
* :data:`REFUSED`: Java-client settings whose effect kwire cannot give, refused with the reason;
* anything else is unknown and refused with the closest known name (:func:`suggest`).

``docs/kafka-client-settings.md`` shows the same table; a test keeps the two equal.
"""

from __future__ import annotations

import difflib

from spark_kwire.client.settings.values import COMPRESSION_TYPES, ISOLATION_LEVELS, SASL_MECHANISMS, \
    SECURITY_PROTOCOLS, Acks, Bool, Choice, Float, Int, Jaas, Kind, SecretText, Servers, Text

__all__ = ["HONOURED", "NO_EFFECT", "REFUSED", "OAUTH_METHODS", "family", "suggest"]

OAUTH_METHODS = ("oidc", "azure", "aws_msk_iam", "default")
_MS, _BYTES = "milliseconds", "bytes"
_LOGIN_MS = Int(0, accepted="a whole number of milliseconds >= 0")

HONOURED: dict[str, Kind] = {
    # connection
    "bootstrap.servers": Servers(),
    "client.id": Text(),
    "client.rack": Text(),
    "security.protocol": Choice(*SECURITY_PROTOCOLS, upper=True),
    "socket.connection.setup.timeout.ms": Int(1, unit=_MS),
    "connections.max.idle.ms": Int(-1, unit=_MS),
    "receive.buffer.bytes": Int(-1, unit=_BYTES),
    "send.buffer.bytes": Int(-1, unit=_BYTES),
    "metadata.max.age.ms": Int(0, unit=_MS),
    # timeouts and retries
    "request.timeout.ms": Int(1, unit=_MS),
    "default.api.timeout.ms": Int(1, unit=_MS),
    "retry.backoff.ms": Int(0, unit=_MS),
    "retry.backoff.max.ms": Int(0, unit=_MS),
    "retries": Int(0),
    "delivery.timeout.ms": Int(1, unit=_MS),
    "transaction.timeout.ms": Int(1, unit=_MS),
    # reads
    "fetch.max.bytes": Int(1, unit=_BYTES),
    "max.partition.fetch.bytes": Int(1, unit=_BYTES),
    "fetch.max.wait.ms": Int(0, unit=_MS),
    "fetch.min.bytes": Int(0, unit=_BYTES),
    "isolation.level": Choice(*ISOLATION_LEVELS),
    "group.id": Text(),
    "kwire.max.decompressed.bytes": Int(1, unit=_BYTES),
    # writes
    "acks": Acks(),
    "compression.type": Choice(*COMPRESSION_TYPES),
    "batch.size": Int(0, unit=_BYTES),
    "linger.ms": Int(0, unit=_MS),
    "enable.idempotence": Bool(),
    "max.in.flight.requests.per.connection": Int(1),
    "max.request.size": Int(1, unit=_BYTES),
    "buffer.memory": Int(0, unit=_BYTES),
    # TLS (librdkafka's names for files and inline PEM too)
    "ssl.endpoint.identification.algorithm": Text(empty_ok=True),
    "enable.ssl.certificate.verification": Bool(),
    "ssl.enabled.protocols": Text(),
    "ssl.protocol": Text(),
    "ssl.cipher.suites": Text(),
    "ssl.truststore.type": Text(),
    "ssl.truststore.location": Text(),
    "ssl.ca.location": Text(),
    "ssl.truststore.certificates": Text(),
    "ssl.ca.pem": Text(),
    "ssl.key.password": SecretText(),
    "ssl.keystore.password": SecretText(),
    "ssl.keystore.type": Text(),
    "ssl.keystore.location": Text(),
    "ssl.certificate.location": Text(),
    "ssl.key.location": Text(),
    "ssl.keystore.certificate.chain": Text(),
    "ssl.certificate.pem": Text(),
    "ssl.keystore.key": SecretText(),
    "ssl.key.pem": SecretText(),
    # SASL
    "sasl.mechanism": Choice(*SASL_MECHANISMS, upper=True),
    "sasl.jaas.config": Jaas(),
    "sasl.username": Text(),
    "sasl.password": SecretText(),
    "sasl.client.callback.handler.class": Text(),
    "sasl.login.callback.handler.class": Text(),
    "sasl.login.connect.timeout.ms": _LOGIN_MS,
    "sasl.login.read.timeout.ms": _LOGIN_MS,
    "sasl.login.retry.backoff.ms": _LOGIN_MS,
    "sasl.login.retry.backoff.max.ms": _LOGIN_MS,
    "sasl.login.refresh.window.factor": Float(0.5, 1.0),
    "sasl.login.refresh.window.jitter": Float(0.0, 0.25),
    "sasl.login.refresh.min.period.seconds": Float(0, 900, integer=True),
    "sasl.login.refresh.buffer.seconds": Float(0, 3600, integer=True),
    "sasl.oauthbearer.token.endpoint.url": Text(),
    "sasl.oauthbearer.client.credentials.client.id": Text(),
    "sasl.oauthbearer.client.credentials.client.secret": SecretText(),
    "sasl.oauthbearer.client.id": Text(),
    "sasl.oauthbearer.client.secret": SecretText(),
    "sasl.oauthbearer.scope": Text(),
    "sasl.oauthbearer.sub.claim.name": Text(),
    "sasl.oauthbearer.header.urlencode": Bool(),
    "sasl.oauthbearer.jwt.retriever.class": Text(),
    "sasl.oauthbearer.method": Choice(*OAUTH_METHODS),
    "sasl.oauthbearer.extensions": Text(),
    "sasl.oauthbearer.config": SecretText(),
    "sasl.kerberos.service.name": Text(required=True),
    "sasl.kerberos.kinit.cmd": Text(required=True),
    "sasl.kerberos.ticket.renew.window.factor": Float(0.5, 1.0),
    "sasl.kerberos.ticket.renew.jitter": Float(0.0, 0.5),
    "sasl.kerberos.min.time.before.relogin": Float(0, 86_400_000, integer=True),
    # kwire's own
    "kwire.aws.region": Text(),
}

_NO_GROUP = "kwire reads assign partitions to Spark tasks themselves and join no consumer group"
_NO_COMMIT = "kwire commits no offsets by itself (a stream commits its progress with the option commitOffsetsToGroup)"
_NO_METRICS = "kwire keeps no Java client metrics"
_JAVA_TLS = "kwire's TLS is Python's ssl module (OpenSSL): there are no Java security providers or key managers"
_VALIDATION = ("it says how tokens are validated, which is the brokers' job: kwire sends the token it gets as it is "
               "and the broker checks it")
_INTERNAL = "an internal setting of the Java consumer"
_REBOOTSTRAP = ("kwire goes back to bootstrap.servers whenever no known broker answers (the Java default, "
                "metadata.recovery.strategy=rebootstrap)")
_SPREAD = ("kwire spreads rows without a key over the partitions in turn; rows with a key go to murmur2(key), as "
           "in Java")

NO_EFFECT: dict[str, str] = {
    "allow.auto.create.topics": "kwire's reads never create a topic (its writes ask the broker to, as Java's producer)",
    "auto.commit.interval.ms": _NO_COMMIT,
    "auto.offset.reset": "where a read starts is the source option startingOffsets (earliest or latest)",
    "check.crcs": "kwire always checks the CRC of the record batches it reads",
    "client.dns.lookup": "kwire tries every address a host name resolves to, in order (the Java default, "
                         "use_all_dns_ips)",
    "compression.gzip.level": "kwire compresses gzip at level 6, lz4 and zstd at their libraries' default levels",
    "compression.lz4.level": "kwire compresses gzip at level 6, lz4 and zstd at their libraries' default levels",
    "compression.zstd.level": "kwire compresses gzip at level 6, lz4 and zstd at their libraries' default levels",
    "enable.auto.commit": _NO_COMMIT,
    "enable.metrics.push": "kwire sends no client metrics to the brokers (KIP-714)",
    "exclude.internal.topics": "subscribePattern never matches internal topics (the Java default); name one with "
                               "subscribe or assign to read it",
    "group.instance.id": _NO_GROUP,
    "group.protocol": _NO_GROUP,
    "group.remote.assignor": _NO_GROUP,
    "heartbeat.interval.ms": _NO_GROUP,
    "interceptor.classes": "kwire cannot run Java interceptors",
    "internal.leave.group.on.close": _INTERNAL,
    "internal.throw.on.fetch.stable.offset.unsupported": _INTERNAL,
    "key.deserializer": "kwire reads keys as bytes (or decodes them with the option keyFormat)",
    "key.serializer": "kwire writes the key column as bytes (or encodes it with the option keyFormat)",
    "max.block.ms": "kwire's producer never blocks an append: when buffer.memory fills up it sends what is queued",
    "max.poll.interval.ms": _NO_GROUP,
    "max.poll.records": "kwire has no poll loop: it turns whole fetch responses into Arrow batches (fetch.max.bytes "
                        "and max.partition.fetch.bytes bound a fetch)",
    "metadata.max.idle.ms": "kwire keeps the metadata it asked for until metadata.max.age.ms",
    "metadata.recovery.rebootstrap.trigger.ms": _REBOOTSTRAP,
    "metadata.recovery.strategy": _REBOOTSTRAP,
    "metric.reporters": _NO_METRICS,
    "metrics.num.samples": _NO_METRICS,
    "metrics.recording.level": _NO_METRICS,
    "metrics.sample.window.ms": _NO_METRICS,
    "partition.assignment.strategy": _NO_GROUP,
    "partitioner.adaptive.partitioning.enable": _SPREAD,
    "partitioner.availability.timeout.ms": _SPREAD,
    "partitioner.class": "kwire partitions as the Java client's default partitioner does (murmur2 of the key)",
    "reconnect.backoff.max.ms": "kwire connects again after retry.backoff.ms, growing to retry.backoff.max.ms",
    "reconnect.backoff.ms": "kwire connects again after retry.backoff.ms, growing to retry.backoff.max.ms",
    "sasl.oauthbearer.clock.skew.seconds": _VALIDATION,
    "sasl.oauthbearer.expected.audience": _VALIDATION,
    "sasl.oauthbearer.expected.issuer": _VALIDATION,
    "sasl.oauthbearer.jwks.endpoint.refresh.ms": _VALIDATION,
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms": _VALIDATION,
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms": _VALIDATION,
    "sasl.oauthbearer.jwks.endpoint.url": _VALIDATION,
    "sasl.oauthbearer.jwt.validator.class": _VALIDATION,
    "sasl.oauthbearer.scope.claim.name": _VALIDATION,
    "security.providers": _JAVA_TLS,
    "session.timeout.ms": _NO_GROUP,
    "share.acknowledgement.mode": "kwire does not read through share groups (KIP-932)",
    "socket.connection.setup.timeout.max.ms": "kwire bounds every connection attempt by "
                                              "socket.connection.setup.timeout.ms, without growing it",
    "ssl.keymanager.algorithm": _JAVA_TLS,
    "ssl.provider": _JAVA_TLS,
    "ssl.secure.random.implementation": _JAVA_TLS,
    "ssl.trustmanager.algorithm": _JAVA_TLS,
    "ssl.truststore.password": "kwire reads PEM trust stores, which have no password",
    "transactional.id": "kwire names the transactions of an exactly-once write itself (transactionalIdPrefix)",
    "value.deserializer": "kwire reads values as bytes (or decodes them with the option valueFormat)",
    "value.serializer": "kwire writes the value column as bytes (or encodes it with the option valueFormat)",
}

_JWT_BEARER = ("the JWT-bearer grant (sasl.oauthbearer.assertion.*) is not supported by spark-kwire; use client "
               "credentials or a Python token provider")

REFUSED: dict[str, str] = {
    "bootstrap.controllers": "kwire talks to brokers (bootstrap.servers), not to KRaft controllers",
    "partitioner.ignore.keys": "kwire always partitions rows with a key by their key; give the rows a 'partition' "
                               "column to choose partitions yourself",
    "sasl.login.class": "kwire cannot run Java login classes: the login comes from sasl.mechanism and "
                        "sasl.jaas.config (or a Python token provider in sasl.login.callback.handler.class)",
    "ssl.engine.factory.class": "kwire cannot run Java classes: its TLS (OpenSSL) is configured by the ssl.* settings",
    "transaction.two.phase.commit.enable": "kwire does not take part in two-phase commits (KIP-939); its "
                                           "exactly-once writes commit their own transactions",
    **{f"sasl.oauthbearer.assertion.{name}": _JWT_BEARER for name in (
        "algorithm", "claim.aud", "claim.exp.seconds", "claim.iss", "claim.jti.include", "claim.nbf.seconds",
        "claim.sub", "file", "private.key.file", "private.key.passphrase", "template.file")},
}

assert not (set(HONOURED) & set(NO_EFFECT) or set(HONOURED) & set(REFUSED) or set(NO_EFFECT) & set(REFUSED))

_FAMILIES = (("sasl.kerberos.", "Kerberos"), ("sasl.oauthbearer.", "OAUTHBEARER"), ("sasl.login.", "SASL login"),
             ("sasl.", "SASL"), ("ssl.", "TLS"), ("kwire.", "kwire"))
_KNOWN = sorted(set(HONOURED) | set(NO_EFFECT) | set(REFUSED))


def family(name: str) -> str | None:
    """What a setting is about, by its prefix (``Kerberos`` for ``sasl.kerberos.*``...), for messages."""
    return next((label for prefix, label in _FAMILIES if name.startswith(prefix)), None)


def suggest(name: str) -> str | None:
    """The known setting closest to a mistyped ``name``, if one is close enough."""
    match = difflib.get_close_matches(name.lower(), _KNOWN, n=1, cutoff=0.75)
    return match[0] if match else None
