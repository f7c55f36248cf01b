"""The Kerberos options of a client, read as Kafka's Java client reads them.

* ``sasl.jaas.config`` with ``com.sun.security.auth.module.Krb5LoginModule`` (any ``kafkashaded.`` prefix) and its
  options ``useKeyTab``, ``keyTab``, ``principal``, ``useTicketCache``, ``ticketCache``, ``renewTGT`` (also spelt
  ``renewTicket``), ``storeKey``, ``doNotPrompt``, ``isInitiator``, ``refreshKrb5Config``, ``debug`` and Kafka's
  ``serviceName``; or IBM's ``com.ibm.security.auth.module.Krb5LoginModule`` with ``useKeytab``, ``useCcache``,
  ``useDefaultKeytab``, ``useDefaultCcache``, ``principal``, ``credsType``, ``renewTGT``.
* no ``sasl.jaas.config``: the process's ticket cache (``KRB5CCNAME``, else the system's default), as left by
  ``kinit`` or a ticket-keeping daemon.
* ``sasl.kerberos.service.name`` (default ``kafka``), ``sasl.kerberos.kinit.cmd`` (default ``/usr/bin/kinit``, run
  as ``kinit -R`` to renew a ticket cache when ``renewTGT=true``), ``sasl.kerberos.ticket.renew.window.factor``
  (0.8), ``sasl.kerberos.ticket.renew.jitter`` (0.05) and ``sasl.kerberos.min.time.before.relogin`` (60000 ms).

Options that mean nothing to a client that only initiates contexts through GSS-API are accepted with a reason:
``storeKey`` (only an acceptor, a broker, needs its key kept), ``doNotPrompt`` (kwire never prompts: it has no
password login), ``refreshKrb5Config`` (MIT's library re-reads a changed krb5.conf by itself). Anything else is
refused, naming what is accepted. Nothing here reads a keytab: settings hold paths, never key material.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from spark_kwire.client.config import ClientConfig, Secret, reveal
from spark_kwire.client.errors import ConfigError
from spark_kwire.client.auth.jaas import JaasConfig, parse_jaas_config

__all__ = ["KerberosSettings", "kerberos_settings", "KERBEROS_OPTIONS", "KRB5_LOGIN_MODULES"]

KRB5_LOGIN_MODULES = ("com.sun.security.auth.module.Krb5LoginModule", "com.ibm.security.auth.module.Krb5LoginModule")
_SUN_OPTIONS = ("useKeyTab", "keyTab", "principal", "useTicketCache", "ticketCache", "renewTGT", "renewTicket",
                "storeKey", "doNotPrompt", "isInitiator", "refreshKrb5Config", "debug", "serviceName")
_IBM_OPTIONS = ("useKeytab", "useCcache", "useDefaultKeytab", "useDefaultCcache", "principal", "credsType",
                "renewTGT", "refreshKrb5Config", "debug", "serviceName")
_PASSWORD_OPTIONS = ("tryFirstPass", "useFirstPass", "storePass", "clearPass", "password")

# Kafka option -> (field, kind, default, low, high)
KERBEROS_OPTIONS = {
    "sasl.kerberos.service.name": ("service_name", str, "kafka", None, None),
    "sasl.kerberos.kinit.cmd": ("kinit_cmd", str, "/usr/bin/kinit", None, None),
    "sasl.kerberos.ticket.renew.window.factor": ("renew_window_factor", float, 0.8, 0.5, 1.0),
    "sasl.kerberos.ticket.renew.jitter": ("renew_jitter", float, 0.05, 0.0, 0.5),
    "sasl.kerberos.min.time.before.relogin": ("min_time_before_relogin_ms", int, 60_000, 0, 86_400_000),
}


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


def _has_cache_type(name: str) -> bool:
    head, sep, _ = name.partition(":")
    return bool(sep) and head.isalpha() and head.isupper() and len(head) > 1


def _jaas_error(reason: str) -> ConfigError:
    return ConfigError("sasl.jaas.config", Secret(""), reason=reason)  # the line may hold other secrets: not shown


def _flag(options: dict[str, str], key: str, default: bool) -> bool:
    raw = options.get(key)
    if raw is None:
        return default
    text = raw.strip().lower()
    if text not in ("true", "false"):
        raise _jaas_error(f"the Krb5LoginModule option {key}={raw!r} must be true or false")
    return text == "true"


def _file_url(key: str, value: str) -> str:
    """IBM's options take file URLs (``file:/etc/kafka.keytab``) or plain paths."""
    if value.startswith("file://"):
        return value[len("file://"):]
    if value.startswith("file:"):
        return value[len("file:"):]
    if "://" in value:
        raise _jaas_error(f"the IBM Krb5LoginModule option {key} must be a file: URL or a path, not {value!r}")
    return value


def _module_kind(jaas: JaasConfig) -> str:
    module = jaas.login_module
    if module.startswith("kafkashaded."):
        module = module[len("kafkashaded."):]
    if module == KRB5_LOGIN_MODULES[0]:
        return "sun"
    if module == KRB5_LOGIN_MODULES[1]:
        return "ibm"
    raise _jaas_error(f"sasl.mechanism=GSSAPI (Kafka's default when sasl.mechanism is not set) needs a Kerberos "
                      f"login module, but sasl.jaas.config names {jaas.login_module}; set sasl.mechanism to the "
                      f"mechanism that module is for, or use {KRB5_LOGIN_MODULES[0]} required useKeyTab=true "
                      f"keyTab=\"/path/client.keytab\" principal=\"name@REALM\"; (or useTicketCache=true), "
                      f"or leave sasl.jaas.config unset to use the process's ticket cache")


def _check_options(options: dict[str, str], accepted: tuple[str, ...], module: str) -> None:
    for key in options:
        if key in accepted:
            continue
        if key in _PASSWORD_OPTIONS:
            raise _jaas_error(f"the Krb5LoginModule option {key} is for password logins, which spark-kwire does not "
                              f"do: log in from a keytab (useKeyTab=true keyTab=... principal=...) or a ticket cache "
                              f"(useTicketCache=true)")
        raise _jaas_error(f"unknown {module} option {key!r} (accepted: {', '.join(accepted)})")


def _from_sun(options: dict[str, str]) -> dict:
    _check_options(options, _SUN_OPTIONS, "Krb5LoginModule")
    if not _flag(options, "isInitiator", True):
        raise _jaas_error("isInitiator=false makes a login for a server; a Kafka client must initiate (remove it)")
    use_keytab = _flag(options, "useKeyTab", False)
    use_cache = _flag(options, "useTicketCache", False)
    renew = _flag(options, "renewTGT", False) or _flag(options, "renewTicket", False)
    if options.get("keyTab") and not use_keytab:
        raise _jaas_error("keyTab is set but useKeyTab is not true: add useKeyTab=true (or remove keyTab)")
    if options.get("ticketCache") and not use_cache:
        raise _jaas_error("ticketCache is set but useTicketCache is not true: add useTicketCache=true")
    return dict(use_keytab=use_keytab, keytab=options.get("keyTab") or None, use_ticket_cache=use_cache,
                ticket_cache=options.get("ticketCache") or None, renew_ticket=renew)


def _from_ibm(options: dict[str, str]) -> dict:
    _check_options(options, _IBM_OPTIONS, "IBM Krb5LoginModule")
    creds = (options.get("credsType") or "initiator").strip().lower()
    if creds not in ("initiator", "both"):
        raise _jaas_error(f"credsType={creds!r} makes a login for a server; a Kafka client needs "
                          f"credsType=initiator (or both)")
    keytab = _file_url("useKeytab", options["useKeytab"]) if options.get("useKeytab") else None
    cache = _file_url("useCcache", options["useCcache"]) if options.get("useCcache") else None
    use_keytab = keytab is not None or _flag(options, "useDefaultKeytab", False)
    use_cache = cache is not None or _flag(options, "useDefaultCcache", False)
    return dict(use_keytab=use_keytab, keytab=keytab, use_ticket_cache=use_cache, ticket_cache=cache,
                renew_ticket=_flag(options, "renewTGT", False))


def _kafka_options(config: ClientConfig) -> dict:
    values = {}
    for key, raw in config.sasl.items():
        if not key.startswith("sasl.kerberos."):
            continue
        if key not in KERBEROS_OPTIONS:
            raise ConfigError(key, reveal(raw), reason="unknown Kerberos option", accepted=", ".join(KERBEROS_OPTIONS))
        name, kind, _, low, high = KERBEROS_OPTIONS[key]
        text = (reveal(raw) or "").strip()
        if kind is str:
            if not text:
                raise ConfigError(key, text, reason="it must not be empty")
            values[name] = text
            continue
        try:
            value = kind(text)
        except ValueError:
            raise ConfigError(key, text, f"a number between {low} and {high}") from None
        if not low <= value <= high:
            raise ConfigError(key, text, f"a number between {low} and {high}")
        values[name] = value
    return values


# options of the other mechanisms, which a GSSAPI login would ignore
_NOT_FOR_GSSAPI = ("sasl.oauthbearer.", "sasl.login.", "sasl.client.callback.handler.class")


def _refuse_other_mechanisms(config: ClientConfig) -> None:
    default = " (Kafka's default when sasl.mechanism is not set)"
    if config.sasl_username is not None or config.sasl_password is not None:
        key = "sasl.username" if config.sasl_username is not None else "sasl.password"
        raise ConfigError(key, Secret(""), reason=f"sasl.username and sasl.password are for PLAIN and SCRAM, but "
                          f"sasl.mechanism is GSSAPI{default}: set sasl.mechanism, or remove them")
    for key in config.sasl:
        if key.startswith(_NOT_FOR_GSSAPI):
            raise ConfigError(key, Secret(""), reason=f"it configures OAUTHBEARER or AWS_MSK_IAM logins, but "
                              f"sasl.mechanism is GSSAPI{default}: set sasl.mechanism, or remove it")


def kerberos_settings(config: ClientConfig) -> KerberosSettings:
    """The :class:`KerberosSettings` of a ``sasl.mechanism=GSSAPI`` config; a :class:`ConfigError` names what is wrong."""
    _refuse_other_mechanisms(config)
    values = _kafka_options(config)
    jaas_text = reveal(config.sasl_jaas_config)
    if jaas_text is None or not jaas_text.strip():
        return KerberosSettings(**values)
    jaas = parse_jaas_config(config.sasl_jaas_config)
    kind = _module_kind(jaas)
    login = _from_sun(jaas.options) if kind == "sun" else _from_ibm(jaas.options)
    if not login["use_keytab"] and not login["use_ticket_cache"]:
        raise _jaas_error("the Krb5LoginModule line neither reads a keytab nor a ticket cache, and spark-kwire "
                          "cannot prompt for a password: set useKeyTab=true keyTab=\"/path/client.keytab\" "
                          "principal=\"name@REALM\", or useTicketCache=true")
    if login["renew_ticket"] and not login["use_ticket_cache"]:
        raise _jaas_error("renewTGT=true renews a ticket cache, but useTicketCache is not true")
    principal = (jaas.get("principal") or "").strip() or None
    if login["use_keytab"] and not login["use_ticket_cache"] and principal is None:
        raise _jaas_error("useKeyTab=true needs principal=\"name@REALM\" (the keytab may hold several)")
    service = jaas.get("serviceName")
    if service is not None:
        configured = values.get("service_name")
        if configured is not None and configured != service:
            raise ConfigError("sasl.kerberos.service.name", configured,
                              reason=f"it conflicts with serviceName={service!r} in sasl.jaas.config; set one of them")
        values["service_name"] = service
    module = KRB5_LOGIN_MODULES[0] if kind == "sun" else KRB5_LOGIN_MODULES[1]
    return KerberosSettings(principal=principal, debug=_flag(jaas.options, "debug", False),
                            source=f"sasl.jaas.config ({module})", **login, **values)
