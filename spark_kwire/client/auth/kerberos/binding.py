"""The ``gssapi`` binding (PyPI ``gssapi``, over MIT or Heimdal's GSS-API library), imported on first use.

It is an optional dependency (``pip install 'spark-kwire[kerberos]'``); when it or the system's Kerberos library
is missing, building a client with ``sasl.mechanism=GSSAPI`` fails with a :class:`ConfigError` saying what to
install, before any connection is opened.
"""

from __future__ import annotations

from spark_kwire.client.errors import ConfigError

__all__ = ["load_gssapi"]

_INSTALL = ("pip install 'spark-kwire[kerberos]' (gssapi compiles against the system's Kerberos headers: "
            "Debian/Ubuntu apt-get install libkrb5-dev gcc, RHEL/Fedora dnf install krb5-devel gcc)")
_LIBRARY = ("the system's Kerberos GSS-API library (Debian/Ubuntu: apt-get install libgssapi-krb5-2 krb5-user, "
            "RHEL/Fedora: dnf install krb5-libs krb5-workstation)")


def load_gssapi():
    """The ``gssapi`` module; :class:`ConfigError` naming the pip extra and the system packages when missing."""
    try:
        import gssapi
        import gssapi.raw  # noqa: F401  (loads the C library)
    except ImportError as exc:
        text = str(exc)
        if "shared object" in text or ".so" in text:
            reason = f"Kerberos needs {_LIBRARY}, which the gssapi package could not load: {text}"
        else:
            reason = f"Kerberos needs the gssapi package, which is not installed: {_INSTALL}"
        raise ConfigError("sasl.mechanism", "GSSAPI", reason=reason) from None
    except OSError as exc:  # the shared library is missing or broken
        raise ConfigError("sasl.mechanism", "GSSAPI",
                          reason=f"Kerberos needs {_LIBRARY}, which could not be loaded: {exc}") from None
    return gssapi
