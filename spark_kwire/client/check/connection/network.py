"""Step 1 of a connection: the host name resolves (every address), and each address accepts TCP.

Name resolution has no timeout of its own (``getaddrinfo`` waits on the system's resolver), so it runs in a helper
thread that the check stops waiting for after the step's timeout (:func:`~..context.bounded_call`). Each address is connected to on its own, with the
step's timeout, and closed again: the later steps open their own connections.
"""

from __future__ import annotations

import errno
import ipaddress
import socket

from spark_kwire.client.check.context import StepTimeout, bounded_call

__all__ = ["NetworkError", "resolve", "tcp_connect", "family_name"]


class NetworkError(Exception):
    """A name did not resolve or an address did not accept a connection; ``kind`` says which failure it was
    (``dns_unresolved``, ``dns_timeout``, ``tcp_refused``, ``tcp_timeout``, ``tcp_unreachable``)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
        return True
    except ValueError:
        return False


def resolve(host: str, port: int, timeout_s: float) -> list[str]:
    """The addresses ``host`` resolves to for TCP, in the order the resolver gives them (duplicates dropped)."""
    if _is_ip(host):
        return [host.strip("[]")]
    try:
        infos = bounded_call(timeout_s, lambda: socket.getaddrinfo(host, port, type=socket.SOCK_STREAM),
                             f"resolving {host}")
    except StepTimeout:
        raise NetworkError("dns_timeout", f"{host} did not resolve within {timeout_s:.1f} s (the resolver did not "
                                          f"answer)") from None
    except (socket.gaierror, UnicodeError, OSError) as exc:
        text = getattr(exc, "strerror", None) or str(exc)
        raise NetworkError("dns_unresolved", f"{host} does not resolve: {text}") from None
    addresses = list(dict.fromkeys(info[4][0] for info in infos or ()))
    if not addresses:
        raise NetworkError("dns_unresolved", f"{host} resolves to no address")
    return addresses


def family_name(address: str) -> str:
    return "IPv6" if ":" in address else "IPv4"


def tcp_connect(address: str, port: int, timeout_s: float) -> None:
    """Open a TCP connection to ``address`` (an IP) and close it; raises :class:`NetworkError`."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.settimeout(timeout_s)
    try:
        sock.connect((address, port))
    except socket.timeout:
        raise NetworkError("tcp_timeout", f"no answer to the connection attempt within {timeout_s:.1f} s") from None
    except OSError as exc:
        code = exc.errno
        text = exc.strerror or str(exc)
        if code == errno.ECONNREFUSED:
            raise NetworkError("tcp_refused", f"connection refused (nothing listens on port {port})") from None
        if code in (errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
            raise NetworkError("tcp_unreachable", f"no route: {text}") from None
        if code == errno.ETIMEDOUT:
            raise NetworkError("tcp_timeout", f"the connection attempt timed out: {text}") from None
        raise NetworkError("tcp_unreachable", f"cannot connect: {text}") from None
    finally:
        sock.close()
