"""SASL/GSSAPI (Kerberos V5, RFC 4752) as Kafka's brokers speak it.

1. The client establishes a GSS-API security context with the broker's service ``<sasl.kerberos.service.name>@<host>``
   (a host-based service name; the host is the one the connection was opened to, i.e. the broker's advertised host
   or the bootstrap server's), asking for mutual authentication: its first token carries the service ticket
   (AP-REQ), the broker answers with its proof (AP-REP), and an empty message follows once the context is complete.
2. The broker sends a wrapped 4-byte offer: a bit mask of the security layers it supports and its maximum buffer
   size. Kafka uses none (TLS protects the channel instead); the client answers, wrapped with integrity only,
   "no security layer" (1), a maximum size of 0 and no authorization id, as Java's SaslClient does for Kafka.

Credentials come from :mod:`spark_kwire.client.auth.kerberos` (keytab or ticket cache, renewed, one login per process);
each exchange, re-authentications included, asks the KDC for a fresh service ticket when the cached one is gone.
Calls that may wait on a KDC are bounded by ``request.timeout.ms``.
"""

from __future__ import annotations

from spark_kwire.client.auth.kerberos.binding import load_gssapi
from spark_kwire.client.auth.kerberos.bounded import KdcTimeout, within
from spark_kwire.client.auth.kerberos.errors import KerberosError, explain_gss_error, realm_of
from spark_kwire.client.auth.kerberos.login import KerberosLogin, keytab_note, shared_login
from spark_kwire.client.auth.kerberos.profile import describe_realm, default_realm
from spark_kwire.client.auth.sasl.mechanism import SaslMechanism, SaslMechanismError, SaslSession
from spark_kwire.client.errors import ConfigError
from spark_kwire.client.settings.logins import GssapiLogin, KerberosSettings
from spark_kwire.client.settings.secret import Secret

__all__ = ["GssapiMechanism", "NO_SECURITY_LAYER"]

NO_SECURITY_LAYER = 1  # RFC 4752 security-layer bit masks: 1 none, 2 integrity, 4 confidentiality


class _GssapiSession(SaslSession):
    """One exchange: context tokens until the context is complete, then the security-layer negotiation."""

    def __init__(self, gss, context, principal: str | None) -> None:
        self._gss = gss
        self._context = context
        self._state = "context" if not context.complete else "offer"
        self.principal = principal

    def challenge(self, data: bytes) -> tuple[bool, bytes | None]:
        from gssapi.exceptions import GSSError

        try:
            if self._state == "context":
                token = self._context.step(data)
                if self._context.complete:
                    self._state = "offer"
                return False, token or b""
            if self._state == "offer":
                return False, self._answer_offer(data)
            return True, None  # the broker's (empty) answer to the security-layer choice ends the exchange
        except GSSError as exc:
            text = " ".join(str(exc.gen_message()).split())
            raise SaslMechanismError(f"the broker's GSSAPI message does not verify ({text}): is the broker's keytab "
                                     f"for the service principal it is addressed as?") from None

    def _answer_offer(self, data: bytes) -> bytes:
        offer = self._context.unwrap(data).message
        if len(offer) != 4:
            raise SaslMechanismError(f"the broker's security-layer offer has {len(offer)} bytes, not 4")
        if not offer[0] & NO_SECURITY_LAYER:
            raise SaslMechanismError(f"the broker requires a SASL security layer (offer mask {offer[0]:#x}), which "
                                     f"Kafka does not use and spark-kwire does not implement")
        self._state = "final"
        choice = bytes([NO_SECURITY_LAYER, 0, 0, 0])  # no layer, max size 0 (RFC 4752: 0 without a layer), no authzid
        return self._context.wrap(choice, False).message


class GssapiMechanism(SaslMechanism):
    """SASL/GSSAPI with the credentials :class:`~spark_kwire.client.settings.logins.KerberosSettings` describe."""

    name = label = "GSSAPI"

    def __init__(self, settings: KerberosSettings, gssapi, bound_s: float) -> None:
        self.settings = settings
        self._gss = gssapi
        self._bound_s = bound_s

    @classmethod
    def from_login(cls, login: GssapiLogin, request_timeout_ms: int) -> "GssapiMechanism":
        """Checks what can be checked before connecting (the binding, the keytab's principals)."""
        settings = login.kerberos
        gssapi = load_gssapi()
        if settings.use_keytab and not settings.use_ticket_cache:
            note = keytab_note(settings, settings.principal)
            if note is not None:
                raise ConfigError("sasl.jaas.config", Secret(""), reason=f"{note}; useKeyTab=true needs a keytab with "
                                                                    f"the principal's key (klist -kt <keytab>)")
        return cls(settings, gssapi, request_timeout_ms / 1000.0)

    def login(self) -> KerberosLogin:
        """This process's login for these settings (shared with every client using them)."""
        return shared_login(self.settings, self._gss)

    @property
    def principal(self) -> str:
        return self.login().principal or self.settings.principal or "the ticket cache's principal"

    @property
    def who(self) -> str:
        return f"Kerberos principal {self.principal!r}"

    def service_principal(self, host: str) -> str:
        """The broker's principal as the KDC is asked for it (``kafka/host@REALM``), for messages."""
        realm = realm_of(self.login().principal or self.settings.principal) or default_realm()
        return f"{self.settings.service_name}/{host}" + (f"@{realm}" if realm else "")

    def begin(self, host: str) -> tuple[SaslSession, bytes]:
        from gssapi.exceptions import GSSError

        gss = self._gss
        login = self.login()
        creds = login.credentials(self._bound_s)
        target = gss.Name(f"{self.settings.service_name}@{host}", gss.NameType.hostbased_service)
        flags = gss.RequirementFlag.mutual_authentication | gss.RequirementFlag.integrity
        context = gss.SecurityContext(name=target, creds=creds, usage="initiate", flags=flags)
        service = self.service_principal(host)
        try:
            token = within(self._bound_s, context.step, "service ticket")
        except KdcTimeout:
            raise KerberosError(
                f"Kerberos service ticket request for {login.principal} failed: no answer from the KDC within "
                f"request.timeout.ms ({self._bound_s * 1000:.0f} ms); service principal {service}. "
                f"{_sentence(describe_realm(realm_of(login.principal)))}. Make sure the KDC is up and reachable.",
                kind="kdc_timeout", principal=login.principal, realm=realm_of(login.principal)) from None
        except GSSError as exc:
            raise explain_gss_error(exc, stage="service ticket request", principal=login.principal,
                                    source=self.settings.describe(with_principal=False), service=service) from None
        return _GssapiSession(gss, context, login.principal), token

    def __reduce__(self):  # the binding module does not pickle; clients rebuild mechanisms from their config
        raise TypeError("GssapiMechanism is rebuilt from the settings' GssapiLogin, not pickled")

    def __repr__(self) -> str:
        return f"GssapiMechanism(service={self.settings.service_name!r}, {self.settings.describe()})"


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]
