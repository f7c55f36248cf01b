"""Real Apache Kafka brokers for kwire's tests, benchmarks and demo.

`KafkaCluster` formats KRaft storage and starts one node, or several (each node is both broker and
controller, so a 3-node quorum survives the loss of one), on free loopback ports, from the jars that
``jars/pom.xml`` fetched. It stops every process it started and removes its data on ``stop()``, on
leaving a ``with`` block, at interpreter exit, and (through PR_SET_PDEATHSIG) when the Python process
that started it dies.
"""

from __future__ import annotations

import atexit
import base64
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from harness.paths import SERVER_TEMPLATE, KafkaLauncherError, java_command
from harness.processes import die_with_parent, free_port, port_answers, spawner

START_TIMEOUT_S = 60.0
_READY_LINE = "Kafka Server started"


@dataclass
class Listener:
    """One client-facing listener: its name, Kafka security protocol, the port it got and the host it binds and
    advertises (e.g. ``localhost`` for Kerberos, whose service principal names the host clients connect to).

    ``advertised`` ("host:port") makes the broker advertise another address than the one it listens on, e.g. a port
    nobody listens on: clients that bootstrap there get Metadata naming an address they cannot reach."""
    name: str
    security_protocol: str = "PLAINTEXT"
    port: int = 0
    host: str = "127.0.0.1"
    advertised: str | None = None

    @property
    def advertised_address(self) -> str:
        return self.advertised or f"{self.host}:{self.port}"


@dataclass
class KafkaNode:
    node_id: int
    workdir: Path
    listeners: list[Listener]
    controller_port: int
    jmx_port: int = 0  # 0: no remote JMX
    process: subprocess.Popen | None = None
    log_path: Path = field(init=False)

    def __post_init__(self) -> None:
        self.log_path = self.workdir / "server.log"

    @property
    def port(self) -> int:
        """Port of the first (PLAINTEXT) listener."""
        return self.listeners[0].port

    def is_running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


class KafkaCluster:
    """One or more KRaft nodes on loopback. Use as a context manager or call start()/stop().

    `listeners` adds client listeners beyond the PLAINTEXT one every node has (inter-broker traffic and
    the Java tools use PLAINTEXT), e.g. ``[Listener("SASL_SSL", "SASL_SSL")]``; `extra_properties` are
    appended to every node's server.properties, `node_properties` (node id -> properties) to one node's (e.g.
    its ``broker.rack``); `scram_users` are ``(mechanism, name, password)``
    created at format time; `system_properties` are passed to every broker JVM as ``-Dname=value`` (e.g.
    Kafka 4's ``org.apache.kafka.sasl.oauthbearer.allowed.urls``); `jmx` opens remote JMX (no authentication,
    loopback only) on a free port per node, for reading the brokers' own metrics (`harness.broker_metrics`);
    `broker_jvm_options` go on every broker's command line (not the storage tool's).
    """

    def __init__(self, nodes: int = 1, *, listeners: list[Listener] | None = None,
                 extra_properties: dict[str, str] | None = None,
                 node_properties: dict[int, dict[str, str]] | None = None,
                 scram_users: list[tuple[str, str, str]] | None = None,
                 system_properties: dict[str, str] | None = None, jmx: bool = False,
                 heap: str = "768m", workdir: str | None = None, broker_jvm_options: list[str] | None = None) -> None:
        self.node_count = nodes
        self.extra_listeners = listeners or []
        self.extra_properties = extra_properties or {}
        self.node_properties = node_properties or {}
        self.scram_users = scram_users or []
        self.system_properties = dict(system_properties or {})
        self.heap = heap
        self.broker_jvm_options = list(broker_jvm_options or [])
        # StorageTool reads an id starting with "-" as an option, so draw until it does not.
        self.cluster_id = "-"
        while self.cluster_id.startswith("-"):
            self.cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="kwire-kafka-"))
        self.nodes: dict[int, KafkaNode] = {}
        self._stopped = False
        for node_id in range(1, nodes + 1):
            listeners_ = [Listener("PLAINTEXT", "PLAINTEXT", free_port())] + [
                Listener(l.name, l.security_protocol, free_port(), l.host, l.advertised) for l in self.extra_listeners
            ]
            node_dir = self.workdir / f"node-{node_id}"
            node_dir.mkdir(parents=True, exist_ok=True)
            self.nodes[node_id] = KafkaNode(node_id, node_dir, listeners_, free_port(), free_port() if jmx else 0)

    # -- addresses ---------------------------------------------------------------------------------
    @property
    def bootstrap_servers(self) -> str:
        """host:port list of every node's PLAINTEXT listener."""
        return self.bootstrap("PLAINTEXT")

    def bootstrap(self, listener_name: str) -> str:
        return ",".join(
            f"{l.host}:{l.port}" for n in self.nodes.values() for l in n.listeners if l.name == listener_name
        )

    # -- life cycle --------------------------------------------------------------------------------
    def _write_config(self, node: KafkaNode) -> Path:
        voters = ",".join(f"{n.node_id}@127.0.0.1:{n.controller_port}" for n in self.nodes.values())
        listeners = [f"{l.name}://{l.host}:{l.port}" for l in node.listeners]
        advertised = [f"{l.name}://{l.advertised_address}" for l in node.listeners]
        protocol_map = {l.name: l.security_protocol for l in node.listeners}
        protocol_map["CONTROLLER"] = "PLAINTEXT"
        replication = min(3, self.node_count)
        text = SERVER_TEMPLATE.read_text().format(
            node_id=node.node_id,
            quorum_voters=voters,
            listeners=",".join(listeners + [f"CONTROLLER://127.0.0.1:{node.controller_port}"]),
            advertised_listeners=",".join(advertised),
            security_protocol_map=",".join(f"{k}:{v}" for k, v in protocol_map.items()),
            inter_broker_listener="PLAINTEXT",
            log_dir=node.workdir / "data",
            replication_factor=replication,
            min_isr=min(2, replication),
        )
        properties = {**self.extra_properties, **self.node_properties.get(node.node_id, {})}
        text += "\n" + "".join(f"{k}={v}\n" for k, v in properties.items())
        path = node.workdir / "server.properties"
        path.write_text(text)
        return path

    def _format(self, node: KafkaNode) -> subprocess.Popen:
        config = self._write_config(node)
        args = ["format", "-t", self.cluster_id, "-c", str(config), "--ignore-formatted"]
        for mechanism, name, password in self.scram_users:
            args += ["--add-scram", f"{mechanism}=[name={name},password={password}]"]
        return subprocess.Popen(
            java_command("kafka.tools.StorageTool", *args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, preexec_fn=die_with_parent,
        )

    def _launch(self, node: KafkaNode) -> None:
        # through the spawner, so that restart() may be called from any thread, also while Spark runs here
        with open(node.log_path, "ab") as log:
            node.process = spawner.popen(
                java_command("kafka.Kafka", str(node.workdir / "server.properties"), heap=self.heap,
                             system_properties={"org.slf4j.simpleLogger.defaultLogLevel": "info",
                                                **_jmx_properties(node.jmx_port), **self.system_properties},
                             jvm_options=self.broker_jvm_options),
                stdout=log, stderr=subprocess.STDOUT, cwd=node.workdir)

    def _wait_ready(self, nodes: list[KafkaNode], timeout: float = START_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout
        pending = list(nodes)
        while pending:
            node = pending[0]
            if not node.is_running():
                raise KafkaLauncherError(
                    f"Kafka node {node.node_id} exited with {node.process.returncode} while starting; "
                    f"log tail ({node.log_path}):\n{node.log_tail()}"
                )
            started = _READY_LINE in node.log_path.read_text(errors="replace")
            if started and all(port_answers(l.port) for l in node.listeners):
                pending.pop(0)
                continue
            if time.monotonic() > deadline:
                raise KafkaLauncherError(
                    f"Kafka node {node.node_id} not ready after {timeout:.0f}s; log tail ({node.log_path}):\n"
                    f"{node.log_tail()}"
                )
            time.sleep(0.2)

    def start(self) -> "KafkaCluster":
        """Format storage and start every node; returns when all answer on their ports."""
        _live_clusters.add(self)
        formatters = [(n, self._format(n)) for n in self.nodes.values()]
        for node, proc in formatters:
            out, _ = proc.communicate(timeout=120)
            if proc.returncode != 0:
                self.stop()
                raise KafkaLauncherError(f"formatting storage of node {node.node_id} failed:\n{out[-3000:]}")
        for node in self.nodes.values():
            self._launch(node)
        try:
            self._wait_ready(list(self.nodes.values()))
        except BaseException:
            self.stop()
            raise
        return self

    def kill(self, node_id: int, sig: int = signal.SIGKILL) -> None:
        """Kill one node's process (SIGKILL by default) and wait for it to go; its data stays."""
        node = self.nodes[node_id]
        if node.is_running():
            os.killpg(node.process.pid, sig)
            node.process.wait(timeout=30)

    def restart(self, node_id: int, wait: bool = True) -> None:
        """Start a killed node again on the same ports with the same data (from any thread: see _Spawner)."""
        node = self.nodes[node_id]
        if node.is_running():
            self.kill(node_id)
        with open(node.log_path, "a") as log:
            log.write("\n--- restarted by KafkaCluster.restart ---\n")
        # The ready line of the previous run is in the log; wait for a fresh one.
        node.log_path.rename(node.workdir / f"server.{int(time.time() * 1000)}.log")
        self._launch(node)
        if wait:
            self._wait_ready([node])

    def stop(self) -> None:
        """Stop every process this cluster started and delete its data. Safe to call twice."""
        if self._stopped:
            return
        self._stopped = True
        for node in self.nodes.values():
            if node.is_running():
                try:
                    os.killpg(node.process.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 15
        for node in self.nodes.values():
            if node.process is None:
                continue
            try:
                node.process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(node.process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                node.process.wait(timeout=10)
        shutil.rmtree(self.workdir, ignore_errors=True)
        _live_clusters.discard(self)

    def __enter__(self) -> "KafkaCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _jmx_properties(port: int) -> dict[str, str]:
    """JVM properties that open remote JMX on loopback ``port`` (RMI registry and server on the same port)."""
    if not port:
        return {}
    return {"com.sun.management.jmxremote.port": str(port), "com.sun.management.jmxremote.rmi.port": str(port),
            "com.sun.management.jmxremote.host": "127.0.0.1", "java.rmi.server.hostname": "127.0.0.1",
            "com.sun.management.jmxremote.authenticate": "false", "com.sun.management.jmxremote.ssl": "false",
            "com.sun.management.jmxremote.local.only": "true"}


_live_clusters: set[KafkaCluster] = set()


@atexit.register
def _stop_all_clusters() -> None:
    for cluster in list(_live_clusters):
        cluster.stop()
