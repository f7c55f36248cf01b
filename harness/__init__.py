"""Test and demo harness of spark-kwire: real Apache Kafka brokers, TLS material, a chaos proxy, a fake
broker, an OAuth 2 identity provider, a schema registry, an MIT Kerberos KDC, a Spark standalone cluster. It lives in the repository, not in the wheel:
it needs Java and the jars `make jars` fetched. Import from the repository root (pytest and the Makefile run from there).
"""

from harness.certificates import TestCertificates, generate_test_certificates
from harness.chaos_proxy import ChaosProxy, proxied_kafka_cluster
from harness.kafka_cluster import KafkaCluster, KafkaNode, Listener
from harness.kerberos import KerberosRealm, kerberized_kafka_cluster
from harness.oauth_provider import OAuthProvider
from harness.paths import (REPO_ROOT, KafkaLauncherError, java_command, kafka_lib_dir, run_java_tool,
                           spark_avro_jars, spark_kafka_connector_jars)
from harness.processes import (descendant_pids, die_with_parent, free_port, identify, kill_processes, port_answers,
                               process_start_time, spawner)
from harness.schema_registry import SchemaRegistryServer
from harness.spark_cluster import SparkStandaloneCluster

__all__ = [
    "ChaosProxy", "KafkaCluster", "KafkaLauncherError", "KafkaNode", "KerberosRealm", "Listener", "OAuthProvider",
    "REPO_ROOT", "SchemaRegistryServer", "SparkStandaloneCluster", "kerberized_kafka_cluster",
    "TestCertificates", "descendant_pids", "die_with_parent", "free_port", "generate_test_certificates", "identify",
    "java_command", "kafka_lib_dir", "kill_processes", "port_answers", "process_start_time", "proxied_kafka_cluster",
    "run_java_tool", "spark_avro_jars", "spark_kafka_connector_jars", "spawner",
]
