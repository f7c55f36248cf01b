"""What this host holds for its connections, checked once per run: the TLS files (``tls_files``) and the SASL login
(``sasl_login``: the user name, an OAuth token fresh from its source, or a Kerberos ticket from the keytab or
ticket cache found here).

These are the parts that differ between a driver and its executors: a truststore, keytab or token provider present
on one host and absent on another fails here, naming the option and the path, before any broker is asked. A login
is made afresh for the check (not taken from the process's caches), so it shows this host's state now.
"""

from __future__ import annotations

import datetime as _dt
import time

from spark_kwire.client.auth.kerberos.binding import load_gssapi
from spark_kwire.client.auth.kerberos.errors import KerberosError
from spark_kwire.client.auth.kerberos.login import KerberosLogin
from spark_kwire.client.auth.oauth import TokenError
from spark_kwire.client.auth.sasl.exchange import SaslAuthenticator
from spark_kwire.client.check.connection.sasl_probe import kerberos_kind, token_kind
from spark_kwire.client.check.connection.tls_probe import TlsMaterial, make_tls_material
from spark_kwire.client.check.context import CheckRun, StepTimeout, Stopwatch, bounded_call
from spark_kwire.client.check.rows import SASL_LOGIN, TLS_FILES
from spark_kwire.client.errors import ConfigError
from spark_kwire.client.settings.logins import GssapiLogin, OAuthBearerLogin

__all__ = ["HostCredentials", "THIS_HOST"]

THIS_HOST = "this host"


def _when(epoch: float) -> str:
    return _dt.datetime.fromtimestamp(epoch, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _login_failure_kind(exc: ConfigError) -> str:
    text = str(exc)
    if "holds no key for" in text:
        return "kerberos_no_key_in_keytab"
    return "sasl_login_missing"


class HostCredentials:
    """The run's TLS material and SASL authenticator, made (and reported) the first time a connection needs them."""

    def __init__(self, run: CheckRun) -> None:
        self.run = run
        self._tls: TlsMaterial | None = None
        self._authenticator: SaslAuthenticator | None = None
        self.tls_failed = False
        self.login_failed = False
        self._tls_done = self._login_done = False

    # -- TLS -------------------------------------------------------------------------------------------------
    def tls(self) -> TlsMaterial | None:
        """The TLS material, None when a file is missing here (reported once as a tls_files failure)."""
        if not self._tls_done:
            self._tls_done = True
            watch = Stopwatch()
            settings = self.run.settings.client.tls
            try:
                self._tls = make_tls_material(settings)
            except ConfigError as exc:
                self.tls_failed = True
                self.run.fail(TLS_FILES, THIS_HOST, str(exc), "tls_files", watch.ms)
            except OSError as exc:  # the client certificate file vanished between two reads
                self.tls_failed = True
                self.run.fail(TLS_FILES, THIS_HOST, f"cannot read the client certificate: {exc}", "tls_files",
                              watch.ms)
            else:
                self.run.ok(TLS_FILES, THIS_HOST, self._describe_files(self._tls), watch.ms)
        return self._tls

    @staticmethod
    def _describe_files(material: TlsMaterial) -> str:
        text = f"trusts {material.trust}"
        if material.client_certificate_option:
            subject = material.client_certificate.subject if material.client_certificate else "(unreadable)"
            text += f"; client certificate {subject} from {material.client_certificate_option}"
        return text

    # -- SASL ------------------------------------------------------------------------------------------------
    def authenticator(self) -> SaslAuthenticator | None:
        """The SASL authenticator, None when this host cannot log in (reported once as a sasl_login failure)."""
        if not self._login_done:
            self._login_done = True
            self._authenticator = self._login()
            self.login_failed = self._authenticator is None
        return self._authenticator

    def _login(self) -> SaslAuthenticator | None:
        run = self.run
        config = run.client_config()
        login = config.sasl
        watch = Stopwatch()
        try:
            authenticator = SaslAuthenticator(login, config.request_timeout_ms)
        except ConfigError as exc:
            run.fail(SASL_LOGIN, THIS_HOST, str(exc), _login_failure_kind(exc), watch.ms)
            return None
        mechanism = authenticator.mechanism_impl
        try:
            if isinstance(login, OAuthBearerLogin):
                detail = bounded_call(run.step_timeout_s(), lambda: self._token(mechanism), "token request")
            elif isinstance(login, GssapiLogin):
                detail = self._ticket(login, config.request_timeout_ms / 1000.0)
            else:
                detail = (f"{authenticator.mechanism} as user {login.username!r} (credentials from "
                          f"{login.source})")
        except TokenError as exc:
            run.fail(SASL_LOGIN, THIS_HOST, str(exc), token_kind(exc), watch.ms)
            return None
        except KerberosError as exc:
            run.fail(SASL_LOGIN, THIS_HOST, str(exc), kerberos_kind(exc), watch.ms)
            return None
        except ConfigError as exc:
            run.fail(SASL_LOGIN, THIS_HOST, str(exc), _login_failure_kind(exc), watch.ms)
            return None
        except StepTimeout as exc:
            run.fail(SASL_LOGIN, THIS_HOST, f"{mechanism.who}: {exc}", "oauth_token_failed", watch.ms)
            return None
        if isinstance(detail, tuple):  # (detail, failure kind): a token that is already expired
            run.fail(SASL_LOGIN, THIS_HOST, detail[0], detail[1], watch.ms)
            return None
        run.ok(SASL_LOGIN, THIS_HOST, detail, watch.ms)
        return authenticator

    @staticmethod
    def _token(mechanism) -> str | tuple[str, str]:
        source = mechanism.source
        token = source.fetch()  # a fresh one: the process's shared token could hide a broken provider
        left = token.remaining()
        text = (f"{mechanism.label} token from {source.description} for {token.principal!r}, expires "
                f"{_when(token.expires_at)}")
        if left <= 0:
            return f"{text}, {-left:.0f} s ago", "oauth_token_expired"
        return f"{text} (valid for {left:.0f} s)"

    @staticmethod
    def _ticket(login: GssapiLogin, bound_s: float) -> str:
        settings = login.kerberos
        fresh = KerberosLogin(settings, load_gssapi())  # not the process's shared login: this host, now
        fresh.credentials(bound_s)
        left = fresh.expires_at - time.time()
        return (f"Kerberos ticket of {fresh.principal} from {settings.describe(with_principal=False)}, valid for "
                f"{left:.0f} s (until {_when(fresh.expires_at)}); service name {settings.service_name!r}")
