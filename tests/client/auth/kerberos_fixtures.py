"""Fixtures and helpers of the Kerberos tests: a real MIT KDC, brokers with a GSSAPI listener, principals,
keytabs, ticket caches, Java clients configured for GSSAPI, and the keys of a keytab as MIT's klist shows them
(to check that no message shows them)."""

from __future__ import annotations

import os
import re
import subprocess
import uuid
from pathlib import Path

import pyarrow as pa
import pytest

from harness import run_java_tool
from harness.kerberos import GSSAPI_LISTENER, KerberosRealm, kerberized_kafka_cluster
from spark_kwire.client.admin.admin import Admin
from spark_kwire.client.consumer.fetcher import fetch_range
from spark_kwire.client.auth.kerberos.login import forget_kerberos_logins
from spark_kwire.client import Producer

KRB5_MODULE = "com.sun.security.auth.module.Krb5LoginModule"
CLOCKSKEW_S = 5  # the realm's tolerance: expired tickets stop working 5 s after their end, not 5 minutes


class KerberosEnv:
    """The realm, its principals' keytabs, and the process environment pointing at its krb5.conf."""

    def __init__(self, realm: KerberosRealm) -> None:
        self.realm = realm
        self.keytabs: dict[str, Path] = {}

    def principal(self, name: str) -> str:
        return self.realm.principal(name)

    def user(self, name: str, **kwargs) -> Path:
        """A principal with a random key, and its keytab (made once)."""
        if name not in self.keytabs:
            self.keytabs[name] = self.realm.add_principal(name, **kwargs)
        return self.keytabs[name]

    def cache(self, tmp_path: Path, name: str, **kinit) -> str:
        """``kinit -kt`` `name` into a new file cache under `tmp_path`; returns ``FILE:<path>``."""
        return self.realm.kinit(name, self.user(name), tmp_path / f"krb5cc-{name}-{uuid.uuid4().hex[:6]}", **kinit)


@pytest.fixture(scope="module")
def kerberos():
    """A KDC of its own for the test module; KRB5_CONFIG points at it meanwhile (and KRB5CCNAME nowhere)."""
    saved = {k: os.environ.get(k) for k in ("KRB5_CONFIG", "KRB5CCNAME", "KRB5_CLIENT_KTNAME")}
    with KerberosRealm(clockskew_s=CLOCKSKEW_S) as realm:
        os.environ["KRB5_CONFIG"] = str(realm.krb5_conf)
        os.environ["KRB5CCNAME"] = f"FILE:{realm.workdir / 'no-default-cache'}"
        os.environ.pop("KRB5_CLIENT_KTNAME", None)
        forget_kerberos_logins()
        try:
            yield KerberosEnv(realm)
        finally:
            forget_kerberos_logins()
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


@pytest.fixture(autouse=True)
def _fresh_logins():
    """Each test logs in anew (the process-wide logins would otherwise carry over)."""
    forget_kerberos_logins()
    yield
    forget_kerberos_logins()


def start_cluster(env: KerberosEnv, **kwargs):
    return kerberized_kafka_cluster(env.realm, **kwargs).start()


def gssapi_options(cluster, jaas: str | None = None, **extra) -> dict:
    """Kafka options for the GSSAPI listener, as Java/Spark users write them (`jaas` None: no JAAS line)."""
    opts = {"bootstrap.servers": cluster.bootstrap(GSSAPI_LISTENER), "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "GSSAPI", "sasl.kerberos.service.name": "kafka"}
    if jaas is not None:
        opts["sasl.jaas.config"] = jaas
    opts.update(extra)
    return opts


def keytab_jaas(keytab: Path, principal: str, module: str = KRB5_MODULE, extra: str = "") -> str:
    return (f'{module} required useKeyTab=true storeKey=true keyTab="{keytab}" principal="{principal}"{extra};')


def cache_jaas(cache: str, principal: str | None = None, extra: str = "") -> str:
    path = cache.split(":", 1)[1] if cache.startswith("FILE:") else cache
    who = f' principal="{principal}"' if principal else ""
    return f'{KRB5_MODULE} required useTicketCache=true ticketCache="{path}"{who}{extra};'


def roundtrip(client, n: int = 20, topic: str | None = None) -> str:
    """Create a topic, produce `n` records with kwire and fetch them back with kwire; returns the topic."""
    topic = topic or f"krb-{uuid.uuid4().hex[:10]}"
    Admin(client).create_topics([(topic, 1, 1)], exist_ok=True)
    values = pa.array([f"{topic}-{i}".encode() for i in range(n)], pa.binary())
    with Producer(client) as producer:
        producer.send_batch(topic, 0, values)
        assert producer.flush()[(topic, 0)].records == n
    got = [v for batch in fetch_range(client, topic, 0, 0, n) for v in batch.value.to_pylist()]
    assert got == values.to_pylist()
    return topic


def java_client_properties(path: Path, cluster, keytab: Path, principal: str) -> Path:
    """A Java client config file that authenticates with GSSAPI from `keytab` (as Java/Spark users write it)."""
    path.write_text(
        f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n"
        f"sasl.jaas.config={keytab_jaas(keytab, principal)}\n")
    return path


def java_console_consume(env: KerberosEnv, cluster, topic: str, count: int, config: Path) -> list[str]:
    out = run_java_tool(
        "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", cluster.bootstrap(GSSAPI_LISTENER),
        "--topic", topic, "--from-beginning", "--max-messages", str(count), "--timeout-ms", "30000",
        "--consumer.config", str(config), timeout=120, check=False,
        system_properties={"java.security.krb5.conf": str(env.realm.krb5_conf)})
    lines = [line for line in out.stdout.splitlines() if line]
    assert len(lines) == count, f"Java console consumer read {len(lines)} of {count}:\n{out.stderr[-3000:]}"
    return lines


def java_console_produce(env: KerberosEnv, cluster, topic: str, lines: list[str], config: Path) -> None:
    run_java_tool(
        "org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server", cluster.bootstrap(GSSAPI_LISTENER),
        "--topic", topic, "--producer.config", str(config), input="".join(f"{v}\n" for v in lines), timeout=120,
        system_properties={"java.security.krb5.conf": str(env.realm.krb5_conf)})


def keytab_keys(keytab: Path) -> list[str]:
    """The keys in `keytab` as MIT's ``klist -kK`` prints them (hex), in hex and base64 forms, to look for in text."""
    import base64

    out = subprocess.run(["klist", "-k", "-K", "-e", str(keytab)], capture_output=True, text=True, check=True).stdout
    keys = re.findall(r"\(0x([0-9a-f]+)\)", out)
    assert keys, f"klist -kK showed no key for {keytab}:\n{out}"
    forms = []
    for key in keys:
        raw = bytes.fromhex(key)
        forms += [key, key.upper(), base64.b64encode(raw).decode()]
    return forms


def skew_ticket_cache(cache: str, seconds: int) -> None:
    """Make the library that reads this FILE cache believe its clock is `seconds` ahead of the KDC's: the cache
    header's KDC time offset (MIT's kdc_timesync), which the library adds to the time it puts in requests."""
    import struct

    path = Path(cache.split(":", 1)[1])
    data = path.read_bytes()
    version, header_length = struct.unpack(">HH", data[:4])
    assert version == 0x0504, f"not a version 4 FILE cache: {version:#x}"
    header = struct.pack(">HHii", 1, 8, seconds, 0)  # tag 1: KDC time offset (seconds, microseconds)
    path.write_bytes(struct.pack(">HH", version, len(header)) + header + data[4 + header_length:])
