"""Kerberos logins: a principal's credentials from a keytab or a ticket cache, kept valid, one per process.

* **Keytab** (``useKeyTab=true``): the initial ticket (TGT) is obtained from the keytab into an in-memory ticket
  cache of this process (``gss_acquire_cred_from`` with ``client_keytab``; no file is written, the user's caches
  are left alone). It is replaced before it expires, at the time Kafka's Java client would re-login: at
  ``sasl.kerberos.ticket.renew.window.factor`` plus up to ``.ticket.renew.jitter`` of its lifetime, not sooner
  than ``.min.time.before.relogin`` after the previous login unless waiting that long would let it expire. As with
  OAuth tokens, the renewal happens when a connection next authenticates after that time (connections
  re-authenticate on the broker's ``connections.max.reauth.ms``); when it fails while the old ticket is still
  valid, the old one is used and the renewal is tried again 10 s later.
* **Ticket cache** (``useTicketCache=true``, or no JAAS line): the cache is read again at every authentication,
  so a cache that ``kinit`` or a ticket-keeping daemon renews is picked up. With ``renewTGT=true`` kwire itself
  runs ``<sasl.kerberos.kinit.cmd> -R -c <cache>`` at the same renewal time (Java runs ``kinit -R`` without
  ``-c``, which renews the default cache even when the JAAS line names another).
* Both: the ticket cache when it holds a valid ticket, else the keytab (Java's order).

Every call that may wait on a KDC is bounded (:mod:`.bounded`) by ``request.timeout.ms``. A process keeps one
login per set of settings (:func:`shared_login`): every client, connection and Spark task of a Python worker
shares it, so a keytab costs one KDC exchange per ticket lifetime and process.
"""

from __future__ import annotations

import logging
import os
import random
import subprocess
import threading
import time
import uuid

from spark_kwire.client.auth.kerberos.bounded import KdcTimeout, within
from spark_kwire.client.auth.kerberos.errors import TICKET_EXPIRED_ADVICE, KerberosError, explain_gss_error, realm_of
from spark_kwire.client.auth.kerberos.keytab import keytab_entries, keytab_path
from spark_kwire.client.auth.kerberos.profile import describe_realm
from spark_kwire.client.settings.logins import KerberosSettings

__all__ = ["KerberosLogin", "shared_login", "forget_kerberos_logins", "refresh_time", "keytab_note"]

log = logging.getLogger("spark_kwire.client.auth.kerberos")

RETRY_AFTER_FAILED_RENEWAL_S = 10.0  # as Java's refresh thread


def refresh_time(start: float, expiry: float, now: float, last_login: float, settings: KerberosSettings) -> float:
    """When to replace a ticket valid from `start` to `expiry` (epoch seconds), Kafka's Java client's rule."""
    fraction = settings.renew_window_factor + settings.renew_jitter * random.random()
    proposed = start + (expiry - start) * fraction
    if proposed >= expiry:
        return now
    earliest = last_login + settings.min_time_before_relogin_ms / 1000.0
    # not sooner than min.time.before.relogin after the last login, unless that would let the ticket expire
    return max(proposed, earliest) if earliest < expiry else proposed


def keytab_note(settings: KerberosSettings, principal: str | None) -> str | None:
    """When the keytab cannot be read or holds no key for `principal`, a sentence saying so (names only)."""
    name = settings.keytab or os.environ.get("KRB5_CLIENT_KTNAME")
    if not name or principal is None:
        return None
    path = keytab_path(name)
    if path is None:
        return None
    try:
        entries = keytab_entries(path)
    except FileNotFoundError:
        return f"the keytab {path} does not exist"
    except PermissionError:
        return f"the keytab {path} is not readable by this process (uid {os.getuid()})"
    except (OSError, ValueError) as exc:
        return f"the keytab {path} cannot be read: {exc}"
    held = sorted({e.principal for e in entries})
    wanted = principal if "@" in principal else None
    if any(p == wanted or (wanted is None and p.split("@")[0] == principal) for p in held):
        return None
    return f"the keytab {path} holds no key for {principal} (it holds keys for: {', '.join(held) or 'nobody'})"


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


class KerberosLogin:
    """One principal's credentials in this process (see the module docstring). :meth:`credentials` returns a
    valid ``gssapi.Credentials``, renewed when due; raises :class:`KerberosError`."""

    def __init__(self, settings: KerberosSettings, gssapi) -> None:
        self.settings = settings
        self._gss = gssapi
        self._lock = threading.Lock()
        self._creds = None
        self._expiry = 0.0
        self._refresh_at = 0.0
        self._last_login = 0.0
        self._cache_ticket_end: float | None = None  # the end time of the cache's ticket we last planned for
        self._cache_renew_at = 0.0
        self.principal: str | None = settings.principal
        self.keytab_logins = 0  # initial tickets obtained from the keytab
        self.cache_reads = 0
        self.cache_renewals = 0  # successful kinit -R runs

    def __repr__(self) -> str:
        return f"KerberosLogin({self.settings.describe()})"

    # -- public ----------------------------------------------------------------------------------------------
    def credentials(self, bound_s: float):
        """Valid credentials for the principal (logging in or renewing first when needed)."""
        with self._lock:
            settings = self.settings
            if settings.use_ticket_cache:
                try:
                    return self._from_cache(bound_s)
                except KerberosError as exc:
                    if not settings.use_keytab or exc.kind not in ("no_ticket", "ticket_expired"):
                        raise
                    log.info("Kerberos: %s; logging in from the keytab instead", exc.kind)
            return self._from_keytab(bound_s)

    @property
    def expires_at(self) -> float:
        """Epoch seconds when the current ticket ends (0 before the first login)."""
        return self._expiry

    # -- keytab ----------------------------------------------------------------------------------------------
    def _from_keytab(self, bound_s: float):
        now = time.time()
        if self._creds is not None and now < self._refresh_at:
            return self._creds
        try:
            return self._keytab_login(bound_s)
        except KerberosError as exc:
            left = self._expiry - time.time()
            if self._creds is None or left <= 1.0:
                raise
            self._refresh_at = time.time() + min(RETRY_AFTER_FAILED_RENEWAL_S, left / 2)
            log.warning("Kerberos: renewing the ticket of %s failed; the current one is valid for %.0f s more, "
                        "retrying in %.0f s: %s", self.principal, left, self._refresh_at - time.time(), exc)
            return self._creds

    def _keytab_login(self, bound_s: float):
        gss, settings = self._gss, self.settings
        store = {b"ccache": f"MEMORY:kwire-{uuid.uuid4().hex}".encode()}
        if settings.keytab:
            store[b"client_keytab"] = settings.keytab.encode()
        principal = settings.principal
        source = settings.describe_keytab()

        def acquire():
            name = gss.Name(principal, gss.NameType.kerberos_principal)
            creds = gss.Credentials(name=name, usage="initiate", store=store)
            return creds, creds.lifetime, str(creds.name)

        started = time.time()
        creds, lifetime, resolved = self._call(bound_s, acquire, "login", principal, source,
                                               note=lambda: keytab_note(settings, principal))
        now = time.time()
        self._creds, self.principal = creds, resolved
        self._expiry = now + float(lifetime or 0)
        # min.time.before.relogin counts from this login, as in Java's refresh thread
        self._refresh_at = refresh_time(started, self._expiry, now, now, settings)
        self._last_login = now
        self.keytab_logins += 1
        self._log("logged in from %s: ticket valid for %.0f s, renewal in %.0f s", source, self._expiry - now,
                  self._refresh_at - now)
        return creds

    # -- ticket cache -----------------------------------------------------------------------------------------
    def _from_cache(self, bound_s: float):
        settings = self.settings
        if settings.renew_ticket and self._cache_ticket_end is not None and time.time() >= self._cache_renew_at:
            self._renew_cache(bound_s)
        gss = self._gss
        cache = settings.cache_name
        source = settings.describe_cache()

        def acquire():
            name = gss.Name(settings.principal, gss.NameType.kerberos_principal) if settings.principal else None
            store = {b"ccache": cache.encode()} if cache else None
            creds = gss.Credentials(name=name, usage="initiate", store=store) if store else \
                gss.Credentials(name=name, usage="initiate")
            return creds, creds.lifetime, str(creds.name)

        creds, lifetime, resolved = self._call(bound_s, acquire, "login", settings.principal, source)
        if not lifetime:
            raise KerberosError(
                f"Kerberos login for {resolved} from {source} failed: the ticket has expired. "
                f"{_sentence(describe_realm(realm_of(resolved)))}. {_sentence(TICKET_EXPIRED_ADVICE)}.",
                kind="ticket_expired", principal=resolved, realm=realm_of(resolved))
        now = time.time()
        self.principal = resolved
        self._expiry = now + float(lifetime)
        self.cache_reads += 1
        if self._cache_ticket_end is None or abs(self._expiry - self._cache_ticket_end) > 2.0:
            # a ticket not seen before (its start is unknown here: plan from now, the first time it is seen)
            self._cache_ticket_end = self._expiry
            self._cache_renew_at = refresh_time(now, self._expiry, now, self._last_login or -1e12, settings)
            self._log("read a ticket for %s from %s, valid for %.0f s", resolved, source, lifetime)
        return creds

    def _renew_cache(self, bound_s: float) -> None:
        """``kinit -R`` the cache (renewTGT=true); a failure is logged and tried again later, as Java does."""
        settings = self.settings
        command = [settings.kinit_cmd, "-R"] + (["-c", settings.cache_name] if settings.cache_name else [])
        self._last_login = time.time()
        try:
            proc = subprocess.run(command, capture_output=True, text=True, timeout=max(1.0, bound_s),
                                  stdin=subprocess.DEVNULL)
            failed = proc.returncode != 0
            detail = " ".join((proc.stderr or proc.stdout or "").split())[:300]
        except (OSError, subprocess.TimeoutExpired) as exc:
            failed, detail = True, str(exc)
        if failed:
            self._cache_renew_at = time.time() + RETRY_AFTER_FAILED_RENEWAL_S
            log.warning("Kerberos: renewing the ticket cache with %r failed (%s); is the ticket renewable (kinit -r, "
                        "the principal's and krbtgt's maxrenewlife)? Using the cache as it is, trying again in %.0f s",
                        " ".join(command), detail, RETRY_AFTER_FAILED_RENEWAL_S)
            return
        self.cache_renewals += 1
        self._cache_ticket_end = None  # plan anew from the renewed ticket
        self._log("renewed the ticket cache with %s", " ".join(command))

    # -- helpers ----------------------------------------------------------------------------------------------
    def _call(self, bound_s: float, fn, stage: str, principal: str | None, source: str, note=None):
        from gssapi.exceptions import GSSError

        try:
            return within(bound_s, fn, "login")
        except KdcTimeout:
            raise KerberosError(
                f"Kerberos {stage} for {principal or 'the ticket cache principal'} from {source} failed: no answer "
                f"from the KDC within request.timeout.ms ({bound_s * 1000:.0f} ms). "
                f"{_sentence(describe_realm(realm_of(principal)))}. Make sure the KDC is up and reachable from "
                f"this host.", kind="kdc_timeout", principal=principal, realm=realm_of(principal)) from None
        except GSSError as exc:
            raise explain_gss_error(exc, stage=stage, principal=principal, source=source,
                                    keytab_note=note() if note else None) from None

    def _log(self, message: str, *args) -> None:
        log.log(logging.INFO if self.settings.debug else logging.DEBUG, "Kerberos: " + message, *args)

    def _reset_after_fork(self) -> None:
        self._lock = threading.Lock()


_logins: dict[tuple, KerberosLogin] = {}
_logins_lock = threading.Lock()


def _environment_key(settings: KerberosSettings) -> tuple:
    """What else decides the login: the krb5 config, and the default cache and keytab when the settings use them."""
    return (os.environ.get("KRB5_CONFIG"),
            os.environ.get("KRB5CCNAME") if settings.use_ticket_cache and not settings.ticket_cache else None,
            os.environ.get("KRB5_CLIENT_KTNAME") if settings.use_keytab and not settings.keytab else None)


def shared_login(settings: KerberosSettings, gssapi) -> KerberosLogin:
    """This process's :class:`KerberosLogin` for `settings` (made the first time)."""
    key = (settings, _environment_key(settings))
    with _logins_lock:
        login = _logins.get(key)
        if login is None:
            login = _logins[key] = KerberosLogin(settings, gssapi)
        return login


def forget_kerberos_logins() -> None:
    """Drop every login of this process (the next authentication logs in anew)."""
    with _logins_lock:
        _logins.clear()


def _after_fork_in_child() -> None:
    global _logins_lock
    _logins_lock = threading.Lock()
    for login in _logins.values():
        login._reset_after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
