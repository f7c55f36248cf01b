"""Microsoft Entra ID tokens for Azure Event Hubs' Kafka endpoint, through ``azure-identity`` (``spark-kwire[azure]``).

``sasl.oauthbearer.method=azure`` asks ``DefaultAzureCredential`` (environment variables ``AZURE_CLIENT_ID`` /
``AZURE_TENANT_ID`` / ``AZURE_CLIENT_SECRET`` or a federated token file, workload or managed identity, the Azure
CLI...) for a token of scope ``https://<namespace>.servicebus.windows.net/.default``; the namespace comes from the
bootstrap servers (``<namespace>.servicebus.windows.net:9093``) unless ``sasl.oauthbearer.scope`` names the scope.
With ``AZURE_AUTHORITY_HOST`` pointing at an authority other than Microsoft's public, China or US Government
clouds (Azure Stack, a private cloud), instance discovery is turned off, as azure-identity requires there.
A service principal's secret can also be given the Java way (an OIDC client-credentials login against
``https://login.microsoftonline.com/<tenant>/oauth2/v2.0/token``), which needs no extra package.
"""

from __future__ import annotations

import os
import re
import threading
import urllib.parse
from typing import Sequence

from spark_kwire.client.errors import ConfigError
from spark_kwire.client.auth.oauth import TokenError, TokenSource
from spark_kwire.client.auth.oauth.provider import CallableTokenSource

__all__ = ["entra_token_source", "event_hubs_scope"]

_EVENT_HUBS_HOST = re.compile(r"^([a-z0-9][a-z0-9-]*)\.servicebus\.(windows\.net|chinacloudapi\.cn|usgovcloudapi\.net)$")
_KNOWN_AUTHORITIES = ("login.microsoftonline.com", "login.chinacloudapi.cn", "login.microsoftonline.us",
                      "login.partner.microsoftonline.cn")
_credential = None
_credential_lock = threading.Lock()


def event_hubs_scope(hosts: Sequence[str]) -> str | None:
    """``https://<namespace>.servicebus.windows.net/.default`` from an Event Hubs bootstrap host, if any."""
    for host in hosts:
        match = _EVENT_HUBS_HOST.match(host.lower())
        if match:
            return f"https://{match.group(1)}.servicebus.{match.group(2)}/.default"
    return None


def _default_credential():
    """One ``DefaultAzureCredential`` per process (it caches tokens and managed-identity lookups)."""
    global _credential
    with _credential_lock:
        if _credential is None:
            try:
                from azure.identity import DefaultAzureCredential
            except ImportError:
                raise TokenError("Microsoft Entra ID tokens need the package azure-identity: "
                                 "pip install 'spark-kwire[azure]' (on the driver and the executors)",
                                 source="azure-identity") from None
            authority = urllib.parse.urlsplit(os.environ.get("AZURE_AUTHORITY_HOST") or "").hostname
            private = authority is not None and authority.lower() not in _KNOWN_AUTHORITIES
            _credential = DefaultAzureCredential(exclude_interactive_browser_credential=True,
                                                 **({"disable_instance_discovery": True} if private else {}))
        return _credential


def entra_token_source(scope: str | None, hosts: Sequence[str]) -> TokenSource:
    """A :class:`TokenSource` asking azure-identity for Event Hubs tokens; raises :class:`ConfigError` without scope."""
    scope = (scope or "").strip() or event_hubs_scope(hosts)
    if not scope:
        raise ConfigError("sasl.oauthbearer.scope", None,
                          reason="Entra tokens need a scope: use the Event Hubs host (<namespace>.servicebus."
                                 "windows.net:9093) in bootstrap.servers or set sasl.oauthbearer.scope="
                                 "https://<namespace>.servicebus.windows.net/.default")

    def get_token() -> tuple[str, float]:
        credential = _default_credential()
        try:
            access = credential.get_token(scope)
        except Exception as exc:  # azure.identity.CredentialUnavailableError, ClientAuthenticationError...
            text = " ".join(str(exc).split())[:600]
            raise TokenError(f"Microsoft Entra ID: DefaultAzureCredential could not get a token for {scope}: "
                             f"{type(exc).__name__}: {text}", source="azure-identity") from None
        return access.token, float(access.expires_on)

    return CallableTokenSource(f"azure:{scope}", option="sasl.oauthbearer.method", label=f"Entra ID token for {scope}",
                               func=get_token)


def reset_credential() -> None:
    """Forget this process's credential (tests, or after changing AZURE_* variables)."""
    global _credential
    with _credential_lock:
        _credential = None
