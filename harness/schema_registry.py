"""A schema registry for tests: a real threaded HTTP server on a free loopback port that serves the documented REST
API of Confluent's Schema Registry (no Confluent-compatible server installs on this machine).

Endpoints: ``/subjects`` (list; ``subjectPrefix``, ``deleted``, ``deletedOnly``), ``/subjects/{s}`` (POST: look a
schema up; DELETE: soft or ``permanent`` delete), ``/subjects/{s}/versions`` (GET list, POST register),
``/subjects/{s}/metadata`` (the latest version whose metadata holds the ``key``/``value`` pairs asked),
``/subjects/{s}/versions/{v|latest}`` (+ ``/schema``, ``/referencedby``; DELETE), ``/schemas/ids/{id}``
(``subject``, ``format=serialized``; + ``/schema``, ``/versions``, ``/subjects``), ``/schemas/guids/{guid}``,
``/schemas/types``, ``/config`` and ``/config/{s}`` (GET, PUT, DELETE; ``defaultToGlobal``), ``/mode`` and
``/mode/{s}``, ``/compatibility/subjects/{s}/versions[/{v}]``, ``/contexts``. What the schemas mean (checks,
canonical forms, Protobuf text and descriptors, compatibility) is in :mod:`harness.registry_schemas`, the state and
its rules in :mod:`harness.registry_store`. Errors are ``{"error_code": ..., "message": ...}`` with the documented
codes. Lists take ``offset`` / ``limit``. Not served: contexts (``?subject=`` on ``/schemas/ids`` is accepted, and
every id is global), data-contract rules (``metadata`` / ``ruleSet`` are stored and returned, never run), exporters
and ``/associations`` (404, which confluent-kafka's serializers read as "no association").

Knobs for tests:

* ``users={"name": "password"}``: HTTP Basic required; ``bearer_tokens={"token": "principal"}``: static bearer
  tokens accepted; ``oauth=OAuthProvider``: bearer JWTs signed by that provider accepted (``sub`` is the principal);
  ``denied={"principal"}``: authenticated but answered 403 (40301). With no credentials configured, anyone may.
* ``certs=TestCertificates``: HTTPS with the harness certificates (the server's: ``keystore``, by default
  ``certs.broker_keystore``, which names localhost and 127.0.0.1); ``client_certs=True`` requires a client one.
* Faults, each for the next ``count`` requests: :meth:`respond_next` (any status, e.g. 503, 429, 401),
  :meth:`refuse_next` (the connection is closed without an answer), :meth:`delay_next` (the answer waits);
  ``delay_s`` delays every answer. :meth:`stop` releases waiting answers and closes open connections.
* ``requests``: every request received (method, path, query, headers (lower-case names, the ``Authorization``
  value masked), principal, status); :meth:`count` counts them by method and path.
"""

from __future__ import annotations

import base64
import json
import socket
import ssl
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from harness.registry_schemas import SCHEMA_TYPES, incompatibilities
from harness.registry_store import RegistryHttpError, RegistryStore, StoredSchema, subject_not_found

__all__ = ["SchemaRegistryServer", "LoggedRequest"]

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


@dataclass
class LoggedRequest:
    method: str
    path: str  # decoded path, without the query
    query: dict
    headers: dict  # names in lower case; the Authorization value masked ("Basic ***")
    principal: str | None = None
    status: int | None = None  # None: the connection was closed without an answer
    at: float = field(default_factory=time.time)


@dataclass
class _Fault:
    remaining: int
    kind: str  # "respond", "refuse", "delay"
    status: int = 503
    body: dict | None = None
    seconds: float = 0.0
    headers: dict = field(default_factory=dict)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, handler, owner: "SchemaRegistryServer") -> None:
        self.owner = owner
        self.open_sockets: set = set()
        super().__init__(address, handler)

    def finish_request(self, request, client_address) -> None:
        """Runs in the connection's own thread: the TLS handshake happens here, not in the accepting thread."""
        connection = request
        with self.owner._lock:
            self.open_sockets.add(request)
        try:
            context = self.owner._tls_context
            if context is not None:
                request.settimeout(10)
                try:
                    connection = context.wrap_socket(request, server_side=True)
                except (ssl.SSLError, OSError):
                    return
                with self.owner._lock:
                    self.open_sockets.add(connection)
                connection.settimeout(None)
            super().finish_request(connection, client_address)
        finally:
            with self.owner._lock:
                self.open_sockets.discard(request)
                self.open_sockets.discard(connection)
            if connection is not request:
                connection.close()


class SchemaRegistryServer:
    """See the module docstring. Use as a context manager or call :meth:`start` / :meth:`stop`."""

    def __init__(self, *, users: dict[str, str] | None = None, bearer_tokens: dict[str, str] | None = None,
                 oauth=None, oauth_audience: str | None = None, denied: set[str] | None = None, certs=None,
                 client_certs: bool = False, keystore=None, compatibility: str = "BACKWARD", port: int = 0) -> None:
        self.users = dict(users or {})
        self.bearer_tokens = dict(bearer_tokens or {})
        self.oauth = oauth
        self.oauth_audience = oauth_audience
        self.denied = set(denied or ())
        self.certs = certs
        self.client_certs = client_certs
        self.keystore = keystore
        self.store = RegistryStore(compatibility)
        self.requests: list[LoggedRequest] = []
        self.delay_s = 0.0
        self.port = port
        self._faults: list[_Fault] = []
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._tls_context: ssl.SSLContext | None = None

    # -- life cycle ---------------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"{'https' if self.certs is not None else 'http'}://127.0.0.1:{self.port}"

    def start(self) -> "SchemaRegistryServer":
        if self.certs is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(str(self.keystore or self.certs.broker_keystore))
            if self.client_certs:
                context.verify_mode = ssl.CERT_REQUIRED
                context.load_verify_locations(cafile=str(self.certs.ca_cert))
            self._tls_context = context
        owner = self

        class Handler(_Handler):
            server_owner = owner

        self._released.clear()
        self._server = _Server(("127.0.0.1", self.port), Handler, self)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="schema-registry", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving: waiting answers are released, open connections closed (the port is free again)."""
        self._released.set()
        server = self._server
        if server is None:
            return
        server.shutdown()
        server.server_close()
        with self._lock:
            sockets = list(server.open_sockets)
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = self._thread = None

    def __enter__(self) -> "SchemaRegistryServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- faults and the request log -----------------------------------------------------------------------
    def respond_next(self, count: int, status: int = 503, body: dict | None = None, *,
                     headers: dict | None = None) -> None:
        """Answer the next ``count`` requests with ``status`` (and ``body``, default a registry error body)."""
        with self._lock:
            self._faults.append(_Fault(count, "respond", status, body, headers=dict(headers or {})))

    def refuse_next(self, count: int) -> None:
        """Close the connection of the next ``count`` requests without answering them."""
        with self._lock:
            self._faults.append(_Fault(count, "refuse"))

    def delay_next(self, count: int, seconds: float) -> None:
        """Answer the next ``count`` requests after ``seconds`` (released early by :meth:`stop`)."""
        with self._lock:
            self._faults.append(_Fault(count, "delay", seconds=seconds))

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def _take_fault(self) -> _Fault | None:
        with self._lock:
            while self._faults and self._faults[0].remaining <= 0:
                self._faults.pop(0)
            if not self._faults:
                return None
            fault = self._faults[0]
            fault.remaining -= 1
            return fault

    def count(self, method: str | None = None, path: str | None = None, *, prefix: bool = False) -> int:
        """How many requests matched ``method`` and ``path`` (or paths starting with it when ``prefix``)."""
        with self._lock:
            return sum(1 for r in self.requests if (method is None or r.method == method) and
                       (path is None or (r.path.startswith(path) if prefix else r.path == path)))

    def clear_log(self) -> None:
        with self._lock:
            self.requests.clear()

    # -- authentication -----------------------------------------------------------------------------------
    @property
    def requires_credentials(self) -> bool:
        return bool(self.users or self.bearer_tokens or self.oauth is not None)

    def authenticate(self, header: str | None) -> str | None:
        """The principal of an ``Authorization`` header; raises 401 when credentials are required and wrong."""
        if not self.requires_credentials:
            return None
        scheme, _, value = (header or "").partition(" ")
        scheme = scheme.lower()
        if scheme == "basic" and self.users:
            try:
                user, _, password = base64.b64decode(value).decode("utf-8").partition(":")
            except (ValueError, UnicodeDecodeError):
                user, password = "", None
            if self.users.get(user) == password:
                return user
        elif scheme == "bearer":
            if value in self.bearer_tokens:
                return self.bearer_tokens[value]
            if self.oauth is not None:
                principal = self._verify_jwt(value)
                if principal is not None:
                    return principal
        raise RegistryHttpError(401, 401, "Unauthorized")

    def _verify_jwt(self, token: str) -> str | None:
        import jwt

        try:
            header = jwt.get_unverified_header(token)
            keys = {k["kid"]: k for k in self.oauth.jwks()["keys"]}
            key = jwt.algorithms.RSAAlgorithm.from_jwk(json.dumps(keys[header.get("kid")]))
            claims = jwt.decode(token, key, algorithms=["RS256"], audience=self.oauth_audience,
                                options={"verify_aud": self.oauth_audience is not None})
        except (jwt.PyJWTError, KeyError, ValueError):
            return None
        return str(claims.get("sub"))


# -- request handling -------------------------------------------------------------------------------------

def _flag(query: dict, name: str) -> bool:
    return str(query.get(name, "false")).strip().lower() == "true"


class _Handler(BaseHTTPRequestHandler):
    server_owner: SchemaRegistryServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    # -- plumbing -----------------------------------------------------------------------------------------
    def _send(self, status: int, payload, headers: dict | None = None) -> None:
        data = json.dumps(payload).encode("utf-8") if not isinstance(payload, bytes) else payload
        self.send_response(status)
        self.send_header("Content-Type", CONTENT_TYPE)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _handle(self, method: str) -> None:
        owner = self.server_owner
        split = urllib.parse.urlsplit(self.path)
        segments = [urllib.parse.unquote(s) for s in split.path.split("/") if s]
        query = dict(urllib.parse.parse_qsl(split.query, keep_blank_values=True))
        headers = {k.lower(): v for k, v in self.headers.items()}
        if "authorization" in headers:
            headers["authorization"] = headers["authorization"].partition(" ")[0] + " ***"
        entry = LoggedRequest(method, "/" + "/".join(segments), query, headers)
        with owner._lock:
            owner.requests.append(entry)
        length = int(self.headers.get("Content-Length") or 0)
        raw_body = self.rfile.read(length) if length else b""

        fault = owner._take_fault()
        delay = owner.delay_s + (fault.seconds if fault is not None and fault.kind == "delay" else 0.0)
        if delay > 0 and owner._released.wait(delay):
            self.close_connection = True
            return
        if fault is not None and fault.kind == "refuse":
            self.close_connection = True
            return
        if fault is not None and fault.kind == "respond":
            entry.status = fault.status
            body = fault.body if fault.body is not None else {"error_code": fault.status * 100 + 1 if fault.status
                                                              in (401, 403) else fault.status,
                                                              "message": f"injected HTTP {fault.status}"}
            self._send(fault.status, body, fault.headers)
            return
        try:
            entry.principal = owner.authenticate(self.headers.get("Authorization"))
            if entry.principal is not None and entry.principal in owner.denied:
                raise RegistryHttpError(403, 40301, f"User {entry.principal} is denied operation on the "
                                                    f"schema registry")
            try:
                body = json.loads(raw_body) if raw_body else None
            except ValueError:
                raise RegistryHttpError(400, 400, "the request body is not JSON") from None
            status, payload = _route(owner.store, method, segments, query, body, split.query)
        except RegistryHttpError as exc:
            entry.status = exc.status
            extra = {"WWW-Authenticate": 'Basic realm="SchemaRegistry"'} if exc.status == 401 else None
            self._send(exc.status, {"error_code": exc.error_code, "message": exc.message}, extra)
            return
        entry.status = status
        self._send(status, payload)


def _page(items: list, query: dict) -> list:
    """``offset`` / ``limit`` pagination (a negative limit: no limit)."""
    try:
        offset, limit = max(int(query.get("offset", 0)), 0), int(query.get("limit", -1))
    except ValueError:
        raise RegistryHttpError(400, 400, "offset and limit are integers") from None
    return items[offset:] if limit < 0 else items[offset:offset + limit]


def _with_metadata(store: RegistryStore, subject: str, query_string: str, deleted: bool):
    """The latest version of ``subject`` whose metadata properties hold every ``key``/``value`` pair asked."""
    pairs = urllib.parse.parse_qs(query_string)
    wanted = dict(zip(pairs.get("key", []), pairs.get("value", [])))
    for entry in reversed(store.versions(subject, deleted=deleted)):
        properties = (store.schema(entry.schema_id).extra.get("metadata") or {}).get("properties") or {}
        if all(properties.get(k) == v for k, v in wanted.items()):
            return entry
    raise RegistryHttpError(404, 40403, f"Schema with metadata {wanted} not found under subject '{subject}'")


def _schema_response(stored: StoredSchema, query: dict, **extra) -> dict:
    return {**extra, "id": stored.schema_id, "guid": stored.guid, **stored.body(query.get("format"))}


def _version_response(store: RegistryStore, entry, query: dict) -> dict:
    stored = store.schema(entry.schema_id)
    return {"subject": entry.subject, "version": entry.version, **_schema_response(stored, query)}


def _route(store: RegistryStore, method: str, s: list[str], query: dict, body,
           raw_query: str = "") -> tuple[int, object]:
    """(status, payload) of one API call; raises RegistryHttpError for error answers."""
    deleted = _flag(query, "deleted")
    n = len(s)
    if n == 0:
        return 200, {}
    head = s[0]
    if head == "subjects":
        if n == 1 and method == "GET":
            return 200, _page(store.subject_names(query.get("subjectPrefix", ""), deleted=deleted,
                                                  deleted_only=_flag(query, "deletedOnly") or
                                                  _flag(query, "deleted_only")), query)
        subject = s[1]
        if n == 2 and method == "POST":
            entry = store.lookup(subject, body, deleted=deleted)
            return 200, _version_response(store, entry, query)
        if n == 2 and method == "DELETE":
            return 200, store.delete_subject(subject, permanent=_flag(query, "permanent"))
        if n == 3 and s[2] == "versions":
            if method == "GET":
                return 200, _page([e.version for e in store.versions(subject, deleted=deleted)], query)
            if method == "POST":
                return 200, {"id": store.register(subject, body).schema_id}
        if n == 3 and s[2] == "metadata" and method == "GET":
            return 200, _version_response(store, _with_metadata(store, subject, raw_query, deleted), query)
        if n >= 4 and s[2] == "versions":
            if method == "DELETE" and n == 4:
                return 200, store.delete_version(subject, s[3], permanent=_flag(query, "permanent"))
            if method == "GET":
                entry = store.version(subject, s[3], deleted=deleted)
                if n == 4:
                    return 200, _version_response(store, entry, query)
                if n == 5 and s[4] == "schema":
                    return 200, store.schema(entry.schema_id).body(query.get("format"))["schema"].encode("utf-8")
                if n == 5 and s[4] == "referencedby":
                    return 200, store.referenced_by(subject, s[3])
    elif head == "schemas":
        if n == 1 and method == "GET":
            names = store.subject_names(query.get("subjectPrefix", ""), deleted=deleted)
            out = []
            for name in names:
                entries = store.versions(name, deleted=deleted)
                for entry in (entries[-1:] if _flag(query, "latestOnly") else entries):
                    out.append(_version_response(store, entry, query))
            return 200, out
        if n == 2 and s[1] == "types" and method == "GET":
            return 200, list(SCHEMA_TYPES)
        if n >= 3 and s[1] in ("ids", "guids") and method == "GET":
            stored = store.schema(s[2]) if s[1] == "ids" else store.schema_by_guid(s[2])
            if n == 3:
                payload = stored.body(query.get("format"))
                if s[1] == "guids":
                    payload = {"id": stored.schema_id, **payload}
                if _flag(query, "fetchMaxId"):
                    payload["maxId"] = max(store.schemas)
                return 200, payload
            if n == 4 and s[3] == "schema":
                return 200, stored.body(query.get("format"))["schema"].encode("utf-8")
            if n == 4 and s[3] == "versions":
                return 200, _page([{"subject": e.subject, "version": e.version}
                                   for e in store.usages(stored.schema_id, deleted=deleted)], query)
            if n == 4 and s[3] == "subjects":
                return 200, _page(sorted({e.subject for e in store.usages(stored.schema_id, deleted=deleted)}), query)
    elif head in ("config", "mode") and n <= 2:
        subject = s[1] if n == 2 else None
        if head == "config":
            if method == "PUT":
                return 200, {"compatibility": store.set_compatibility(subject, body)}
            if method == "DELETE":
                with store.lock:
                    if subject is not None:
                        previous = store.subject_compatibility.pop(subject, store.compatibility)
                    else:
                        previous, store.compatibility = store.compatibility, "BACKWARD"
                return 200, {"compatibilityLevel": previous}
            if method == "GET":
                if subject is not None and subject not in store.subject_compatibility \
                        and not _flag(query, "defaultToGlobal"):
                    raise RegistryHttpError(404, 40408, f"Subject '{subject}' does not have subject-level "
                                                        f"compatibility configured")
                level = store.subject_compatibility.get(subject, store.compatibility) if subject else store.compatibility
                return 200, {"compatibilityLevel": level}
        else:
            if method == "PUT":
                return 200, {"mode": store.set_mode(subject, body)}
            if method == "GET":
                if subject is not None and subject not in store.subject_mode and not _flag(query, "defaultToGlobal"):
                    raise RegistryHttpError(404, 40409, f"Subject '{subject}' does not have subject-level mode "
                                                        f"configured")
                return 200, {"mode": store.effective_mode(subject) if subject else store.mode}
    elif head == "compatibility" and n >= 4 and s[1] == "subjects" and s[3] == "versions" and method == "POST":
        subject = s[2]
        parsed, _, _ = store.parse_request(body)
        try:
            entries = store.versions(subject)
        except RegistryHttpError:
            entries = []
        if n == 5:
            if not entries:
                raise subject_not_found(subject)
            entries = [store.version(subject, s[4])]
        level = store.effective_compatibility(subject)
        problems = incompatibilities(level if n == 4 else level.removesuffix("_TRANSITIVE"), parsed,
                                     [store.schema(e.schema_id).parsed for e in entries])
        answer = {"is_compatible": not problems}
        if _flag(query, "verbose"):
            answer["messages"] = problems
        return 200, answer
    elif head == "contexts" and method == "GET":
        return 200, ["."]
    raise RegistryHttpError(404, 404, f"HTTP 404 Not Found: {method} /{'/'.join(s)} is not served by the test "
                                      f"schema registry")
