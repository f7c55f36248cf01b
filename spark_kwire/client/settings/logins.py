"""The SASL part of the settings: one login per mechanism, a tagged union built once from the options.

* :class:`PlainLogin` (PLAIN) and :class:`ScramLogin` (SCRAM-SHA-256/512): a user name and its password;
* :class:`DelegationTokenLogin`: SCRAM as a delegation token (its id and HMAC, Kafka's ``tokenauth=true``);
* :class:`OAuthBearerLogin` (OAUTHBEARER, AWS_MSK_IAM): where tokens come from (:data:`TokenSourceSettings`: OIDC
  client credentials, a token file, a Python provider, AWS MSK IAM, Entra ID, an unsecured token), the SASL
  extensions and when tokens are refreshed (:class:`RefreshPolicy`);
* :class:`GssapiLogin` (GSSAPI): the Kerberos login (:class:`KerberosSettings`).

:mod:`.sasl_options` builds them; the mechanisms in :mod:`spark_kwire.client.auth` take them and never see an option.
Secrets stay :class:`~spark_kwire.client.settings.secret.Secret` until the mechanism sends them.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import re
from dataclasses import dataclass
from typing import ClassVar, Union

from spark_kwire.client.errors import ConfigError
from spark_kwire.client.settings.secret import Secret
from spark_kwire.client.settings.tls import TlsSettings

__all__ = ["PlainLogin", "ScramLogin", "DelegationTokenLogin", "OAuthBearerLogin", "GssapiLogin", "SaslLogin",
           "KerberosSettings", "RefreshPolicy", "OidcClientCredentials", "OidcTokenFile", "PythonTokenProvider",
           "AwsMskIam", "AzureEntra", "UnsecuredToken", "TokenSourceSettings", "check_extensions"]


# -- user name and password ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PlainLogin:
    username: str
    password: Secret
    source: str = "sasl.jaas.config"  # the option the credentials came from
    mechanism: ClassVar[str] = "PLAIN"


@dataclass(frozen=True)
class ScramLogin:
    mechanism: str  # SCRAM-SHA-256 or SCRAM-SHA-512
    username: str
    password: Secret
    source: str = "sasl.jaas.config"


@dataclass(frozen=True)
class DelegationTokenLogin(ScramLogin):
    """SCRAM with a delegation token: the token's id as ``username``, its HMAC (base64) as ``password``, and the SCRAM
    extension ``tokenauth=true``."""


# -- OAUTHBEARER -----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RefreshPolicy:
    """``sasl.login.refresh.window.factor`` / ``.window.jitter`` / ``.min.period.seconds`` / ``.buffer.seconds``."""
    window_factor: float = 0.8
    window_jitter: float = 0.05
    min_period_s: int = 60
    buffer_s: int = 300

    def refresh_at(self, token, now: float) -> float:
        """Epoch seconds at which ``token`` (an OAuthToken fetched at ``now``) should be replaced."""
        expires = token.expires_at
        if now >= expires:
            return now
        fraction = self.window_factor + self.window_jitter * random.random()
        if now + self.min_period_s + self.buffer_s > expires:
            return now + (expires - now) * fraction
        start = token.issued_at if token.issued_at is not None and token.issued_at <= now else now
        proposed = start + (expires - start) * fraction
        proposed = min(proposed, expires - self.buffer_s)
        return max(proposed, now + self.min_period_s)


@dataclass(frozen=True)
class OidcClientCredentials:
    """OAuth 2 client credentials (KIP-768) against ``endpoint`` (http or https)."""
    endpoint: str
    client_id: str
    client_secret: Secret
    scope: str | None
    tls: TlsSettings | None  # for an https endpoint (the system's CAs are trusted too)
    attempt_timeout_ms: int
    retry_backoff_ms: int = 100
    retry_backoff_max_ms: int = 10_000
    urlencode_header: bool = False
    principal_claim: str = "sub"


@dataclass(frozen=True)
class OidcTokenFile:
    """A token read from a file (``sasl.oauthbearer.token.endpoint.url=file:/path``), re-read at every refresh."""
    endpoint: str
    path: str
    principal_claim: str = "sub"


@dataclass(frozen=True)
class PythonTokenProvider:
    """A Python callable ``package.module:function`` given in ``option``, called with ``config`` (or "")."""
    reference: str
    option: str = "sasl.login.callback.handler.class"
    config: Secret | None = None  # sasl.oauthbearer.config


@dataclass(frozen=True)
class AwsMskIam:
    """AWS MSK IAM tokens; the region is ``region`` (kwire.aws.region), else one named by ``hosts``, else the
    process's AWS_REGION (read where the token is signed)."""
    region: str | None
    hosts: tuple[str, ...]
    profile: str | None = None  # awsProfileName
    role_arn: str | None = None  # awsRoleArn
    role_session_name: str | None = None  # awsRoleSessionName
    debug_credentials: bool = False  # awsDebugCreds


@dataclass(frozen=True)
class AzureEntra:
    """Microsoft Entra ID through azure-identity; the scope is ``scope``, else the Event Hubs namespace of ``hosts``."""
    scope: str | None
    hosts: tuple[str, ...]


@dataclass(frozen=True)
class UnsecuredToken:
    """An unsigned JWT for local development (Kafka's ``unsecuredLogin*`` JAAS options), claims as given."""
    claims: tuple[tuple[str, object], ...]  # name -> str, int/float, or tuple of str (a list claim)
    extensions: tuple[tuple[str, str], ...] = ()
    lifetime_s: int = 3600
    principal_claim: str = "sub"


TokenSourceSettings = Union[OidcClientCredentials, OidcTokenFile, PythonTokenProvider, AwsMskIam, AzureEntra,
                            UnsecuredToken]


@dataclass(frozen=True)
class OAuthBearerLogin:
    label: str  # as configured: OAUTHBEARER or AWS_MSK_IAM (which speaks OAUTHBEARER)
    token_source: TokenSourceSettings
    extensions: tuple[tuple[str, str], ...] = ()
    refresh: RefreshPolicy = RefreshPolicy()
    mechanism: ClassVar[str] = "OAUTHBEARER"


_EXTENSION_NAME = re.compile(r"[A-Za-z]+")
_EXTENSION_VALUE = re.compile(r"[\x21-\x7E \t\r\n]+")


def check_extensions(extensions: dict[str, str], where: str) -> dict[str, str]:
    """Check SASL extension names (letters only, not ``auth``) and values (printable ASCII), as RFC 7628 and Kafka
    require; ``where`` names their source in the error."""
    for name, value in extensions.items():
        if not _EXTENSION_NAME.fullmatch(name) or name == "auth":
            raise ConfigError(where, name, reason=f"SASL extension name {name!r} must be letters only and not 'auth'")
        if not _EXTENSION_VALUE.fullmatch(value):
            raise ConfigError(where, name, reason=f"the value of SASL extension {name!r} must be printable ASCII")
    return extensions


# -- GSSAPI ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class KerberosSettings:
    """Where a client's Kerberos credentials come from, and when they are renewed. Paths only, no key material.

    ``keytab`` is None with ``use_keytab`` for the default client keytab (``KRB5_CLIENT_KTNAME``);
    ``ticket_cache`` is None with ``use_ticket_cache`` for the default cache (``KRB5CCNAME``).
    """
    principal: str | None = None
    use_keytab: bool = False
    keytab: str | None = None
    use_ticket_cache: bool = True
    ticket_cache: str | None = None
    renew_ticket: bool = False
    service_name: str = "kafka"
    kinit_cmd: str = "/usr/bin/kinit"
    renew_window_factor: float = 0.8
    renew_jitter: float = 0.05
    min_time_before_relogin_ms: int = 60_000
    debug: bool = False
    source: str = "the process's default ticket cache (no sasl.jaas.config)"

    @property
    def cache_name(self) -> str | None:
        """The ticket cache as the Kerberos library names it (``FILE:/path``), None for the default one."""
        if self.ticket_cache is None:
            return None
        return self.ticket_cache if _has_cache_type(self.ticket_cache) else f"FILE:{self.ticket_cache}"

    def describe_cache(self) -> str:
        """``ticket cache FILE:/x`` or ``the default ticket cache (KRB5CCNAME's value)``, for messages."""
        if self.ticket_cache:
            return f"ticket cache {self.cache_name}"
        if os.environ.get("KRB5CCNAME"):
            return f"the default ticket cache ({os.environ['KRB5CCNAME']})"
        return "the default ticket cache"

    def describe_keytab(self) -> str:
        return f"keytab {self.keytab}" if self.keytab else "the default client keytab"

    def describe(self, with_principal: bool = True) -> str:
        """Where the credentials come from, for messages: ``keytab /k.keytab for alice@R``, ``ticket cache ...``."""
        who = f" for {self.principal}" if self.principal and with_principal else ""
        cache, keytab = self.describe_cache(), self.describe_keytab()
        if self.use_keytab and self.use_ticket_cache:
            return f"{cache}, else {keytab}{who}"
        return f"{keytab}{who}" if self.use_keytab else f"{cache}{who}"

    def __reduce__(self):  # what the JAAS line said (keytab, principal...) travels masked, as the line did
        return (_kerberos_settings, (Secret(json.dumps(dataclasses.asdict(self))),))


def _kerberos_settings(masked: Secret) -> KerberosSettings:
    return KerberosSettings(**json.loads(masked.reveal()))


def _has_cache_type(name: str) -> bool:
    head, sep, _ = name.partition(":")
    return bool(sep) and head.isalpha() and head.isupper() and len(head) > 1


@dataclass(frozen=True)
class GssapiLogin:
    kerberos: KerberosSettings = KerberosSettings()
    mechanism: ClassVar[str] = "GSSAPI"


SaslLogin = Union[PlainLogin, ScramLogin, DelegationTokenLogin, OAuthBearerLogin, GssapiLogin]
