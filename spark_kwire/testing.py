"""Real Apache Kafka brokers for kwire's tests, benchmarks and demo.

`KafkaCluster` formats KRaft storage and starts one node, or several (each node is both broker and
controller, so a 3-node quorum survives the loss of one), on free loopback ports, from the jars that
``jars/pom.xml`` fetched. It stops every process it started and removes its data on ``stop()``, on
leaving a ``with`` block, at interpreter exit, and (through PR_SET_PDEATHSIG) when the Python process
that started it dies.

This module is a development tool: it needs Java and the fetched jars, not just the installed package.
"""

from __future__ import annotations

import atexit
import base64
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SERVER_TEMPLATE = REPO_ROOT / "conf" / "kafka" / "server.properties"
START_TIMEOUT_S = 60.0
_READY_LINE = "Kafka Server started"


class KafkaLauncherError(RuntimeError):
    """A broker could not be started or a Java tool failed; the message carries the log tail."""


def kafka_lib_dir() -> Path:
    """Folder holding the Apache Kafka broker, tools and client jars (env KWIRE_KAFKA_LIB overrides)."""
    path = Path(os.environ.get("KWIRE_KAFKA_LIB", REPO_ROOT / "jars" / "kafka" / "target" / "lib"))
    if not list(path.glob("kafka_2.13-*.jar")):
        raise KafkaLauncherError(
            f"no Apache Kafka jars in {path}: run `make jars` (mvn -f jars/pom.xml dependency:copy-dependencies)"
        )
    return path


def spark_kafka_connector_jars() -> list[str]:
    """The four jars Spark's built-in `kafka` source needs on `spark.jars` (the batch oracle in tests)."""
    lib = Path(os.environ.get("KWIRE_SPARK_KAFKA_LIB", REPO_ROOT / "jars" / "spark-kafka" / "target" / "lib"))
    wanted = ["spark-sql-kafka-0-10_*.jar", "spark-token-provider-kafka-0-10_*.jar", "kafka-clients-*.jar", "commons-pool2-*.jar"]
    found = []
    for pattern in wanted:
        matches = sorted(lib.glob(pattern))
        if not matches:
            raise KafkaLauncherError(f"missing {pattern} in {lib}: run `make jars`")
        found.append(str(matches[-1]))
    return found


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_answers(port: int) -> bool:
    """Whether something accepts TCP connections on 127.0.0.1:port."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _pdeathsig() -> None:
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def die_with_parent() -> None:
    """Runs in the child before exec: ask Linux to SIGKILL it when the parent process dies, in a new session."""
    _pdeathsig()
    os.setsid()


def java_command(main_class: str, *args: str, heap: str = "256m", system_properties: dict | None = None) -> list[str]:
    """The command line that runs `main_class` from the Kafka jars."""
    props = {"org.slf4j.simpleLogger.defaultLogLevel": "warn", **(system_properties or {})}
    return [
        "java", f"-Xmx{heap}", "-Djava.awt.headless=true",
        *[f"-D{k}={v}" for k, v in props.items()],
        "-cp", str(kafka_lib_dir() / "*"), main_class, *args,
    ]


def run_java_tool(main_class: str, *args: str, input: str | bytes | None = None, timeout: float = 120,
                  check: bool = True, system_properties: dict | None = None) -> subprocess.CompletedProcess:
    """Run a Kafka Java tool (e.g. ``org.apache.kafka.tools.ConsoleProducer``) to completion."""
    text = not isinstance(input, bytes)
    proc = subprocess.run(
        java_command(main_class, *args, system_properties=system_properties),
        input=input, capture_output=True, timeout=timeout, text=text, preexec_fn=die_with_parent,
    )
    if check and proc.returncode != 0:
        raise KafkaLauncherError(
            f"{main_class} {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"[-4000:]
        )
    return proc


@dataclass
class Listener:
    """One client-facing listener: its name, Kafka security protocol and the port it got."""
    name: str
    security_protocol: str = "PLAINTEXT"
    port: int = 0


@dataclass
class KafkaNode:
    node_id: int
    workdir: Path
    listeners: list[Listener]
    controller_port: int
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
    appended to every node's server.properties; `scram_users` are ``(mechanism, name, password)``
    created at format time.
    """

    def __init__(self, nodes: int = 1, *, listeners: list[Listener] | None = None,
                 extra_properties: dict[str, str] | None = None,
                 scram_users: list[tuple[str, str, str]] | None = None,
                 heap: str = "768m", workdir: str | None = None) -> None:
        self.node_count = nodes
        self.extra_listeners = listeners or []
        self.extra_properties = extra_properties or {}
        self.scram_users = scram_users or []
        self.heap = heap
        # StorageTool reads an id starting with "-" as an option, so draw until it does not.
        self.cluster_id = "-"
        while self.cluster_id.startswith("-"):
            self.cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="kwire-kafka-"))
        self.nodes: dict[int, KafkaNode] = {}
        self._stopped = False
        for node_id in range(1, nodes + 1):
            listeners_ = [Listener("PLAINTEXT", "PLAINTEXT", free_port())] + [
                Listener(l.name, l.security_protocol, free_port()) for l in self.extra_listeners
            ]
            node_dir = self.workdir / f"node-{node_id}"
            node_dir.mkdir(parents=True, exist_ok=True)
            self.nodes[node_id] = KafkaNode(node_id, node_dir, listeners_, free_port())

    # -- addresses ---------------------------------------------------------------------------------
    @property
    def bootstrap_servers(self) -> str:
        """host:port list of every node's PLAINTEXT listener."""
        return self.bootstrap("PLAINTEXT")

    def bootstrap(self, listener_name: str) -> str:
        return ",".join(
            f"127.0.0.1:{l.port}" for n in self.nodes.values() for l in n.listeners if l.name == listener_name
        )

    # -- life cycle --------------------------------------------------------------------------------
    def _write_config(self, node: KafkaNode) -> Path:
        voters = ",".join(f"{n.node_id}@127.0.0.1:{n.controller_port}" for n in self.nodes.values())
        listeners = [f"{l.name}://127.0.0.1:{l.port}" for l in node.listeners]
        protocol_map = {l.name: l.security_protocol for l in node.listeners}
        protocol_map["CONTROLLER"] = "PLAINTEXT"
        replication = min(3, self.node_count)
        text = SERVER_TEMPLATE.read_text().format(
            node_id=node.node_id,
            quorum_voters=voters,
            listeners=",".join(listeners + [f"CONTROLLER://127.0.0.1:{node.controller_port}"]),
            advertised_listeners=",".join(listeners),
            security_protocol_map=",".join(f"{k}:{v}" for k, v in protocol_map.items()),
            inter_broker_listener="PLAINTEXT",
            log_dir=node.workdir / "data",
            replication_factor=replication,
            min_isr=min(2, replication),
        )
        text += "\n" + "".join(f"{k}={v}\n" for k, v in self.extra_properties.items())
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
                             system_properties={"org.slf4j.simpleLogger.defaultLogLevel": "info"}),
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


_live_clusters: set[KafkaCluster] = set()


@atexit.register
def _stop_all_clusters() -> None:
    for cluster in list(_live_clusters):
        cluster.stop()


# -- TLS material for security tests (needs the `cryptography` package of the `test` extra) ---------------

@dataclass
class TestCertificates:
    """Paths of the PEM files :func:`generate_test_certificates` wrote (all keys are PKCS#8).

    * ``ca_cert``: the CA every other certificate chains to (a client's truststore).
    * ``broker_keystore``: broker certificate (SANs ``localhost`` and ``127.0.0.1``) + CA + key, for a broker
      listener's ``ssl.keystore.type=PEM`` / ``ssl.keystore.location``.
    * ``wrong_host_keystore``: the same for a broker certificate naming only ``wrong-host.invalid``.
    * ``client_cert`` / ``client_key`` / ``client_keystore`` (both in one file): a client certificate for mutual TLS;
      ``client_key_encrypted`` is its key encrypted with ``client_key_password``.
    * ``other_ca_cert``: a CA that signed nothing here (a truststore that trusts no broker).
    """
    __test__ = False  # not a pytest test class

    directory: Path
    ca_cert: Path
    broker_keystore: Path
    wrong_host_keystore: Path
    client_cert: Path
    client_key: Path
    client_keystore: Path
    client_key_encrypted: Path
    client_key_password: str
    other_ca_cert: Path


def generate_test_certificates(directory: str | os.PathLike, *, days: int = 2,
                               client_key_password: str = "kwire-key-pass") -> TestCertificates:
    """Write a throw-away CA, broker certificates and a client certificate (RSA 2048) into ``directory``."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=5)
    until = now + datetime.timedelta(days=days)

    def new_key():
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def name(cn: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "spark-kwire tests"),
                          x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    def make_ca(cn: str):
        key = new_key()
        cert = (x509.CertificateBuilder().subject_name(name(cn)).issuer_name(name(cn))
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now).not_valid_after(until)
                .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                             content_commitment=False, key_encipherment=False,
                                             data_encipherment=False, key_agreement=False,
                                             encipher_only=False, decipher_only=False), critical=True)
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
                .sign(key, hashes.SHA256()))
        return key, cert

    def make_leaf(ca_key, ca_cert, cn: str, sans: list, usage):
        key = new_key()
        builder = (x509.CertificateBuilder().subject_name(name(cn)).issuer_name(ca_cert.subject)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now).not_valid_after(until)
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.ExtendedKeyUsage(usage), critical=False)
                   .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                                  critical=False))
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        return key, builder.sign(ca_key, hashes.SHA256())

    def pem_cert(cert) -> bytes:
        return cert.public_bytes(serialization.Encoding.PEM)

    def pem_key(key, password: str | None = None) -> bytes:
        encryption = (serialization.BestAvailableEncryption(password.encode()) if password
                      else serialization.NoEncryption())
        return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)

    def write(filename: str, data: bytes) -> Path:
        path = out / filename
        path.write_bytes(data)
        os.chmod(path, 0o600)
        return path

    ca_key, ca_cert = make_ca("kwire test CA")
    _, other_ca = make_ca("kwire untrusted CA")
    server = [ExtendedKeyUsageOID.SERVER_AUTH]
    broker_key, broker_cert = make_leaf(ca_key, ca_cert, "localhost",
                                        [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))],
                                        server)
    wrong_key, wrong_cert = make_leaf(ca_key, ca_cert, "wrong-host.invalid", [x509.DNSName("wrong-host.invalid")],
                                      server)
    client_key, client_cert = make_leaf(ca_key, ca_cert, "kwire-client", [], [ExtendedKeyUsageOID.CLIENT_AUTH])
    return TestCertificates(
        directory=out,
        ca_cert=write("ca.pem", pem_cert(ca_cert)),
        broker_keystore=write("broker.pem", pem_cert(broker_cert) + pem_cert(ca_cert) + pem_key(broker_key)),
        wrong_host_keystore=write("wrong-host.pem", pem_cert(wrong_cert) + pem_cert(ca_cert) + pem_key(wrong_key)),
        client_cert=write("client.crt", pem_cert(client_cert)),
        client_key=write("client.key", pem_key(client_key)),
        client_keystore=write("client.pem", pem_cert(client_cert) + pem_key(client_key)),
        client_key_encrypted=write("client-encrypted.key", pem_key(client_key, client_key_password)),
        client_key_password=client_key_password,
        other_ca_cert=write("other-ca.pem", pem_cert(other_ca)),
    )


# -- Fault injection: a chaos proxy for Kafka connections, a Spark standalone cluster on loopback ----------

def descendant_pids(pid: int) -> list[int]:
    """Every live process below ``pid`` (children, grandchildren...), read from /proc (Linux)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'.
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def process_start_time(pid: int) -> int | None:
    """The start time of process ``pid`` (clock ticks since boot), or None when it does not exist: with the
    pid, it names one process even after the pid is reused."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()
    return int(fields[19]) if len(fields) > 19 else None


def identify(pids) -> list[tuple[int, int]]:
    """(pid, start time) of the processes among ``pids`` that still exist."""
    out = []
    for pid in pids:
        started = process_start_time(pid)
        if started is not None:
            out.append((pid, started))
    return out


def kill_processes(identities, sig: int = signal.SIGKILL) -> None:
    """Signal the processes named by (pid, start time), skipping pids that now belong to another process."""
    for pid, started in identities:
        if process_start_time(pid) != started:
            continue
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


class ChaosProxy:
    """A TCP proxy on 127.0.0.1 in front of one Kafka listener that injects faults into responses.

    Requests (client to broker) pass through unchanged. Responses (broker to client) are forwarded frame
    by frame (4-byte size + body); for each frame, with the configured probabilities, the proxy

    * ``cut``: forwards a random prefix of the frame (possibly nothing, possibly all but one byte) and then
      closes both sides of the connection;
    * ``delay``: waits up to ``max_delay_s`` before forwarding it;
    * ``stall``: forwards a random prefix and then sends nothing more on that connection (the client must
      time out).

    ``mode`` switches the whole proxy: ``"forward"`` (the above), ``"blackhole"`` (accept connections, read
    requests, never answer), ``"reject"`` (accept and close at once). Faults are drawn from a seeded
    ``random.Random``. A broker behind the proxy must advertise the proxy's address, or clients reconnect to
    it directly after their first Metadata request (e.g. a listener whose ``advertised.listeners`` entry is
    the proxy, see :func:`proxied_kafka_cluster`). ``stats`` counts what happened.
    Use as a context manager or call :meth:`start` / :meth:`stop` (which closes every connection and joins
    every thread it started).
    """

    def __init__(self, target_port: int, *, target_host: str = "127.0.0.1", port: int = 0, seed: int = 0,
                 cut_probability: float = 0.0, delay_probability: float = 0.0, max_delay_s: float = 0.0,
                 stall_probability: float = 0.0) -> None:
        import random
        import threading

        self.target = (target_host, int(target_port))
        self.requested_port = port
        self.port = 0
        self.rng = random.Random(seed)
        self.cut_probability = cut_probability
        self.delay_probability = delay_probability
        self.max_delay_s = max_delay_s
        self.stall_probability = stall_probability
        self.mode = "forward"
        self.stats = {"connections": 0, "responses": 0, "cuts": 0, "delays": 0, "stalls": 0, "rejected": 0,
                      "blackholed": 0}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._listener: socket.socket | None = None
        self._threads: list = []
        self._sockets: set[socket.socket] = set()

    # -- control -------------------------------------------------------------------------------------
    def configure(self, **settings) -> "ChaosProxy":
        """Change ``mode``, ``cut_probability``, ``delay_probability``, ``max_delay_s``, ``stall_probability``."""
        for key, value in settings.items():
            if not hasattr(self, key) or key.startswith("_"):
                raise AttributeError(f"ChaosProxy has no setting {key!r}")
            if key == "mode" and value not in ("forward", "blackhole", "reject"):
                raise ValueError(f"mode must be forward, blackhole or reject, not {value!r}")
            setattr(self, key, value)
        return self

    def heal(self) -> "ChaosProxy":
        """Forward everything faithfully from now on (connections in a stall stay stalled)."""
        return self.configure(mode="forward", cut_probability=0.0, delay_probability=0.0, stall_probability=0.0)

    def cut_all(self) -> int:
        """Close every open connection now; returns how many sockets were closed."""
        with self._lock:
            sockets = list(self._sockets)
            self._sockets.clear()
        for s in sockets:
            self._close(s)
        return len(sockets)

    def _count(self, key: str) -> None:
        with self._lock:
            self.stats[key] += 1

    def _draw(self) -> tuple[str | None, float]:
        """The fault for the next response frame: (kind, value)."""
        with self._lock:
            r = self.rng.random()
            if r < self.cut_probability:
                return "cut", self.rng.random()
            r -= self.cut_probability
            if r < self.stall_probability:
                return "stall", self.rng.random()
            r -= self.stall_probability
            if r < self.delay_probability:
                return "delay", self.rng.uniform(0, self.max_delay_s)
            return None, 0.0

    # -- life cycle ----------------------------------------------------------------------------------
    def start(self) -> "ChaosProxy":
        import threading

        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.requested_port))
        listener.listen(64)
        listener.settimeout(0.2)
        self._listener = listener
        self.port = listener.getsockname()[1]
        thread = threading.Thread(target=self._accept_loop, name=f"chaos-proxy-{self.port}", daemon=True)
        self._threads.append(thread)
        thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._listener is not None:
            self._close(self._listener)
        self.cut_all()
        for thread in list(self._threads):
            thread.join(timeout=5)
        self._threads = [t for t in self._threads if t.is_alive()]

    def __enter__(self) -> "ChaosProxy":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- plumbing ------------------------------------------------------------------------------------
    @staticmethod
    def _close(sock: socket.socket) -> None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            sock.close()
        except OSError:
            pass

    def _track(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.add(sock)

    def _spawn(self, target, *args) -> None:
        import threading

        thread = threading.Thread(target=target, args=args, daemon=True)
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
        thread.start()

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self._count("connections")
            mode = self.mode
            if mode == "reject":
                self._count("rejected")
                self._close(client)
                continue
            self._track(client)
            if mode == "blackhole":
                self._count("blackholed")
                self._spawn(self._drain, client, None)
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                self._close(client)
                continue
            self._track(upstream)
            self._spawn(self._drain, client, upstream)
            self._spawn(self._responses, upstream, client)

    def _recv(self, sock: socket.socket, n: int) -> bytes | None:
        """Up to n bytes; None at EOF, on error or when the proxy stops."""
        sock.settimeout(0.2)
        while not self._stop.is_set():
            try:
                data = sock.recv(n)
            except socket.timeout:
                continue
            except OSError:
                return None
            return data or None
        return None

    def _recv_exact(self, sock: socket.socket, n: int) -> bytes | None:
        chunks, got = [], 0
        while got < n:
            data = self._recv(sock, min(n - got, 1 << 20))
            if data is None:
                return None
            chunks.append(data)
            got += len(data)
        return b"".join(chunks)

    def _drain(self, client: socket.socket, upstream: socket.socket | None) -> None:
        """Client to broker: forward requests (or swallow them in a black hole)."""
        try:
            while True:
                data = self._recv(client, 1 << 16)
                if data is None:
                    return
                if upstream is None or self.mode == "blackhole":
                    continue
                upstream.sendall(data)
        except OSError:
            pass
        finally:
            self._close(client)
            if upstream is not None:
                self._close(upstream)

    def _responses(self, upstream: socket.socket, client: socket.socket) -> None:
        """Broker to client: forward whole frames, applying the drawn fault to each."""
        import struct

        try:
            while True:
                header = self._recv_exact(upstream, 4)
                if header is None:
                    return
                size = struct.unpack(">i", header)[0]
                body = self._recv_exact(upstream, max(size, 0))
                if body is None:
                    return
                frame = header + body
                self._count("responses")
                if self.mode == "blackhole":
                    continue
                kind, value = self._draw()
                if kind == "delay":
                    self._count("delays")
                    if self._stop.wait(value):
                        return
                elif kind in ("cut", "stall"):
                    self._count(kind + "s")
                    client.settimeout(5)
                    client.sendall(frame[:int(value * len(frame))])
                    if kind == "stall":
                        while self._recv(client, 1 << 16) is not None:  # hold the connection until the client leaves
                            pass
                    return
                client.settimeout(30)
                client.sendall(frame)
        except OSError:
            pass
        finally:
            self._close(upstream)
            self._close(client)


def proxied_kafka_cluster(**cluster_kwargs) -> tuple[KafkaCluster, "ChaosProxy"]:
    """A one-node :class:`KafkaCluster` with a second listener, ``PROXIED``, reached through a :class:`ChaosProxy`.

    The broker advertises the proxy's port for ``PROXIED``, so a client bootstrapped with
    ``cluster.bootstrap("PROXIED")`` talks to the broker only through the proxy, while the ``PLAINTEXT``
    listener (``cluster.bootstrap_servers``) stays direct for set-up and verification. The proxy is running
    already (its port is in the broker's configuration): start the cluster (``with cluster:``) and call
    ``proxy.stop()`` at the end.
    """
    cluster = KafkaCluster(1, listeners=[Listener("PROXIED", "PLAINTEXT")], **cluster_kwargs)
    node = cluster.nodes[1]
    proxied = next(l for l in node.listeners if l.name == "PROXIED")
    proxy = ChaosProxy(proxied.port).start()
    proxied_port = proxied.port
    proxied.port = proxy.port  # what bootstrap("PROXIED") returns; the broker listens on proxied_port
    cluster.extra_properties = {
        **cluster.extra_properties,
        "listeners": ",".join(
            [f"{l.name}://127.0.0.1:{proxied_port if l.name == 'PROXIED' else l.port}" for l in node.listeners]
            + [f"CONTROLLER://127.0.0.1:{node.controller_port}"]),
    }
    return cluster, proxy


class SparkStandaloneCluster:
    """A Spark standalone master and ``workers`` workers on 127.0.0.1, from the PySpark wheel's jars.

    Each daemon runs ``bin/spark-class`` in its own process group, dies with the Python process that started
    it (PR_SET_PDEATHSIG through ``setpriv``, see :class:`_Spawner`), and logs to ``workdir``. ``master_url`` is what a driver passes as its master.
    ``executor_pids()`` lists the executor JVMs the workers launched (``kill_executor`` SIGKILLs one).
    ``stop()`` (also on leaving a ``with`` block and at interpreter exit) kills the daemons, their executors
    and the executors' Python workers, and deletes ``workdir``.
    """

    def __init__(self, workers: int = 2, *, cores: int = 1, memory: str = "1g", daemon_memory: str = "256m",
                 workdir: str | None = None) -> None:
        import pyspark

        self.spark_home = Path(pyspark.__file__).resolve().parent
        self.worker_count = workers
        self.cores = cores
        self.memory = memory
        self.daemon_memory = daemon_memory
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="kwire-spark-standalone-"))
        self.master_port = free_port()
        self.master_url = f"spark://127.0.0.1:{self.master_port}"
        self.master: subprocess.Popen | None = None
        self.workers: list[subprocess.Popen] = []
        self._logs: list[Path] = []
        self._stopped = False

    def _env(self) -> dict:
        env = dict(os.environ)
        env.update({
            "SPARK_HOME": str(self.spark_home),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_MASTER_HOST": "127.0.0.1",
            "SPARK_DAEMON_MEMORY": self.daemon_memory,
            "SPARK_DAEMON_JAVA_OPTS": "-XX:TieredStopAtLevel=1",  # starts faster; master and workers do little
            "SPARK_LOG_DIR": str(self.workdir / "logs"),
            "SPARK_PID_DIR": str(self.workdir / "pids"),
            "SPARK_WORKER_DIR": str(self.workdir / "work"),
            "SPARK_NO_DAEMONIZE": "1",
        })
        return env

    def _daemon(self, name: str, main_class: str, *args: str) -> subprocess.Popen:
        log_path = self.workdir / f"{name}.log"
        self._logs.append(log_path)
        with open(log_path, "ab") as log:
            return spawner.popen(  # not preexec_fn: see _Spawner (defined below, used at run time)
                [str(self.spark_home / "bin" / "spark-class"), main_class, *args],
                stdout=log, stderr=subprocess.STDOUT, env=self._env(), cwd=self.workdir,
            )

    def _wait_for_line(self, proc: subprocess.Popen, log_path: Path, line: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            text = log_path.read_text(errors="replace") if log_path.exists() else ""
            if line in text:
                return
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = "\n".join(text.splitlines()[-40:])
                self.stop()
                raise KafkaLauncherError(f"Spark daemon {log_path.name} did not log {line!r} "
                                         f"(exit code {proc.poll()}):\n{tail}")
            time.sleep(0.2)

    def start(self, timeout: float = 90) -> "SparkStandaloneCluster":
        for sub in ("logs", "pids", "work"):
            (self.workdir / sub).mkdir(parents=True, exist_ok=True)
        _live_spark_clusters.add(self)
        self.master = self._daemon("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                   "--port", str(self.master_port), "--webui-port", str(free_port()))
        self._wait_for_line(self.master, self.workdir / "master.log", "I have been elected leader", timeout)
        for i in range(self.worker_count):
            work = self.workdir / "work" / f"worker-{i}"
            work.mkdir(parents=True, exist_ok=True)
            self.workers.append(self._daemon(
                f"worker-{i}", "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                "--port", str(free_port()), "--webui-port", str(free_port()), "--cores", str(self.cores),
                "--memory", self.memory, "--work-dir", str(work), self.master_url))
        for i, proc in enumerate(self.workers):
            self._wait_for_line(proc, self.workdir / f"worker-{i}.log", "Successfully registered with master",
                                timeout)
        return self

    def executor_pids(self) -> list[int]:
        """Pids of the executor JVMs (CoarseGrainedExecutorBackend) running under this cluster's workers."""
        found = []
        for worker in self.workers:
            for pid in descendant_pids(worker.pid):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        if b"CoarseGrainedExecutorBackend" in f.read():
                            found.append(pid)
                except OSError:
                    pass
        return found

    def kill_executor(self, pid: int | None = None) -> int:
        """SIGKILL one executor (the first one found when ``pid`` is None); returns its pid."""
        pids = self.executor_pids()
        if not pids:
            raise KafkaLauncherError("no executor is running")
        victim = pid if pid is not None else pids[0]
        if victim not in pids:
            raise KafkaLauncherError(f"pid {victim} is not an executor of this cluster")
        kill_processes(identify([victim]))
        return victim

    def log_tail(self, lines: int = 40) -> str:
        out = []
        for path in self._logs:
            try:
                text = path.read_text(errors="replace").splitlines()[-lines:]
            except OSError:
                continue
            out.append(f"--- {path.name}\n" + "\n".join(text))
        return "\n".join(out)

    def stop(self) -> None:
        """Kill the workers (with their executors and Python workers) and the master; delete the workdir."""
        if self._stopped:
            return
        self._stopped = True
        procs = [p for p in [*self.workers, self.master] if p is not None]
        below = identify(pid for p in procs for pid in descendant_pids(p.pid))
        for proc in procs:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + 10
        for proc in procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                proc.wait(timeout=10)
        kill_processes(below)  # executors and the Python daemons (which run in process groups of their own)
        shutil.rmtree(self.workdir, ignore_errors=True)
        _live_spark_clusters.discard(self)

    def __enter__(self) -> "SparkStandaloneCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


_live_spark_clusters: set[SparkStandaloneCluster] = set()


@atexit.register
def _stop_all_spark_clusters() -> None:
    for cluster in list(_live_spark_clusters):
        cluster.stop()


# -- Starting processes from any thread ------------------------------------------------------------------

class _Spawner:
    """One long-lived daemon thread that starts child processes for the whole Python process.

    Two reasons not to fork from an arbitrary thread with ``preexec_fn`` (as ``die_with_parent`` needs):

    * a fork that runs Python code in the child (a ``preexec_fn``) runs CPython's after-fork clean-up
      there, which finalizes the other threads' thread-local objects -- among them py4j's per-thread
      connections to the Spark JVM, whose close shuts the socket down for the parent too: the parent's
      threads silently get new JVM threads, without Spark's active session (``format("kwire")`` then fails
      with DATA_SOURCE_NOT_FOUND) and a call in flight breaks;
    * PR_SET_PDEATHSIG fires when the *thread* that forked exits, so a node restarted from a short-lived
      thread is SIGKILLed as soon as that thread ends.

    So children are started here, with no Python code in the child (``start_new_session`` instead of
    ``os.setsid`` in a ``preexec_fn``), through util-linux ``setpriv --pdeathsig KILL`` when it exists:
    they still die with this process (the spawner thread lives as long as it does).
    """

    def __init__(self) -> None:
        import queue
        import threading

        self._requests: "queue.Queue" = queue.Queue()
        self._lock = threading.Lock()
        self._thread = None
        self.setpriv = shutil.which("setpriv")

    def _loop(self) -> None:
        while True:
            args, kwargs, box, done = self._requests.get()
            try:
                box.append(subprocess.Popen(*args, **kwargs))
            except BaseException as exc:  # handed to the caller
                box.append(exc)
            done.set()

    def popen(self, cmd: list[str], **kwargs) -> subprocess.Popen:
        import threading

        if self.setpriv:
            cmd = [self.setpriv, "--pdeathsig", "KILL", "--", *cmd]
        else:  # still die with this process; the child then runs Python code after the fork (see above)
            kwargs.setdefault("preexec_fn", _pdeathsig)
        kwargs.setdefault("start_new_session", True)
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="kwire-spawner", daemon=True)
                self._thread.start()
        box: list = []
        done = threading.Event()
        self._requests.put(((cmd,), kwargs, box, done))
        done.wait()
        if isinstance(box[0], BaseException):
            raise box[0]
        return box[0]


spawner = _Spawner()
