"""Kerberos for SASL/GSSAPI: where a client's credentials come from, and keeping them valid.

* :mod:`.settings` reads the options as Kafka's Java client does (``sasl.jaas.config`` with ``Krb5LoginModule``,
  ``sasl.kerberos.*``; no JAAS line: the process's ticket cache);
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
from spark_kwire.client.auth.kerberos.settings import KerberosSettings, kerberos_settings

__all__ = ["KerberosError", "KerberosSettings", "kerberos_settings"]
