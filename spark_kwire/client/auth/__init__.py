"""How a connection proves who it is and keeps its bytes private: TLS and SASL, and where credentials come from.

Owns: :mod:`.security` (the two hooks a connection calls: wrap the socket in TLS, run the SASL exchange),
:mod:`.tls` (SSL contexts from the TLS settings and PEM files), :mod:`.sasl` (one module per SASL mechanism behind
a small interface, and the SaslHandshake/SaslAuthenticate exchange) and :mod:`.oauth` (OAUTHBEARER token sources
and their refresh). Kerberos lives here too: the GSSAPI mechanism in ``sasl/`` and the Kerberos login (keytab,
ticket cache, renewal) in ``kerberos/``. Each takes its typed part of the settings (``config.tls``, the login in
``config.sasl``); none reads an option.

May import: the protocol layer and the client's ground (the typed settings of ``client.settings``: ``config``,
``tls``, ``logins``, ``secret``; ``client.errors``, ``client.retry``), never the settings' parsers of raw options.
Never the cluster client (``client.core``) or a role: the connection calls into auth, not the other way.
"""
