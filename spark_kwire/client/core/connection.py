"""One TCP connection to one Kafka broker.

* ``connect()`` opens the socket within ``socket.connection.setup.timeout.ms``, applies the transport hook
  (TLS), negotiates API versions with ApiVersions, then runs the authentication hook (SASL).
* Re-authentication (KIP-368): when the authentication hook reports a session lifetime (the broker's
  ``connections.max.reauth.ms``, or what is left of an OAUTHBEARER token), the connection runs the hook again
  before the session ends, like the Java client at a random point between 85% and 95% of the lifetime: the
  first request sent after that point waits for the answers in flight, re-authenticates on the same socket,
  then goes out. ``sasl_session`` shows the mechanism, lifetime and how often it re-authenticated.
* ``send(api, body)`` writes a request and returns a :class:`PendingResponse`; several requests may be in
  flight (Kafka answers them in order on a connection). ``PendingResponse.result()`` reads frames until
  its own answer arrived (answers to earlier requests are kept on their own ``PendingResponse``).
* Every read has a deadline (``request.timeout.ms`` after the request was sent); a frame size that is
  negative or larger than allowed is rejected before anything is allocated; a timeout, a closed socket
  or a broken frame closes the connection and fails every request in flight with a retriable
  :class:`BrokerConnectionError` naming ``host:port``.

Thread safety: one lock serialises sending and reading, so several threads may share a connection, but
it is meant for one user at a time.
"""

from __future__ import annotations

import random
import socket
import struct
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Optional

from spark_kwire._version import __version__
from spark_kwire.client.settings.config import ClientConfig
from spark_kwire.client.errors import BrokerConnectionError, RequestTimeoutError, UnsupportedVersionError
from spark_kwire.protocol import messages as m
from spark_kwire.protocol.errors import KwireError, ProtocolDecodeError, error_for

__all__ = ["BrokerConnection", "PendingResponse", "AuthenticatedSession", "CLIENT_SOFTWARE_NAME",
           "CLIENT_SOFTWARE_VERSION"]

CLIENT_SOFTWARE_NAME = "spark-kwire"
CLIENT_SOFTWARE_VERSION = __version__
_UNSUPPORTED_VERSION = 35
_SIZE = struct.Struct(">i")
_EAGER_FRAME_BYTES = 16 * 1024 * 1024  # frames up to this size are allocated at once, larger ones as they arrive
_INT16 = struct.Struct(">h")
REAUTH_WINDOW = (0.85, 0.95)  # fraction of the session lifetime after which to re-authenticate (as Java)


def api_name(api: Any) -> str:
    name = getattr(api, "name", None)
    return str(name) if name else f"api key {getattr(api, 'api_key', '?')}"


class PendingResponse:
    """A request in flight. ``result(timeout)`` returns the decoded response body (a dict)."""

    __slots__ = ("_conn", "api", "version", "correlation_id", "deadline", "_frame", "_body", "_error", "_done",
                 "sent_at")

    def __init__(self, conn: Optional["BrokerConnection"], api: Any, version: int, correlation_id: int,
                 deadline: float) -> None:
        self._conn = conn
        self.api = api
        self.version = version
        self.correlation_id = correlation_id
        self.deadline = deadline
        self.sent_at = time.monotonic()
        self._frame = None
        self._body = None
        self._error: BaseException | None = None
        self._done = False

    @classmethod
    def completed(cls, api: Any, version: int, body: Any = None) -> "PendingResponse":
        pending = cls(None, api, version, -1, 0.0)
        pending._body = body
        pending._done = True
        return pending

    @property
    def done(self) -> bool:
        return self._done

    def _set_frame(self, frame) -> None:
        self._frame = frame
        self._done = True

    def _set_error(self, error: BaseException) -> None:
        if not self._done:
            self._error = error
            self._done = True

    def result(self, timeout: float | None = None) -> dict:
        """Wait for and return the decoded response body; raises the connection or decode error."""
        if not self._done:
            self._conn._wait_for(self, timeout)
        if self._error is not None:
            raise self._error
        if self._frame is not None:
            frame, self._frame = self._frame, None
            try:
                _, self._body = self.api.decode_response(self.version, frame)
            except ProtocolDecodeError as exc:  # say which broker sent the bad bytes
                self._error = ProtocolDecodeError(
                    f"cannot decode {api_name(self.api)} v{self.version} response ({len(frame)} bytes) from "
                    f"{self._conn.address if self._conn else '?'}: {exc}")
                raise self._error from exc
            except KwireError as exc:
                self._error = exc
                raise
            except Exception as exc:  # a decoder bug must not look like a hang or a broken socket
                self._error = ProtocolDecodeError(
                    f"cannot decode {api_name(self.api)} v{self.version} response from "
                    f"{self._conn.address if self._conn else '?'}: {exc!r}")
                raise self._error from exc
        return self._body


@dataclass
class AuthenticatedSession:
    """The SASL session of a connection: who authenticated, for how long, and when to re-authenticate."""
    mechanism: str
    principal: str
    lifetime_ms: int = 0  # 0: the broker set no limit
    authenticated_at: float = 0.0  # time.monotonic() when the last exchange's final request was sent
    deadline: float | None = None  # time.monotonic() after which the next request re-authenticates first
    reauth_count: int = 0

    def due(self, now: float | None = None) -> bool:
        return self.deadline is not None and (time.monotonic() if now is None else now) >= self.deadline

    def __repr__(self) -> str:
        return (f"SaslSession({self.mechanism}, principal={self.principal!r}, lifetime_ms={self.lifetime_ms}, "
                f"reauthentications={self.reauth_count})")


class BrokerConnection:
    """A connection to ``host:port``; see the module docstring.

    ``authenticate(conn, reauthentication=False)`` returns an object with ``mechanism``, ``principal``,
    ``session_lifetime_ms`` and ``sent_at`` (or ``None``: no session to keep alive).
    """

    def __init__(self, host: str, port: int, config: ClientConfig,
                 transport_factory: Callable[[Any, str], Any] | None = None,
                 authenticate: Callable[["BrokerConnection"], None] | None = None,
                 *, node_id: int | None = None) -> None:
        self.host = host
        self.port = int(port)
        self.config = config
        self.node_id = node_id
        self._transport_factory = transport_factory
        self._authenticate = authenticate
        self._sock = None
        self._lock = threading.RLock()
        self._inflight: deque[PendingResponse] = deque()
        self._next_correlation_id = 1
        self._api_versions: dict[int, tuple[int, int]] = {}
        self._header = bytearray(4)
        self._authenticating = False
        self.sasl_session: AuthenticatedSession | None = None
        self.last_used = 0.0
        self.connected_at = 0.0

    # -- identity --------------------------------------------------------------------------------------
    @property
    def address(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    def __repr__(self) -> str:
        state = "connected" if self.connected else "closed"
        return f"BrokerConnection({self.address}, node={self.node_id}, {state})"

    def _error(self, message: str, cls=BrokerConnectionError) -> BrokerConnectionError:
        return cls(self.address, message, node_id=self.node_id)

    @property
    def connected(self) -> bool:
        return self._sock is not None

    @property
    def in_flight(self) -> int:
        return len(self._inflight)

    def readable_socket(self):
        """The socket to wait on with ``select()`` for answers (None when closed), and whether answer bytes
        already wait decrypted in the TLS layer, where ``select()`` cannot see them."""
        sock = self._sock
        if sock is None:
            return None, False
        pending = getattr(sock, "pending", None)
        return sock, bool(pending is not None and pending())

    @property
    def api_versions(self) -> dict[int, tuple[int, int]]:
        """The broker's ``{api_key: (min_version, max_version)}`` from ApiVersions."""
        return dict(self._api_versions)

    # -- connect ---------------------------------------------------------------------------------------
    def connect(self, deadline: float | None = None) -> "BrokerConnection":
        """Open the connection (no-op when open). Raises :class:`BrokerConnectionError` within the timeouts.

        ``deadline`` (a ``time.monotonic()`` value) caps the set-up time below the configured timeouts, e.g.
        so that a producer gives up within ``delivery.timeout.ms`` when a broker accepts connections but
        never answers.
        """
        with self._lock:
            if self._sock is not None:
                return self
            timeout_s = self.config.socket_connection_setup_timeout_ms / 1000.0
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise self._error("no time left to connect (the caller's deadline has passed)",
                                      RequestTimeoutError)
                timeout_s = min(timeout_s, remaining)
            try:
                sock = socket.create_connection((self.host, self.port), timeout=timeout_s)
            except socket.timeout:
                raise self._error(
                    f"could not connect within socket.connection.setup.timeout.ms="
                    f"{self.config.socket_connection_setup_timeout_ms}", RequestTimeoutError) from None
            except OSError as exc:
                raise self._error(f"could not connect: {exc.strerror or exc}") from None
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                if self.config.receive_buffer_bytes > 0:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.config.receive_buffer_bytes)
                if self.config.send_buffer_bytes > 0:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.config.send_buffer_bytes)
            except OSError:
                pass
            try:
                if self._transport_factory is not None:
                    sock.settimeout(timeout_s)
                    sock = self._transport_factory(sock, self.host)
            except KwireError:
                sock.close()
                raise
            except (OSError, ValueError) as exc:
                sock.close()
                raise self._error(f"transport setup failed: {exc}") from None
            self._sock = sock
            self.connected_at = self.last_used = time.monotonic()
            try:
                self._negotiate_api_versions(deadline)
                if self._authenticate is not None:
                    self._run_authentication(reauthentication=False)
            except BaseException:
                self.close()
                raise
            return self

    # -- authentication --------------------------------------------------------------------------------
    def _run_authentication(self, *, reauthentication: bool) -> None:
        self._authenticating = True
        try:
            if reauthentication:
                outcome = self._authenticate(self, reauthentication=True)
            else:
                outcome = self._authenticate(self)
        finally:
            self._authenticating = False
        if outcome is None:
            self.sasl_session = None
            return
        session = self.sasl_session if reauthentication and self.sasl_session is not None else \
            AuthenticatedSession(outcome.mechanism, outcome.principal)
        lifetime = int(outcome.session_lifetime_ms or 0)
        session.principal = outcome.principal
        session.lifetime_ms = lifetime
        session.authenticated_at = outcome.sent_at
        session.deadline = outcome.sent_at + lifetime / 1000.0 * random.uniform(*REAUTH_WINDOW) if lifetime > 0 \
            else None
        if reauthentication:
            session.reauth_count += 1
        self.sasl_session = session

    def _reauthenticate(self) -> None:
        """Re-run the SASL exchange on this socket once the answers in flight arrived (KIP-368)."""
        while self._inflight and self._sock is not None:
            self._wait_for(self._inflight[-1], None)  # reads (and keeps) every answer for its owner
        if self._sock is None:
            return  # the connection broke meanwhile: the caller reconnects, which authenticates afresh
        try:
            self._run_authentication(reauthentication=True)
        except BaseException:
            self.close()
            raise

    def _negotiate_api_versions(self, deadline: float | None = None) -> None:
        api = m.API_VERSIONS
        version = api.max_version
        for _ in range(4):
            body = {"client_software_name": CLIENT_SOFTWARE_NAME, "client_software_version": CLIENT_SOFTWARE_VERSION}
            pending = self.send(api, body, version=version, _negotiating=True)
            self._wait_for(pending, None if deadline is None else max(0.0, deadline - time.monotonic()))
            if pending._error is not None:
                raise pending._error
            frame = pending._frame
            # ApiVersions responses always use response header v0: error_code follows the correlation id.
            code = _INT16.unpack_from(frame, 4)[0] if len(frame) >= 6 else 0
            if code == _UNSUPPORTED_VERSION:
                _, body = api.decode_response(0, frame)
                ranges = {e["api_key"]: (e["min_version"], e["max_version"]) for e in body.get("api_keys") or ()}
                broker_max = ranges.get(api.api_key, (0, 0))[1]
                new_version = min(broker_max, api.max_version)
                if new_version >= version or new_version < api.min_version:
                    raise UnsupportedVersionError(
                        f"broker at {self.address} rejected ApiVersions v{version} and supports up to v{broker_max}; "
                        f"this client supports v{api.min_version}..v{api.max_version}")
                version = new_version
                continue
            body = pending.result()
            if body.get("error_code", 0):
                raise error_for(body["error_code"], broker=self.address)
            self._api_versions = {
                e["api_key"]: (e["min_version"], e["max_version"]) for e in body.get("api_keys") or ()
            }
            self.api_versions_version = version
            return
        raise UnsupportedVersionError(f"ApiVersions negotiation with {self.address} did not converge")

    def version_for(self, api: Any, max_version: int | None = None) -> int:
        """Highest version of ``api`` both sides support (optionally capped at ``max_version``)."""
        if not self._api_versions:
            self.connect()
        ours_max = api.max_version if max_version is None else min(api.max_version, max_version)
        theirs = self._api_versions.get(api.api_key)
        if theirs is None:
            raise UnsupportedVersionError(
                f"broker at {self.address} does not support {api_name(api)} (API key {api.api_key}) at all")
        low = max(api.min_version, theirs[0])
        high = min(ours_max, theirs[1])
        if low > high:
            raise UnsupportedVersionError(
                f"no common version of {api_name(api)} (API key {api.api_key}): broker at {self.address} "
                f"supports v{theirs[0]}..v{theirs[1]}, spark-kwire supports v{api.min_version}..v{ours_max}")
        return high

    def supports(self, api: Any, min_version: int = 0) -> bool:
        try:
            return self.version_for(api) >= min_version
        except UnsupportedVersionError:
            return False

    # -- requests --------------------------------------------------------------------------------------
    def send(self, api: Any, body: dict, version: int | None = None, *, expect_response: bool = True,
             timeout_ms: int | None = None, _negotiating: bool = False) -> PendingResponse:
        """Write one request; returns its :class:`PendingResponse` (already completed if no response is expected)."""
        with self._lock:
            if self._sock is None:
                if _negotiating:
                    raise self._error("connection is closed")
                self.connect()
            session = self.sasl_session
            if session is not None and session.deadline is not None and not _negotiating \
                    and not self._authenticating and session.due():
                self._reauthenticate()
                if self._sock is None:
                    self.connect()
            if version is None:
                version = self.version_for(api)
            correlation_id = self._next_correlation_id
            self._next_correlation_id = correlation_id + 1 if correlation_id < 2**31 - 1 else 1
            try:
                payload = api.encode_request(version, body, correlation_id=correlation_id,
                                             client_id=self.config.client_id)
            except KwireError:
                raise
            except Exception as exc:
                raise KwireError(f"cannot encode {api_name(api)} v{version} request: {exc!r}") from exc
            timeout_s = (timeout_ms if timeout_ms is not None else self.config.request_timeout_ms) / 1000.0
            deadline = time.monotonic() + timeout_s
            try:
                self._sock.settimeout(timeout_s)
                if len(payload) < 65536:
                    self._sock.sendall(_SIZE.pack(len(payload)) + payload)
                else:  # large (produce) requests: do not copy the payload once more
                    self._sock.sendall(_SIZE.pack(len(payload)))
                    self._sock.sendall(payload)
            except socket.timeout:
                exc = self._error(f"timed out sending a {api_name(api)} request "
                                  f"(request.timeout.ms={self.config.request_timeout_ms})", RequestTimeoutError)
                self._fail_all(exc)
                raise exc from None
            except OSError as exc:
                err = self._error(f"connection lost while sending a {api_name(api)} request: {exc}")
                self._fail_all(err)
                raise err from None
            self.last_used = time.monotonic()
            if not expect_response:
                return PendingResponse.completed(api, version, None)
            pending = PendingResponse(self, api, version, correlation_id, deadline)
            self._inflight.append(pending)
            return pending

    def request(self, api: Any, body: dict, version: int | None = None, *, timeout_ms: int | None = None) -> dict:
        """Send one request and wait for its decoded response body."""
        return self.send(api, body, version, timeout_ms=timeout_ms).result()

    def _wait_for(self, pending: PendingResponse, timeout: float | None) -> None:
        with self._lock:
            limit = None if timeout is None else time.monotonic() + timeout
            while not pending._done:
                if not self._inflight:
                    pending._set_error(self._error("the response was lost (connection was reset)"))
                    break
                head = self._inflight[0]
                deadline = head.deadline if limit is None else min(head.deadline, limit)
                try:
                    frame = self._read_frame(deadline, head)
                except BrokerConnectionError as exc:
                    self._fail_all(exc)
                    break
                correlation_id = _SIZE.unpack_from(frame, 0)[0] if len(frame) >= 4 else None
                if correlation_id != head.correlation_id:
                    exc = self._error(
                        f"response correlation id {correlation_id} does not match the oldest request in flight "
                        f"({head.correlation_id}, {api_name(head.api)})")
                    self._fail_all(exc)
                    break
                self._inflight.popleft()
                head._set_frame(frame)
            self.last_used = time.monotonic()

    def _read_frame(self, deadline: float, head: PendingResponse):
        header = self._header
        self._recv_exact(memoryview(header), deadline, head, "size of a response frame")
        size = _SIZE.unpack_from(header, 0)[0]
        limit = self.config.max_response_bytes
        if size < 4:
            raise self._error(
                f"invalid response frame size {size} for {api_name(head.api)} (allowed 4..{limit}; is this a Kafka listener with security.protocol={self.config.security_protocol}?)")
        if size > limit:
            raise self._error(
                f"invalid response frame size {size} for {api_name(head.api)}: larger than allowed ({limit} bytes: "
                f"fetch.max.bytes/max.partition.fetch.bytes plus 64 MiB), refused without reading it; is this a "
                f"Kafka listener with security.protocol={self.config.security_protocol}?")
        what = f"{size}-byte response frame"
        if size <= _EAGER_FRAME_BYTES:
            buf = bytearray(size)
            self._recv_exact(memoryview(buf), deadline, head, what)
            return buf
        # A large frame: receive it in chunks allocated as the bytes arrive, so that a size field the peer
        # does not back with data never allocates the size it claims.
        chunks = []
        remaining = size
        while remaining:
            chunk = bytearray(min(remaining, _EAGER_FRAME_BYTES))
            self._recv_exact(memoryview(chunk), deadline, head, what)
            chunks.append(chunk)
            remaining -= len(chunk)
        return bytearray().join(chunks)

    def _recv_exact(self, view: memoryview, deadline: float, head: PendingResponse, what: str) -> None:
        sock = self._sock
        if sock is None:
            raise self._error("connection is closed")
        got = 0
        total = len(view)
        while got < total:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._timeout(head, got, total, what)
            try:
                sock.settimeout(remaining)
                n = sock.recv_into(view[got:], total - got)
            except socket.timeout:
                raise self._timeout(head, got, total, what) from None
            except (OSError, ValueError) as exc:
                raise self._error(f"connection lost while reading the {what} for {api_name(head.api)}: {exc}") from None
            if n == 0:
                if got == 0 and what.startswith("size"):
                    raise self._error(f"connection closed by the broker while waiting for a {api_name(head.api)} "
                                      f"response")
                raise self._error(f"connection closed by the broker mid-frame ({got} of {total} bytes of the {what} "
                                  f"for {api_name(head.api)})")
            got += n

    def _timeout(self, head: PendingResponse, got: int, total: int, what: str) -> RequestTimeoutError:
        waited = time.monotonic() - head.sent_at
        detail = f" ({got} of {total} bytes received)" if got else ""
        return self._error(
            f"no complete {api_name(head.api)} response after {waited:.1f}s "
            f"(request.timeout.ms={self.config.request_timeout_ms}){detail}", RequestTimeoutError)

    def _fail_all(self, exc: BaseException) -> None:
        sock, self._sock = self._sock, None
        self._api_versions = {}
        if sock is not None:
            try:
                sock.close()
            except OSError:
                pass
        while self._inflight:
            self._inflight.popleft()._set_error(exc)

    def close(self) -> None:
        """Close the socket; requests still in flight fail with :class:`BrokerConnectionError`."""
        with self._lock:
            self._fail_all(self._error("connection closed by the client"))

    def __enter__(self) -> "BrokerConnection":
        return self.connect()

    def __exit__(self, *exc) -> None:
        self.close()
