"""Every setting Kafka's Java clients accept has a status in kwire (honoured, no effect, refused), read from the
kafka-clients jar itself: a setting a new Kafka release adds fails here until it is given one."""

from __future__ import annotations

import subprocess

from harness import kafka_lib_dir
from spark_kwire.client.settings.names import HONOURED, NO_EFFECT, REFUSED

_LIST_NAMES = """
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;

public class ListNames {
    public static void main(String[] args) {
        for (var def : new org.apache.kafka.common.config.ConfigDef[] {
                ConsumerConfig.configDef(), ProducerConfig.configDef(), AdminClientConfig.configDef()})
            for (String name : def.names()) System.out.println(name);
    }
}
"""


def test_every_java_client_setting_has_a_status(tmp_path):
    source = tmp_path / "ListNames.java"
    source.write_text(_LIST_NAMES)
    lib = kafka_lib_dir()
    classpath = ":".join(str(p) for pattern in ("kafka-clients-*.jar", "slf4j-api-*.jar") for p in lib.glob(pattern))
    out = subprocess.run(["java", "-cp", classpath, str(source)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    java = set(out.stdout.split())
    assert {"bootstrap.servers", "max.poll.records", "client.rack", "transactional.id"} <= java  # the list is read
    known = set(HONOURED) | set(NO_EFFECT) | set(REFUSED)
    assert not java - known, f"Kafka client settings without a status in names.py: {sorted(java - known)}"
    ours = {name for name in set(HONOURED) - java if not name.startswith("kwire.")}
    # what kwire honours beyond Java's names: librdkafka's names of the TLS files and of some SASL settings
    assert all(name.startswith(("ssl.", "sasl.", "enable.ssl.")) for name in ours), sorted(ours)
    assert set(NO_EFFECT) | set(REFUSED) <= java, "a Java-client setting that no Java client knows"
