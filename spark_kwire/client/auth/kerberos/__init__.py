"""Kerberos for SASL/GSSAPI: where a client's credentials come from, and keeping them valid.

* :class:`~spark_kwire.client.settings.logins.KerberosSettings` (built from the options by the settings, as Kafka's
  Java client reads ``sasl.jaas.config`` with ``Krb5LoginModule`` and ``sasl.kerberos.*``) says where credentials
  come from;
* :mod:`.login` logs in from a keytab or a ticket cache through the ``gssapi`` binding
  (``gss_acquire_cred_from``), renews, and keeps one login per process;
* :mod:`.binding` imports ``gssapi`` lazily (extra ``spark-kwire[kerberos]``) and says what to install;
* :mod:`.errors` explains Kerberos failures (:class:`KerberosError`), with :mod:`.profile` (the realm's KDCs from
  the krb5 config) and :mod:`.keytab` (which principals a keytab holds keys for);
* :mod:`.bounded` bounds calls that wait on a KDC.

The SASL exchange itself (RFC 4752) is :mod:`spark_kwire.client.auth.sasl.gssapi`.
"""

from __future__ import annotations

from spark_kwire.client.auth.kerberos.errors import KerberosError
from spark_kwire.client.settings.logins import KerberosSettings

__all__ = ["KerberosError", "KerberosSettings"]
