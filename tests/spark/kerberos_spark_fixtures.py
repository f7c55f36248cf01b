"""Kerberos for the test session's Spark: a KDC whose krb5.conf sits where the session's Python workers read it
(``KRB5_CONFIG``, fixed when the session started: see ``spark_kerberos_files`` in tests/conftest.py) and where its
driver JVM reads it (``java.security.krb5.conf``, for Spark's built-in ``kafka`` source), a GSSAPI broker, and
the Spark options Java and Spark users write for it."""

from __future__ import annotations

import os
import shutil
import time
import uuid
from pathlib import Path

import pytest

from harness.kerberos import GSSAPI_LISTENER, GSSAPI_TLS_LISTENER, KerberosRealm
from spark_kwire.client.auth.kerberos.login import forget_kerberos_logins
from tests.client.auth.kerberos_fixtures import CLOCKSKEW_S, KRB5_MODULE, KerberosEnv

__all__ = ["spark_kerberos", "spark_options", "keytab_login", "cache_login", "java_refresh_krb5_conf",
           "rewrite_krb5_conf", "apply_options"]


def java_refresh_krb5_conf(spark, path: str) -> None:
    """Point the driver JVM's Kerberos at `path` and make it read the file again (Java caches it)."""
    jvm = spark.sparkContext._jvm
    jvm.java.lang.System.setProperty("java.security.krb5.conf", path)
    jvm.sun.security.krb5.Config.refresh()


def rewrite_krb5_conf(spark, realm: KerberosRealm, path: Path, **variant) -> None:
    """Write `realm`'s krb5.conf (or a variant: another `kdc`) at `path`. MIT's library notices a changed file by
    its modification time, checked at most once a second: wait that second so that workers see the new one."""
    realm.write_krb5_conf(path, **variant)
    java_refresh_krb5_conf(spark, str(path))
    time.sleep(1.1)


@pytest.fixture(scope="module")
def spark_kerberos(spark, spark_kerberos_files):
    """A KDC for the module (5 s clock skew), its krb5.conf written where the session's Spark reads it."""
    path = Path(spark_kerberos_files["KRB5_CONFIG"])
    with KerberosRealm(clockskew_s=CLOCKSKEW_S) as realm:
        rewrite_krb5_conf(spark, realm, path)
        forget_kerberos_logins()
        yield KerberosEnv(realm)
        forget_kerberos_logins()


def keytab_login(env: KerberosEnv, name: str) -> str:
    """A Krb5LoginModule line logging `name` in from its keytab, as Java and Spark users write it."""
    return f'{KRB5_MODULE} required useKeyTab=true storeKey=true keyTab="{env.user(name)}" ' \
           f'principal="{env.principal(name)}";'


def cache_login(env: KerberosEnv, name: str, folder: Path) -> str:
    """``kinit -kt`` `name` into a new ticket cache file; a Krb5LoginModule line reading it."""
    cache = env.realm.kinit(name, env.user(name), folder / f"krb5cc-{name}-{uuid.uuid4().hex[:6]}")
    return f'{KRB5_MODULE} required useTicketCache=true ticketCache="{cache.split(":", 1)[1]}" ' \
           f'principal="{env.principal(name)}";'


def spark_options(cluster, jaas: str | None, *, ca: Path | None = None) -> dict:
    """Spark options for the GSSAPI listener (`jaas` None: no JAAS line, the process's ticket cache), or with `ca`
    (the PEM CA of the brokers' certificates) for its SASL_SSL twin."""
    options = {"kafka.bootstrap.servers": cluster.bootstrap(GSSAPI_TLS_LISTENER if ca else GSSAPI_LISTENER),
               "kafka.security.protocol": "SASL_SSL" if ca else "SASL_PLAINTEXT", "kafka.sasl.mechanism": "GSSAPI",
               "kafka.sasl.kerberos.service.name": "kafka"}
    if ca:
        options.update({"kafka.ssl.truststore.type": "PEM", "kafka.ssl.truststore.location": str(ca)})
    if jaas is not None:
        options["kafka.sasl.jaas.config"] = jaas
    return options


def apply_options(builder, options: dict):
    for key, value in options.items():
        builder = builder.option(key, value)
    return builder


def fill_default_cache(env: KerberosEnv, name: str, spark_kerberos_files: dict) -> str:
    """``kinit -kt`` `name` into the session's default ticket cache (KRB5CCNAME of Spark's workers)."""
    cache = spark_kerberos_files["KRB5CCNAME"]
    path = Path(cache.split(":", 1)[1])
    staged = path.with_name(f"{path.name}.{uuid.uuid4().hex[:6]}")
    env.realm.kinit(name, env.user(name), staged)
    shutil.move(staged, path)  # whole, never half-written, for workers reading it meanwhile
    os.environ["KRB5CCNAME"] = cache
    return cache
