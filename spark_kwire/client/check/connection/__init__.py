"""Steps 1 to 4 of a check for one broker address (a bootstrap server, or a broker as Metadata advertises it).

:mod:`.steps` runs them in order: :mod:`.network` (resolve, TCP), :mod:`.tls_probe` and :mod:`.tls_rows` (the
handshake, the certificate read by :mod:`.x509`, the host name, the client certificate), :mod:`.sasl_probe` (the
offered mechanisms, the authentication) and :mod:`.versions` (ApiVersions); :mod:`.credentials` checks once per run
what this host holds for them (the TLS files, the SASL login).
"""
