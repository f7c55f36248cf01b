"""The Kerberos login of a GSSAPI client (:class:`~.logins.KerberosSettings`) from its options, read as Kafka's Java
client reads them.

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

from spark_kwire.client.errors import ConfigError
from spark_kwire.client.settings.jaas import JaasConfig
from spark_kwire.client.settings.logins import KerberosSettings
from spark_kwire.client.settings.secret import Secret

__all__ = ["kerberos_settings", "KERBEROS_OPTIONS", "KRB5_LOGIN_MODULES"]

KRB5_LOGIN_MODULES = ("com.sun.security.auth.module.Krb5LoginModule", "com.ibm.security.auth.module.Krb5LoginModule")
_SUN_OPTIONS = ("useKeyTab", "keyTab", "principal", "useTicketCache", "ticketCache", "renewTGT", "renewTicket",
                "storeKey", "doNotPrompt", "isInitiator", "refreshKrb5Config", "debug", "serviceName")
_IBM_OPTIONS = ("useKeytab", "useCcache", "useDefaultKeytab", "useDefaultCcache", "principal", "credsType",
                "renewTGT", "refreshKrb5Config", "debug", "serviceName")
_PASSWORD_OPTIONS = ("tryFirstPass", "useFirstPass", "storePass", "clearPass", "password")

# Kafka option -> field of KerberosSettings (the values are read by their kinds in names.py)
KERBEROS_OPTIONS = {
    "sasl.kerberos.service.name": "service_name",
    "sasl.kerberos.kinit.cmd": "kinit_cmd",
    "sasl.kerberos.ticket.renew.window.factor": "renew_window_factor",
    "sasl.kerberos.ticket.renew.jitter": "renew_jitter",
    "sasl.kerberos.min.time.before.relogin": "min_time_before_relogin_ms",
}


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


def _kafka_options(values) -> dict:
    return {field: values.get(key) for key, field in KERBEROS_OPTIONS.items() if values.get(key) is not None}


# options of the other mechanisms, which a GSSAPI login would ignore
_NOT_FOR_GSSAPI = ("sasl.oauthbearer.", "sasl.login.", "sasl.client.callback.handler.class")


def _refuse_other_mechanisms(values) -> None:
    default = " (Kafka's default when sasl.mechanism is not set)"
    users = values.given_with("sasl.username", "sasl.password")
    if users:
        raise ConfigError(users[-1], Secret(""), reason=f"sasl.username and sasl.password are for PLAIN and SCRAM, "
                          f"but sasl.mechanism is GSSAPI{default}: set sasl.mechanism, or remove them")
    others = values.given_with(*_NOT_FOR_GSSAPI)
    if others:
        raise ConfigError(others[0], Secret(""), reason=f"it configures OAUTHBEARER or AWS_MSK_IAM logins, but "
                          f"sasl.mechanism is GSSAPI{default}: set sasl.mechanism, or remove it")


def kerberos_settings(values, jaas: JaasConfig | None) -> KerberosSettings:
    """The :class:`KerberosSettings` of a ``sasl.mechanism=GSSAPI`` client from the options read by
    :func:`~.parse.parse_options` and its parsed JAAS line; a :class:`ConfigError` names what is wrong."""
    _refuse_other_mechanisms(values)
    kafka = _kafka_options(values)
    if jaas is None:
        return KerberosSettings(**kafka)
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
        configured = kafka.get("service_name")
        if configured is not None and configured != service:
            raise ConfigError("sasl.kerberos.service.name", configured,
                              reason=f"it conflicts with serviceName={service!r} in sasl.jaas.config; set one of them")
        kafka["service_name"] = service
    module = KRB5_LOGIN_MODULES[0] if kind == "sun" else KRB5_LOGIN_MODULES[1]
    return KerberosSettings(principal=principal, debug=_flag(jaas.options, "debug", False),
                            source=f"sasl.jaas.config ({module})", **login, **kafka)
