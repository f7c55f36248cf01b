"""The client's settings: the Kafka client options a user gives, parsed once into one immutable, typed value.

Owns: the value and its parts (:mod:`.config`: ``ClientConfig`` with its connection, retry, fetch and produce parts;
:mod:`.tls`: the TLS part; :mod:`.logins`: the SASL login of each mechanism, a tagged union), secrets
(:mod:`.secret`), and the parsers of raw options: the names and what each does (:mod:`.names`), the kinds of values
(:mod:`.values`), reading the options in two steps (:mod:`.parse`), the JAAS line (:mod:`.jaas`) and the builders of
the TLS part and of each login (:mod:`.tls_options`, :mod:`.sasl_options`, :mod:`.oauth_options`,
:mod:`.kerberos_options`).

May import: ``client.errors`` only; it is part of the client's ground, under every role. The roles (``auth`` above
all) take the typed parts and never read an option: the architecture test checks that ``client.auth`` imports none
of the parsers.
"""
