"""HTTP to the schema registry: failover across its URLs, retries with backoff, a deadline on every call, and the
registry's error answers turned into exceptions.

A call tries the URLs in order, starting with the one that answered last in this process; a connection that is
refused, closed or silent for ``timeout`` seconds, and answers 408, 429 and 5xx, move on to the next URL at once.
After a round over every URL fails, the call waits (full-jitter exponential backoff from ``retries.wait.ms`` up
to ``retries.max.wait.ms``, at least what a ``Retry-After`` header asks) and starts another, ``max.retries`` times
at most and never past ``total.timeout.ms``. Other answers (400, 401, 403, 404, 409, 422...) are final.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import random
import socket
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from spark_kwire._version import __version__
from spark_kwire.client.registry.config import RegistryConfig
from spark_kwire.client.registry.credentials import Credentials, registry_ssl_context
from spark_kwire.client.registry.errors import (IncompatibleSchemaError, InvalidSchemaError, RegistryAuthError,
                                                 RegistryError, RegistryNotFoundError, RegistryTlsError,
                                                 RegistryUnreachableError, SchemaNotFoundError, SubjectNotFoundError,
                                                 VersionNotFoundError)

__all__ = ["RegistryTransport", "RETRIABLE_STATUS"]

log = logging.getLogger(__name__)

RETRIABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})
_ACCEPT = "application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json, application/json"
_CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
_MAX_ANSWER = 64 * 1024 * 1024

# base URLs -> index of the URL that answered last, per process (a dead first URL is not retried by every call)
_preferred: dict[tuple[str, ...], int] = {}
_preferred_lock = threading.Lock()


def _after_fork_in_child() -> None:
    global _preferred_lock
    _preferred_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class _NoAnswer(Exception):
    """One attempt got no HTTP answer (retriable)."""


class RegistryTransport:
    """Sends one API call at a time (thread-safe); see the module docstring."""

    def __init__(self, config: RegistryConfig, credentials: Credentials) -> None:
        self.config = config
        self.credentials = credentials
        handlers = []
        if any(url.startswith("https:") for url in config.urls):
            handlers.append(urllib.request.HTTPSHandler(context=registry_ssl_context(config)))
        self._opener = urllib.request.build_opener(*handlers)

    def call(self, method: str, path: str, *, query: dict | None = None, body: Any = None,
             context: dict | None = None) -> Any:
        """The decoded answer of ``method path`` (JSON, or text for non-JSON answers). ``context`` names what
        was asked (subject, version, schema_id) for the error messages."""
        config = self.config
        started = time.monotonic()
        deadline = started + config.total_timeout_ms / 1000.0
        data = json.dumps(body).encode("utf-8") if body is not None else None
        suffix = "?" + urllib.parse.urlencode(query) if query else ""
        with _preferred_lock:
            first = _preferred.get(config.urls, 0)
        order = [(first + i) % len(config.urls) for i in range(len(config.urls))]
        attempts: list[tuple[str, str]] = []
        last_status = last_code = None
        retry_after = 0.0
        for round_number in range(config.max_retries + 1):
            for index in order:
                base = config.urls[index]
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                try:
                    status, headers, raw = self._attempt(method, base + path + suffix, data, index,
                                                         min(config.timeout_s, remaining))
                except _NoAnswer as exc:
                    attempts.append((base, str(exc)))
                    continue
                if 200 <= status < 300:
                    if index != first:
                        with _preferred_lock:
                            _preferred[config.urls] = index
                    return _decode(raw)
                answer = _error_body(raw)
                if status not in RETRIABLE_STATUS:
                    raise _error(status, answer, base, method, path, self.credentials, context or {})
                last_status, last_code = status, answer.get("error_code")
                attempts.append((base, f"HTTP {status}: {answer.get('message')}"))
                retry_after = max(retry_after, _retry_after(headers))
            remaining = deadline - time.monotonic()
            if round_number == config.max_retries or remaining <= 0:
                break
            backoff = random.random() * min(config.retries_wait_ms * 2 ** round_number, config.retries_max_wait_ms)
            pause = min(max(backoff / 1000.0, retry_after), remaining)
            retry_after = 0.0
            log.debug("schema registry %s %s: round %d failed (%s), retrying in %.2f s", method, path,
                      round_number + 1, attempts[-1][1] if attempts else "?", pause)
            time.sleep(pause)
        elapsed = time.monotonic() - started
        tried = "; ".join(f"{url}: {what}" for url, what in attempts) or "no attempt fitted the time budget"
        last = attempts[-1][1] if attempts else "none"
        raise RegistryUnreachableError(
            f"the schema registry did not answer {method} {path}: {len(attempts)} attempt(s) over {elapsed:.1f} s "
            f"(max.retries={config.max_retries}, timeout={config.timeout_s:g} s, "
            f"total.timeout.ms={config.total_timeout_ms}); tried {tried}; last error: {last}",
            attempts=attempts, status=last_status, error_code=last_code)

    def _attempt(self, method: str, url: str, data: bytes | None, index: int, timeout: float):
        headers = {"Accept": _ACCEPT, "User-Agent": f"spark-kwire/{__version__}"}
        if data is not None:
            headers["Content-Type"] = _CONTENT_TYPE
        headers.update(self.credentials.headers(index))
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with self._opener.open(request, timeout=timeout) as answer:
                return answer.status, answer.headers, _read(answer)
        except urllib.error.HTTPError as exc:
            with exc:
                return exc.code, exc.headers, _read(exc)
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, ssl.SSLCertVerificationError):
                if reason.verify_code in (62, 64):  # host name / IP address mismatch
                    advice = (f"the certificate must name {urllib.parse.urlsplit(url).hostname!r} in its "
                              f"subjectAltName; ssl.endpoint.identification.algorithm= (empty) turns the host-name "
                              f"check off")
                else:
                    advice = "set ssl.ca.location to the CA that signed the registry's certificate"
                raise RegistryTlsError(f"TLS handshake with the schema registry at {_base(url)} failed: "
                                       f"{reason.verify_message or reason}; {advice}", url=_base(url)) from None
            if isinstance(reason, ssl.SSLError) and not isinstance(reason, (ssl.SSLEOFError, ssl.SSLZeroReturnError)):
                raise RegistryTlsError(f"TLS with the schema registry at {_base(url)} failed: "
                                       f"{reason.reason or reason}", url=_base(url)) from None
            if isinstance(reason, (socket.timeout, TimeoutError)):
                raise _NoAnswer(f"no answer within {timeout:.1f} s") from None
            if isinstance(reason, ssl.SSLError):
                raise _NoAnswer(f"the connection closed during the TLS handshake ({reason.__class__.__name__}; "
                                f"if it keeps happening, does the registry require a client certificate? set "
                                f"ssl.certificate.location and ssl.key.location)") from None
            raise _NoAnswer(getattr(reason, "strerror", None) or str(reason)) from None
        except (socket.timeout, TimeoutError):
            raise _NoAnswer(f"no answer within {timeout:.1f} s") from None
        except ssl.SSLError as exc:
            if isinstance(exc, (ssl.SSLEOFError, ssl.SSLZeroReturnError)):
                raise _NoAnswer(f"the TLS connection closed ({exc.__class__.__name__}; if it keeps happening, does "
                                f"the registry require a client certificate? set ssl.certificate.location and "
                                f"ssl.key.location)") from None
            raise RegistryTlsError(f"TLS with the schema registry at {_base(url)} failed: {exc.reason or exc} (does "
                                   f"it require a client certificate? set ssl.certificate.location and "
                                   f"ssl.key.location)", url=_base(url)) from None
        except (http.client.HTTPException, ConnectionError, OSError) as exc:
            raise _NoAnswer(f"the connection broke: {exc.__class__.__name__} {exc}".strip()) from None


def _base(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, "", "", ""))


def _read(answer) -> bytes:
    raw = answer.read(_MAX_ANSWER + 1)
    if len(raw) > _MAX_ANSWER:
        raise _NoAnswer("the answer is larger than 64 MiB")
    return raw


def _decode(raw: bytes) -> Any:
    if not raw:
        return None
    text = raw.decode("utf-8", "replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


def _error_body(raw: bytes) -> dict:
    decoded = _decode(raw)
    if isinstance(decoded, dict) and ("message" in decoded or "error_code" in decoded):
        return decoded
    snippet = " ".join(str(decoded or "").split())[:200]
    return {"error_code": None, "message": snippet or "(no message)"}


def _retry_after(headers) -> float:
    try:
        return min(float(headers.get("Retry-After", "0")), 60.0)
    except (TypeError, ValueError, AttributeError):
        return 0.0


def _error(status: int, answer: dict, base: str, method: str, path: str, credentials: Credentials,
           context: dict) -> RegistryError:
    code = answer.get("error_code")
    message = answer.get("message")
    where = f"the schema registry at {base}"
    said = f"(HTTP {status}, error {code}: {message})"
    common = {"status": status, "error_code": code, "url": base}
    subject, version, schema_id = context.get("subject"), context.get("version"), context.get("schema_id")
    if status in (401, 403):
        what = "refused the credentials" if status == 401 else "denied the operation to the principal"
        return RegistryAuthError(f"{where} {what} for {method} {path} {said}; credentials: {credentials.describe()}",
                                 **common)
    if code == 40401 or (status == 404 and code in (40404,)):
        return SubjectNotFoundError(f"subject {subject!r} not found in {where} {said}", subject=subject, **common)
    if code == 40402:
        return VersionNotFoundError(f"version {version} of subject {subject!r} not found in {where} {said}",
                                    subject=subject, version=version, **common)
    if code == 40403:
        what = f"schema id {schema_id}" if schema_id is not None else f"the schema under subject {subject!r}"
        return SchemaNotFoundError(f"{what} not found in {where} {said}", schema_id=schema_id, subject=subject,
                                   **common)
    if status == 404:
        return RegistryNotFoundError(f"{where} has nothing at {method} {path} {said}", **common)
    if status == 409:
        return IncompatibleSchemaError(f"{where} refused the schema for subject {subject!r} as incompatible {said}",
                                       **common)
    if status == 422 and code in (42201, 42202):
        kind = "schema" if code == 42201 else "version"
        return InvalidSchemaError(f"{where} refused an invalid {kind} for {method} {path} {said}", **common)
    return RegistryError(f"{where} answered {method} {path} with an error {said}", **common)
