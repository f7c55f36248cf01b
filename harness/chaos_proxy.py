"""A chaos proxy for Kafka connections, and a Kafka cluster reached through one."""

from __future__ import annotations

import socket

from harness.kafka_cluster import KafkaCluster, Listener


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
