"""The staged cluster of the check's tests: one real broker with a listener per failure, an authorizer with ACLs,
an OAuth identity provider and a schema registry with credentials.

Listeners (each listener's settings are prefixed with its name; every one but BADADV advertises what it listens on):

* ``PLAINTEXT``: healthy, its principal (ANONYMOUS) a super user;
* ``BADADV`` (PLAINTEXT): advertises a port nobody listens on (the classic advertised-listeners failure);
* ``SSL``: a certificate for 127.0.0.1 and localhost, valid for a year; ``WRONGHOST``: a certificate for
  ``wrong-host.invalid``; ``EXPIRED``: a certificate that expired yesterday; ``MTLS``: client certificates required;
* ``SASL_SSL``: SCRAM-SHA-512 and PLAIN (users ``alice``, a super user, and ``bob``, who may only describe
  ``ACL_TOPIC``); ``SASLPLAIN`` (SASL_PLAINTEXT): PLAIN only; ``OAUTH`` (SASL_PLAINTEXT): OAUTHBEARER tokens of
  the identity provider.

The authorizer is Kafka's StandardAuthorizer; bob's ACL is given with Kafka's own ``AclCommand``.
"""

from __future__ import annotations

import contextlib
import uuid
from dataclasses import dataclass

from harness import KafkaCluster, Listener, OAuthProvider, free_port, generate_test_certificates, run_java_tool
from harness.schema_registry import SchemaRegistryServer

ALICE, BOB = "alice", "bob"
PASSWORD = "chk-Pa55-" + uuid.uuid4().hex[:10]  # unique: grep-able in rows
BOB_PASSWORD = "chk-B0b-" + uuid.uuid4().hex[:10]
CLIENT_ID, CLIENT_SECRET = "kwire-app", "chk-S3cret-" + uuid.uuid4().hex[:10]
REGISTRY_USER, REGISTRY_PASSWORD = "reader", "chk-Reg-" + uuid.uuid4().hex[:10]
TOPIC, ACL_TOPIC = "orders", "guarded"
CLIENT_PRINCIPAL = "CN=kwire-client,O=spark-kwire tests"
ORDER_SCHEMA = ('{"type": "record", "name": "Order", "namespace": "com.acme", "fields": '
                '[{"name": "id", "type": "long"}]}')


@dataclass
class Staged:
    cluster: KafkaCluster
    certs: object
    idp: OAuthProvider
    registry: SchemaRegistryServer
    dead_port: int

    def bootstrap(self, listener: str) -> str:
        return self.cluster.bootstrap(listener)

    def options(self, listener: str, **extra) -> dict[str, str]:
        """kwire options for ``listener`` with the credentials that work there (``extra`` overrides)."""
        protocol = {l.name: l.security_protocol for l in self.cluster.nodes[1].listeners}[listener]
        opts = {"kafka.bootstrap.servers": self.bootstrap(listener), "kafka.security.protocol": protocol}
        if protocol.endswith("SSL"):
            opts["kafka.ssl.truststore.location"] = str(self.certs.ca_cert)
        if listener == "MTLS":
            opts["kafka.ssl.keystore.location"] = str(self.certs.client_keystore)
        if listener in ("SASL_SSL", "SASLPLAIN"):
            opts["kafka.sasl.mechanism"] = "PLAIN" if listener == "SASLPLAIN" else "SCRAM-SHA-512"
            module = "plain.PlainLoginModule" if listener == "SASLPLAIN" else "scram.ScramLoginModule"
            opts["kafka.sasl.jaas.config"] = (f"org.apache.kafka.common.security.{module} required "
                                              f'username="{ALICE}" password="{PASSWORD}";')
        if listener == "OAUTH":
            opts.update({"kafka.sasl.mechanism": "OAUTHBEARER",
                         "kafka.sasl.oauthbearer.token.endpoint.url": self.idp.token_endpoint,
                         "kafka.sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
                                                   f' required clientId="{CLIENT_ID}" clientSecret="{CLIENT_SECRET}";'})
        opts.update(extra)
        return {k: v for k, v in opts.items() if v is not None}

    def registry_options(self, password: str = REGISTRY_PASSWORD) -> dict[str, str]:
        return {"schema.registry.url": self.registry.url,
                "schema.registry.basic.auth.user.info": f"{REGISTRY_USER}:{password}"}


def _properties(certs, idp: OAuthProvider) -> dict[str, str]:
    props = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
             "super.users": f"User:ANONYMOUS;User:{ALICE};User:{CLIENT_ID};User:{CLIENT_PRINCIPAL}"}

    def tls(listener: str, keystore, client_auth: str | None = None) -> None:
        props[f"listener.name.{listener}.ssl.keystore.type"] = "PEM"
        props[f"listener.name.{listener}.ssl.keystore.location"] = str(keystore)
        props[f"listener.name.{listener}.ssl.truststore.type"] = "PEM"
        props[f"listener.name.{listener}.ssl.truststore.location"] = str(certs.ca_cert)
        if client_auth:
            props[f"listener.name.{listener}.ssl.client.auth"] = client_auth

    tls("ssl", certs.broker_keystore)
    tls("wronghost", certs.wrong_host_keystore)
    tls("expired", certs.expired_keystore)
    tls("mtls", certs.broker_keystore, "required")
    tls("sasl_ssl", certs.broker_keystore)
    plain = (f"org.apache.kafka.common.security.plain.PlainLoginModule required "
             f'user_{ALICE}="{PASSWORD}" user_{BOB}="{BOB_PASSWORD}";')
    props["listener.name.sasl_ssl.sasl.enabled.mechanisms"] = "SCRAM-SHA-512,PLAIN"
    props["listener.name.sasl_ssl.plain.sasl.jaas.config"] = plain
    props["listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config"] = \
        "org.apache.kafka.common.security.scram.ScramLoginModule required;"
    props["listener.name.saslplain.sasl.enabled.mechanisms"] = "PLAIN"
    props["listener.name.saslplain.plain.sasl.jaas.config"] = plain
    props.update(idp.broker_properties("OAUTH"))
    return props


@contextlib.contextmanager
def staged_cluster(folder):
    """The staged cluster (see the module docstring), its topics and ACLs made; stopped on exit."""
    certs = generate_test_certificates(folder / "certs", days=365)
    dead_port = free_port()
    with OAuthProvider({CLIENT_ID: CLIENT_SECRET}) as idp, \
            SchemaRegistryServer(users={REGISTRY_USER: REGISTRY_PASSWORD}) as registry:
        listeners = [Listener("BADADV", "PLAINTEXT", advertised=f"127.0.0.1:{dead_port}"), Listener("SSL", "SSL"),
                     Listener("WRONGHOST", "SSL"), Listener("EXPIRED", "SSL"), Listener("MTLS", "SSL"),
                     Listener("SASL_SSL", "SASL_SSL"), Listener("SASLPLAIN", "SASL_PLAINTEXT"),
                     Listener("OAUTH", "SASL_PLAINTEXT")]
        scram = [("SCRAM-SHA-512", ALICE, PASSWORD), ("SCRAM-SHA-512", BOB, BOB_PASSWORD)]
        cluster = KafkaCluster(1, listeners=listeners, extra_properties=_properties(certs, idp), scram_users=scram,
                               system_properties=idp.broker_system_properties())
        with cluster:
            _topics_and_acls(cluster, registry)
            yield Staged(cluster, certs, idp, registry, dead_port)


def _topics_and_acls(cluster: KafkaCluster, registry: SchemaRegistryServer) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    from spark_kwire.client.registry import RegistryClient, Schema

    bootstrap = cluster.bootstrap("PLAINTEXT")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(TOPIC, 3, 1), NewTopic(ACL_TOPIC, 1, 1)]).values():
        future.result(60)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(3000):
        producer.produce(TOPIC, value=b"x" * 200, key=str(i).encode(), partition=i % 3)
    assert producer.flush(60) == 0
    run_java_tool("org.apache.kafka.tools.AclCommand", "--bootstrap-server", bootstrap, "--add",
                  "--allow-principal", f"User:{BOB}", "--operation", "Describe", "--topic", ACL_TOPIC)
    client = RegistryClient({"url": registry.url, "basic.auth.user.info": f"{REGISTRY_USER}:{REGISTRY_PASSWORD}"})
    client.register(f"{TOPIC}-value", Schema(ORDER_SCHEMA, "AVRO"))
