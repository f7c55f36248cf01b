"""The brokers' own account of what they served: JMX metrics of a `KafkaCluster(jmx=True)`, read with Kafka's
JmxTool (one short JVM per broker, run side by side, about half a second).

``consumer_bytes_out(cluster, topic)`` is ``kafka.server:type=BrokerTopicMetrics,name=BytesOutPerSec,topic=...``
per broker: the record bytes each broker put into Fetch responses to consumers (replication to followers is
counted apart, as ReplicationBytesOutPerSec). The counts grow from the broker's start: compare two readings.
"""

from __future__ import annotations

import re
import subprocess

from harness.paths import KafkaLauncherError, java_command

__all__ = ["consumer_bytes_out", "jmx_counts"]

_LINE = re.compile(r'^(?P<name>[^\s,"][^"]*?):(?P<attribute>\w+),"(?P<value>-?[0-9.E]+)"$')


def jmx_counts(cluster, object_name: str, attribute: str = "Count", timeout: float = 60) -> dict[int, dict[str, float]]:
    """``{node id: {object name: value}}`` of every running node for the JMX query ``object_name`` (patterns
    allowed). Nodes whose query matches nothing have an empty dict."""
    procs = {}
    for node_id, node in cluster.nodes.items():
        if not node.jmx_port:
            raise KafkaLauncherError(f"node {node_id} has no JMX port: start the cluster with KafkaCluster(jmx=True)")
        if not node.is_running():
            continue
        url = f"service:jmx:rmi:///jndi/rmi://127.0.0.1:{node.jmx_port}/jmxrmi"
        procs[node_id] = subprocess.Popen(
            java_command("org.apache.kafka.tools.JmxTool", "--jmx-url", url, "--object-name", object_name,
                         "--attributes", attribute, "--one-time", "true", "--report-format", "csv"),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    result: dict[int, dict[str, float]] = {}
    for node_id, proc in procs.items():
        out, err = proc.communicate(timeout=timeout)
        if proc.returncode != 0:
            raise KafkaLauncherError(f"JmxTool on node {node_id} exited {proc.returncode}:\n{out}\n{err}"[-3000:])
        values = {}
        for line in out.splitlines():
            match = _LINE.match(line.strip())
            if match and match["attribute"] == attribute:
                values[match["name"]] = float(match["value"])
        result[node_id] = values
    return result


def consumer_bytes_out(cluster, topic: str) -> dict[int, int]:
    """Record bytes each running broker has served to consumers of ``topic`` since it started (0 when none)."""
    # A pattern (it also matches the all-topics meter): an exact name a broker has not created yet is an error.
    counts = jmx_counts(cluster, "kafka.server:type=BrokerTopicMetrics,name=BytesOutPerSec,*")
    name = f"kafka.server:type=BrokerTopicMetrics,name=BytesOutPerSec,topic={topic}"
    return {node_id: int(values.get(name, 0)) for node_id, values in counts.items()}
