"""Kerberos failures, explained: :class:`KerberosError` names the principal, the realm and its KDCs, where the
credentials came from, and what to check. GSS-API's own messages (``No credentials cache found`` for a keytab
that lacks the principal...) are kept as the cause, after kwire's reading of them.
"""

from __future__ import annotations

import re

from spark_kwire.client.auth.kerberos.profile import describe_realm
from spark_kwire.client.auth.errors import AuthenticationError

__all__ = ["KerberosError", "explain_gss_error", "TICKET_EXPIRED_ADVICE"]

# MIT krb5 error codes (krb5.h), as GSS-API's minor status carries them
KDC_UNREACHABLE = -1765328228
CLIENT_UNKNOWN = -1765328378
SERVER_UNKNOWN = -1765328377
CLIENT_REVOKED = -1765328366
KEY_EXPIRED = -1765328361
PREAUTH_FAILED = -1765328360
BAD_INTEGRITY = -1765328353
TICKET_EXPIRED = -1765328352
TICKET_NOT_YET_VALID = -1765328351
CLOCK_SKEW = -1765328347
CACHE_NOT_FOUND = -1765328243
CACHE_NO_FILE = -1765328189
REALM_UNKNOWN = -1765328230
REALM_CANT_RESOLVE = -1765328164
NO_DEFAULT_REALM = -1765328160
KEYTAB_ENTRY_NOT_FOUND = -1765328203
KEYTAB_KVNO_NOT_FOUND = -1765328154
CACHE_OTHER_PRINCIPAL = 39756032  # MIT's KG_CCACHE_NOMATCH: the cache holds another principal's ticket
TICKET_EXPIRED_ADVICE = ("renew the ticket cache (kinit, k5start, or renewTGT=true with a renewable ticket) or log in "
                         "from a keytab (useKeyTab=true), whose tickets spark-kwire renews itself")
# GSS-API major status values (RFC 2744)
GSS_S_CREDENTIALS_EXPIRED = 11 << 16


class KerberosError(AuthenticationError):
    """A Kerberos login or service-ticket request failed. Not retriable; never contains key material.

    ``kind`` says which failure it was: ``no_key_in_keytab``, ``wrong_key``, ``unknown_principal``,
    ``kdc_unreachable``, ``kdc_timeout``, ``clock_skew``, ``unknown_service``, ``no_ticket``, ``ticket_expired``,
    ``no_realm``, ``kinit_failed`` or ``other``. ``principal`` is the client principal (when known).
    """

    def __init__(self, message: str, *, kind: str, principal: str | None = None, realm: str | None = None,
                 broker: str | None = None) -> None:
        self.kind = kind
        self.principal = principal
        self.realm = realm
        super().__init__(message, mechanism="GSSAPI", broker=broker)


def _signed(code: int | None) -> int | None:
    if code is None:
        return None
    code = int(code) & 0xFFFFFFFF
    return code - (1 << 32) if code & 0x80000000 else code


def _minor_text(exc: BaseException) -> str:
    """What Kerberos said (GSS-API's minor status text, which names the cause; the major one is generic)."""
    try:
        text = exc.gen_message()  # gssapi.exceptions.GSSError
    except Exception:
        text = str(exc)
    text = " ".join(str(text).split())
    match = re.search(r"Minor \(\d+\): (.+)$", text)
    return match.group(1) if match and match.group(1).strip() else text


def realm_of(principal: str | None) -> str | None:
    return principal.rsplit("@", 1)[1] if principal and "@" in principal else None


def explain_gss_error(exc: BaseException, *, stage: str, principal: str | None, source: str,
                      service: str | None = None, keytab_note: str | None = None) -> KerberosError:
    """A :class:`KerberosError` for a ``gssapi`` failure during `stage` (``login`` or ``service ticket``).

    `source` says where credentials came from (``keytab /k for alice@R``); `service` is the broker's service
    principal for service-ticket requests; `keytab_note` what the keytab holds when that explains the failure.
    """
    minor = _signed(getattr(exc, "min_code", None))
    major = getattr(exc, "maj_code", None)
    said = _minor_text(exc)
    lowered = said.lower()
    realm = realm_of(principal) or realm_of(service)
    where = describe_realm(realm)
    who = principal or "the ticket cache's principal"
    if keytab_note:
        kind, cause, todo = "no_key_in_keytab", keytab_note, \
            "export the keytab for this principal (klist -kt <keytab> lists what it holds) and make principal= name it"
    elif minor == KDC_UNREACHABLE or "cannot contact any kdc" in lowered:
        kind, cause, todo = "kdc_unreachable", "no KDC of the realm answered", \
            "make sure a KDC runs at the address above and that this host may reach it (firewall, port, UDP/TCP)"
    elif minor == CLIENT_UNKNOWN or "not found in kerberos database" in lowered and stage == "login":
        kind, cause, todo = "unknown_principal", f"the KDC does not know the principal {who}", \
            "check the principal's spelling and realm (principal=\"name@REALM\") and that it exists in the KDC"
    elif minor == SERVER_UNKNOWN or "not found in kerberos database" in lowered:
        kind, cause, todo = "unknown_service", f"the KDC has no service principal {service}", \
            ("make the broker's advertised host name the host in its Kerberos principal (clients use the host they "
             "connect to, from bootstrap.servers and the brokers' advertised.listeners, without DNS "
             "canonicalization when the krb5 config sets dns_canonicalize_hostname=false), and check "
             "sasl.kerberos.service.name (the principal's first part)")
    elif minor in (BAD_INTEGRITY, PREAUTH_FAILED) or "integrity check failed" in lowered or \
            "preauthentication failed" in lowered:
        kind, cause, todo = "wrong_key", "the KDC refused the key (the keytab's key is not the principal's current " \
            "one)", "export a new keytab: the principal's key changed after this one was exported (compare the key " \
            "version numbers of klist -kt <keytab> and kadmin getprinc)"
    elif minor == CLOCK_SKEW or "clock skew" in lowered:
        kind, cause, todo = "clock_skew", "the clocks of this host and the KDC (or broker) differ by more than the " \
            "allowed skew", "synchronise the clocks of this host, the KDC and the brokers (NTP), or raise clockskew " \
            "in the krb5 config"
    elif minor == TICKET_EXPIRED or major == GSS_S_CREDENTIALS_EXPIRED or "expired" in lowered:
        kind, cause, todo = "ticket_expired", "the ticket has expired", TICKET_EXPIRED_ADVICE
    elif minor in (CACHE_NO_FILE, CACHE_NOT_FOUND) or "no credentials cache found" in lowered or \
            "can't find client principal" in lowered or "matching credential not found" in lowered or \
            minor == CACHE_OTHER_PRINCIPAL or "does not match desired name" in lowered:
        kind, cause, todo = "no_ticket", "the ticket cache holds no ticket" + (f" for {principal}" if principal else ""), \
            ("run kinit for the principal, or point ticketCache / KRB5CCNAME at the cache that holds its ticket, or "
             "log in from a keytab (useKeyTab=true keyTab=... principal=...)")
    elif minor in (REALM_UNKNOWN, REALM_CANT_RESOLVE, NO_DEFAULT_REALM):
        kind, cause, todo = "no_realm", "the krb5 config does not say where the realm's KDCs are", \
            "set the realm's KDCs in the [realms] section (kdc = host:port) and default_realm of the krb5 config"
    else:
        kind, cause, todo = "other", "Kerberos refused", "look for the principal in the KDC's log"
    message = (f"Kerberos {stage} for {who} from {source} failed: {cause} (Kerberos: {said}). "
               f"{where[0].upper()}{where[1:]}"
               + (f"; service principal {service}" if service else "") + f". {todo[0].upper()}{todo[1:]}.")
    return KerberosError(message, kind=kind, principal=principal, realm=realm)
