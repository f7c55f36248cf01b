"""A real MIT Kerberos KDC for kwire's tests, and Kafka brokers that authenticate clients with it (SASL/GSSAPI).

`KerberosRealm` runs Debian's ``krb5kdc`` (package krb5-kdc, installed by ``.ci/system-packages``) unprivileged on
a free loopback port, with a realm, database and configuration of its own in a temporary folder: ``krb5.conf``
(what clients read through ``KRB5_CONFIG``, and brokers through ``-Djava.security.krb5.conf``) and ``kdc.conf``.
Principals are made with ``kadmin.local`` (random keys, optional short maximum ticket life), keytabs exported
with ``ktadd``, ticket caches filled with ``kinit -kt``. The KDC dies with the Python process that started it
(see harness.processes) and is stopped, its folder removed, on ``stop()``, on leaving a ``with`` block and at exit.

`kerberized_kafka_cluster` gives a `KafkaCluster` a ``SASL_PLAINTEXT`` listener advertised as ``localhost`` (the
host in the broker's service principal ``kafka/localhost@REALM``) with GSSAPI, plus SCRAM-SHA-512 and a
delegation-token secret when tokens are wanted.
"""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from harness.kafka_cluster import KafkaCluster, Listener
from harness.processes import die_with_parent, free_port, port_answers, spawner

__all__ = ["KerberosRealm", "KerberosError", "kerberized_kafka_cluster", "GSSAPI_LISTENER", "GSSAPI_TLS_LISTENER",
           "BROKER_HOST"]

PORT_ATTEMPTS = 5
START_TIMEOUT_S = 20.0
BROKER_HOST = "localhost"  # the host of the brokers' service principal, and of their SASL listener
GSSAPI_LISTENER = "SASL_PLAINTEXT"
GSSAPI_TLS_LISTENER = "SASL_SSL"
_TOOLS = ("krb5kdc", "kdb5_util", "kadmin.local", "kinit")
_SBIN = ("/usr/sbin", "/sbin", "/usr/bin")


class KerberosError(RuntimeError):
    """The KDC could not be set up or a Kerberos tool failed; the message carries the tool's output."""


def _tool(name: str) -> str:
    found = shutil.which(name) or next((f"{d}/{name}" for d in _SBIN if os.access(f"{d}/{name}", os.X_OK)), None)
    if found is None:
        raise KerberosError(f"{name} not found: the MIT Kerberos KDC and tools are missing; run `make setup` "
                            f"(.ci/system-packages installs krb5-kdc krb5-admin-server krb5-user libkrb5-dev)")
    return found


class KerberosRealm:
    """An MIT KDC for one realm on 127.0.0.1. Use as a context manager or call start()/stop().

    `clockskew_s` is the skew the KDC and every client reading this ``krb5.conf`` tolerate (MIT's default of
    300 s would let an expired ticket work for 5 more minutes); `kdc_timeout_ms` / `max_retries` make Java give up
    on an unreachable KDC quickly (MIT's library, which ignores them, fails at once on a refused loopback port).
    """

    def __init__(self, realm: str = "KWIRE.TEST", *, clockskew_s: int = 10, kdc_timeout_ms: int = 2000,
                 max_retries: int = 1, workdir: str | None = None) -> None:
        self.realm = realm
        self.clockskew_s = clockskew_s
        self.kdc_timeout_ms = kdc_timeout_ms
        self.max_retries = max_retries
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="kwire-kdc-"))
        self.port = free_port()
        self.krb5_conf = self.workdir / "krb5.conf"
        self.kdc_conf = self.workdir / "kdc.conf"
        self.log_path = self.workdir / "kdc.log"
        self.process: subprocess.Popen | None = None
        self._stopped = False

    # -- configuration -------------------------------------------------------------------------------------
    def krb5_conf_text(self, *, kdc: str | None = None, clockskew_s: int | None = None) -> str:
        """This realm's krb5.conf; `kdc` (host:port) and `clockskew_s` override for variants (e.g. a dead KDC)."""
        return f"""[libdefaults]
    default_realm = {self.realm}
    dns_lookup_realm = false
    dns_lookup_kdc = false
    dns_canonicalize_hostname = false
    rdns = false
    clockskew = {self.clockskew_s if clockskew_s is None else clockskew_s}
    udp_preference_limit = 1
    kdc_timeout = {self.kdc_timeout_ms}
    max_retries = {self.max_retries}
    ticket_lifetime = 10h
    renew_lifetime = 1d
    forwardable = false

[realms]
    {self.realm} = {{
        kdc = {kdc or f"127.0.0.1:{self.port}"}
    }}

[domain_realm]
    localhost = {self.realm}
    .localhost = {self.realm}

[logging]
    kdc = FILE:{self.log_path}
"""

    def write_krb5_conf(self, path: Path, *, kdc: str | None = None, clockskew_s: int | None = None) -> Path:
        """A krb5.conf variant at `path` (same realm, another KDC address or skew)."""
        path.write_text(self.krb5_conf_text(kdc=kdc, clockskew_s=clockskew_s))
        return path

    def _write_configs(self) -> None:
        self.write_krb5_conf(self.krb5_conf)
        db = self.workdir / "db"
        db.mkdir(exist_ok=True)
        self.kdc_conf.write_text(f"""[kdcdefaults]
    kdc_ports = {self.port}
    kdc_tcp_ports = {self.port}

[realms]
    {self.realm} = {{
        database_name = {db / "principal"}
        key_stash_file = {db / "stash"}
        acl_file = {self.workdir / "kadm5.acl"}
        max_life = 10h
        max_renewable_life = 7d
    }}
""")
        (self.workdir / "kadm5.acl").write_text("")

    @property
    def env(self) -> dict[str, str]:
        """Environment for processes that use this realm (clients, kinit, the KDC tools)."""
        return {"KRB5_CONFIG": str(self.krb5_conf), "KRB5_KDC_PROFILE": str(self.kdc_conf)}

    def _run(self, *args: str, timeout: float = 30, check: bool = True) -> subprocess.CompletedProcess:
        proc = subprocess.run([_tool(args[0]), *args[1:]], env={**os.environ, **self.env}, capture_output=True,
                              text=True, timeout=timeout, preexec_fn=die_with_parent)
        if check and proc.returncode != 0:
            raise KerberosError(f"{' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"[-3000:])
        return proc

    # -- life cycle ----------------------------------------------------------------------------------------
    def start(self) -> "KerberosRealm":
        """Create the database and start the KDC; returns when it answers on its port."""
        for tool in _TOOLS:
            _tool(tool)
        _live_realms.add(self)
        self._write_configs()
        # the master password only protects the stash file, which sits next to it in the temporary folder
        self._run("kdb5_util", "-r", self.realm, "create", "-s", "-P", secrets.token_hex(16))
        for _attempt in range(PORT_ATTEMPTS):
            if self._start_kdc():
                return self
            # another process bound the free port before krb5kdc did (tests run in parallel): take another one
            self.port = free_port()
            self._write_configs()
        self._fail(f"krb5kdc found no free port in {PORT_ATTEMPTS} attempts")

    def _start_kdc(self) -> bool:
        """Start krb5kdc on ``self.port``: True once it answers there, False if the port was taken meanwhile."""
        log_start = self.log_path.stat().st_size if self.log_path.exists() else 0
        with open(self.log_path, "ab") as log:
            self.process = spawner.popen([_tool("krb5kdc"), "-n", "-r", self.realm], env={**os.environ, **self.env},
                                         stdout=log, stderr=subprocess.STDOUT, cwd=self.workdir)
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if port_answers(self.port):
                time.sleep(0.2)  # the port may answer for the process that took it, while krb5kdc exits
                if self.process.poll() is None:
                    return True
            if self.process.poll() is not None:
                with open(self.log_path, "rb") as log:
                    log.seek(log_start)
                    if b"Address already in use" in log.read():
                        return False
                self._fail(f"krb5kdc did not start on port {self.port}")
            if time.monotonic() > deadline:
                self._fail(f"krb5kdc did not start on port {self.port} within {START_TIMEOUT_S} s")
            time.sleep(0.05)

    def _fail(self, what: str) -> None:
        tail = self.log_path.read_text(errors="replace")[-3000:] if self.log_path.exists() else ""
        self.stop()
        raise KerberosError(f"{what}; log:\n{tail}")

    def stop(self) -> None:
        """Stop the KDC and remove its folder (keytabs and caches made there included). Safe to call twice."""
        if self._stopped:
            return
        self._stopped = True
        if self.process is not None and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        shutil.rmtree(self.workdir, ignore_errors=True)
        _live_realms.discard(self)

    def __enter__(self) -> "KerberosRealm":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- principals, keytabs, caches ----------------------------------------------------------------------
    def principal(self, name: str) -> str:
        """`name` with this realm, e.g. ``alice`` -> ``alice@KWIRE.TEST``."""
        return name if "@" in name else f"{name}@{self.realm}"

    def kadmin(self, query: str) -> str:
        """Run one kadmin.local query (e.g. ``getprinc alice``) against this realm; returns its output."""
        return self._run("kadmin.local", "-r", self.realm, "-q", query).stdout

    def add_principal(self, name: str, *, max_life: str | None = None, max_renew_life: str | None = None,
                      keytab: bool = True) -> Path | None:
        """Add `name` with a random key (``max_life`` e.g. ``"100 seconds"``); returns its keytab, when wanted."""
        options = "-randkey"
        if max_life:
            options += f' -maxlife "{max_life}"'
        if max_renew_life:
            options += f' -maxrenewlife "{max_renew_life}"'
        self.kadmin(f"addprinc {options} {self.principal(name)}")
        return self.export_keytab(name) if keytab else None

    def export_keytab(self, name: str, path: Path | None = None) -> Path:
        """Write `name`'s current keys (not new ones: ``-norandkey``) to a keytab, ``<workdir>/<name>.keytab``."""
        path = path or self.workdir / (name.replace("/", "_") + ".keytab")
        self.kadmin(f"ktadd -norandkey -k {path} {self.principal(name)}")
        return path

    def randomize_key(self, name: str) -> None:
        """Give `name` a new key (keytabs exported before hold a key the KDC no longer accepts)."""
        self.kadmin(f"cpw -randkey {self.principal(name)}")

    def delete_principal(self, name: str) -> None:
        self.kadmin(f"delprinc -force {self.principal(name)}")

    def kinit(self, name: str, keytab: Path, cache: Path | str, *, lifetime: str | None = None,
              renewable: str | None = None) -> str:
        """``kinit -kt`` `name` from `keytab` into the ticket cache `cache` (a path or a ``TYPE:residual``
        name); returns the cache name as KRB5CCNAME takes it."""
        name_ = cache if isinstance(cache, str) and ":" in cache else f"FILE:{cache}"
        args = ["kinit", "-kt", str(keytab), "-c", name_]
        if lifetime:
            args += ["-l", lifetime]
        if renewable:
            args += ["-r", renewable]
        self._run(*args, self.principal(name))
        return name_

    def kdc_log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


_live_realms: set[KerberosRealm] = set()


@atexit.register
def _stop_all_realms() -> None:
    for realm in list(_live_realms):
        realm.stop()


def kerberized_kafka_cluster(realm: KerberosRealm, *, nodes: int = 1, reauth_ms: int | None = None,
                             delegation_tokens: bool = False, scram_users: list[tuple[str, str, str]] | None = None,
                             extra_properties: dict[str, str] | None = None, tls_keystore: Path | None = None,
                             **kwargs) -> KafkaCluster:
    """A (not yet started) `KafkaCluster` whose ``SASL_PLAINTEXT`` listener, advertised as ``localhost``, takes
    GSSAPI from `realm` (service principal ``kafka/localhost@REALM``, keytab exported here).

    `reauth_ms` sets ``connections.max.reauth.ms`` (KIP-368). `delegation_tokens` also enables SCRAM-SHA-512 on
    the listener (what token holders authenticate with) and gives the brokers a ``delegation.token.secret.key``;
    `scram_users` are SCRAM users created at format time. `tls_keystore` (a PEM keystore for ``localhost``, e.g.
    `generate_test_certificates`' ``broker_keystore``) adds a ``SASL_SSL`` listener taking the same mechanisms over
    TLS. Inter-broker traffic and the Java tools stay on the PLAINTEXT listener every node has, so no
    ``super.users`` or authorizer is needed.
    """
    service = f"kafka/{BROKER_HOST}"
    keytab = realm.workdir / "kafka-broker.keytab"
    if not keytab.exists():
        realm.add_principal(service, keytab=False)
        realm.export_keytab(service, keytab)
    mechanisms = ["GSSAPI"] + (["SCRAM-SHA-512"] if delegation_tokens else [])
    listeners = [Listener(GSSAPI_LISTENER, "SASL_PLAINTEXT", host=BROKER_HOST)]
    if tls_keystore is not None:
        listeners.append(Listener(GSSAPI_TLS_LISTENER, "SASL_SSL", host=BROKER_HOST))
    properties = {"sasl.enabled.mechanisms": ",".join(mechanisms), "sasl.kerberos.service.name": "kafka"}
    for listener in listeners:
        prefix = f"listener.name.{listener.name.lower()}"
        properties[f"{prefix}.gssapi.sasl.jaas.config"] = (
            f'com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true '
            f'keyTab="{keytab}" principal="{realm.principal(service)}";')
        if delegation_tokens:
            properties[f"{prefix}.scram-sha-512.sasl.jaas.config"] = \
                "org.apache.kafka.common.security.scram.ScramLoginModule required;"
    if tls_keystore is not None:
        prefix = f"listener.name.{GSSAPI_TLS_LISTENER.lower()}"
        properties.update({f"{prefix}.ssl.keystore.type": "PEM", f"{prefix}.ssl.keystore.location": str(tls_keystore)})
    if delegation_tokens:
        properties["delegation.token.secret.key"] = secrets.token_hex(24)
    if reauth_ms is not None:
        properties["connections.max.reauth.ms"] = str(reauth_ms)
    properties.update(extra_properties or {})
    system_properties = {"java.security.krb5.conf": str(realm.krb5_conf), **kwargs.pop("system_properties", {})}
    return KafkaCluster(nodes, listeners=listeners, extra_properties=properties, scram_users=scram_users,
                        system_properties=system_properties, **kwargs)
