"""How a connection proves who it is and keeps its bytes private: TLS and SASL, and where credentials come from.

Owns: :mod:`.security` (the two hooks a connection calls: wrap the socket in TLS, run the SASL exchange),
:mod:`.tls` (SSL contexts from PEM files and Kafka's ``ssl.*`` options), :mod:`.jaas` (Kafka's
``sasl.jaas.config`` syntax), :mod:`.sasl` (one module per SASL mechanism behind a small interface, and the
SaslHandshake/SaslAuthenticate exchange) and :mod:`.oauth` (OAUTHBEARER token sources and their refresh).
Kerberos lives here too: the GSSAPI mechanism in ``sasl/`` and the Kerberos login (keytab, ticket cache,
renewal) in ``kerberos/``.

May import: the protocol layer and the client's ground (``client.config``, ``client.errors``, ``client.retry``).
Never the cluster client (``client.core``) or a role: the connection calls into auth, not the other way.
"""
