"""The wheel as users get it: it holds only the library and the LICENSE, its version has one source, `make dist`'s
contents check refuses what must not be released, installing it leaves an installed pandas 3 in place, and
`spark_kwire.admin` and the `kwire check` command work in an environment without pyspark (installed from the wheel
into a fresh virtualenv, against a real broker, cross-checked with librdkafka)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import textwrap
import time
import zipfile
from pathlib import Path

import pytest

import spark_kwire

REPO = Path(__file__).resolve().parent.parent
NOSPARK_VENV = REPO / ".venv-nospark"  # cached between runs (ignored by git); rebuilt when the wheel changes


@pytest.fixture(scope="session")
def release_files(tmp_path_factory) -> tuple[Path, Path]:
    """(sdist, wheel) built from this checkout as `make dist` builds them: the sdist, then the wheel from it."""
    # Built from a copy of what the sdist should hold: a build/ folder or egg-info left in the checkout could add
    # stale files.
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "MANIFEST.in", "README.md", "LICENSE", "pyspark_kwire.py"):
        shutil.copy2(REPO / name, source / name)
    shutil.copytree(REPO / "spark_kwire", source / "spark_kwire", ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(source)], check=True, timeout=600,
                   capture_output=True)
    (sdist,) = out.glob("spark_kwire-*.tar.gz")
    (built,) = out.glob("spark_kwire-*.whl")
    return sdist, built


@pytest.fixture(scope="session")
def wheel(release_files) -> Path:
    return release_files[1]


def test_wheel_holds_only_the_library(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    dist_info = f"spark_kwire-{spark_kwire.__version__}.dist-info/"
    outside = [n for n in names if not (n.startswith("spark_kwire/") or n == "pyspark_kwire.py"
                                        or n.startswith(dist_info))]
    assert not outside, f"the wheel holds files outside the library: {outside}"
    assert "pyspark_kwire.py" in names and "spark_kwire/client/core/kafka_client.py" in names
    assert not [n for n in names if re.search(r"(^|/)(harness|tests|benchmarks|notebooks|docs|conf)/", n)]
    assert not [n for n in names if n.endswith((".pyc", ".nbi", ".nbc"))], "compiled caches in the wheel"
    assert zipfile.ZipFile(wheel).read(f"{dist_info}licenses/LICENSE") == (REPO / "LICENSE").read_bytes()


def _check_dist(sdist: Path, wheel: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / ".ci" / "check-dist"), str(sdist), str(wheel)],
                          capture_output=True, text=True, timeout=120)


def _doctored_wheel(wheel: Path, to: Path, *, drop: str, add: str, requires: str) -> Path:
    """A copy of `wheel` without the entries ending in `drop`, with a file `add` and a Requires-Dist line more."""
    doctored = to / wheel.name
    with zipfile.ZipFile(wheel) as original, zipfile.ZipFile(doctored, "w") as copy:
        for item in original.infolist():
            if item.filename.endswith(drop):
                continue
            data = original.read(item)
            if item.filename.endswith(".dist-info/METADATA"):
                data = data.replace(b"Requires-Dist: ", f"Requires-Dist: {requires}\nRequires-Dist: ".encode(), 1)
            copy.writestr(item, data)
        copy.writestr(add, "")
    return doctored


def _doctored_sdist(sdist: Path, to: Path, *, drop: str, add: str) -> Path:
    doctored = to / sdist.name
    top = sdist.name.removesuffix(".tar.gz")
    with tarfile.open(sdist) as original, tarfile.open(doctored, "w:gz") as copy:
        for member in original.getmembers():
            if not member.name.endswith(drop):
                copy.addfile(member, original.extractfile(member) if member.isfile() else None)
        extra = tarfile.TarInfo(f"{top}/{add}")
        copy.addfile(extra, io.BytesIO(b""))
    return doctored


def test_the_release_check_passes_these_files_and_refuses_doctored_ones(release_files, tmp_path):
    sdist, wheel = release_files
    passed = _check_dist(sdist, wheel)
    assert passed.returncode == 0, passed.stderr
    assert "hold the library" in passed.stdout

    doctored = tmp_path / "doctored"
    doctored.mkdir()
    bad_wheel = _doctored_wheel(wheel, doctored, drop="licenses/LICENSE", add="tests/test_leak.py",
                                requires="pandas<3,>=2.0")
    bad_sdist = _doctored_sdist(sdist, doctored, drop="spark_kwire/admin.py", add="harness/kafka_cluster.py")
    failed = _check_dist(bad_sdist, bad_wheel)
    assert failed.returncode == 1
    for problem in ("the wheel holds files outside the library: ['tests/test_leak.py']",
                    "the wheel has no spark_kwire-", "pandas is a runtime dependency (['pandas<3,>=2.0'])",
                    "the sdist holds files beyond the library and the project's metadata: ['harness/kafka_cluster.py']",
                    "the sdist lacks modules of the checkout's library: ['spark_kwire/admin.py']",
                    "the wheel's library differs from the sdist's"):
        assert problem in failed.stderr, f"{problem!r} not reported:\n{failed.stderr}"


def test_version_has_one_source(wheel):
    metadata = zipfile.ZipFile(wheel).read(f"spark_kwire-{spark_kwire.__version__}.dist-info/METADATA").decode()
    assert f"\nVersion: {spark_kwire.__version__}\n" in metadata
    from spark_kwire.client.core.connection import CLIENT_SOFTWARE_VERSION

    assert CLIENT_SOFTWARE_VERSION == spark_kwire.__version__
    # No other file of the package, nor pyproject.toml, writes the version out.
    literal = re.compile(rf"""["']{re.escape(spark_kwire.__version__)}["']""")
    written = [str(p.relative_to(REPO)) for p in [REPO / "pyproject.toml", *(REPO / "spark_kwire").rglob("*.py")]
               if literal.search(p.read_text()) and p.name != "_version.py"]
    assert not written, f"the version is written out in {written}; read spark_kwire._version instead"


def _venv_python() -> Path:
    return NOSPARK_VENV / "bin" / "python"


# What a user's environment may hold already: pandas 3 (current since 2026; PySpark only warns on it).
USERS_PANDAS = "pandas>=3"


def _pip(python: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), "-m", "pip", *args], capture_output=True, text=True, timeout=1200)


def _pandas_version(python: Path) -> str:
    return subprocess.run([str(python), "-c", "import pandas; print(pandas.__version__)"], capture_output=True,
                          text=True, check=True).stdout.strip()


def _install_wheel(python: Path, wheel: Path) -> subprocess.CompletedProcess:
    """`pip install` of the wheel as a user runs it: its dependencies resolved against what is installed."""
    _pip(python, "uninstall", "-y", "spark-kwire")
    return _pip(python, "install", str(wheel))


@pytest.fixture(scope="session")
def nospark_python(wheel) -> Path:
    """A virtualenv holding pandas 3, then the wheel and its dependencies, and no pyspark. Made once; the wheel is
    reinstalled when its contents change."""
    python = _venv_python()
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(NOSPARK_VENV)], check=True, timeout=300)
    stamp = NOSPARK_VENV / ".kwire-wheel"
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if not stamp.exists() or stamp.read_text() != digest:
        for step in (_pip(python, "install", "-q", USERS_PANDAS), _install_wheel(python, wheel)):
            assert step.returncode == 0, step.stdout[-2000:] + step.stderr[-4000:]
        stamp.write_text(digest)
    found = subprocess.run([str(python), "-c", "import pyspark"], capture_output=True, text=True)
    assert found.returncode != 0 and "No module named 'pyspark'" in found.stderr, "the venv must not hold pyspark"
    return python


def test_installing_the_wheel_leaves_an_installed_pandas_3_in_place(nospark_python, wheel):
    """kwire imports no pandas, so its wheel must not move the pandas of a user's environment (a `pandas<3` pin
    made pip replace pandas 3 by 2.x)."""
    assert _pip(nospark_python, "install", "-q", USERS_PANDAS).returncode == 0
    before = _pandas_version(nospark_python)
    assert int(before.split(".")[0]) >= 3, f"the environment should hold pandas 3 before the install, not {before}"
    installed = _install_wheel(nospark_python, wheel)
    assert installed.returncode == 0, installed.stdout[-2000:] + installed.stderr[-4000:]
    assert _pandas_version(nospark_python) == before, f"installing the wheel moved pandas {before}:\n{installed.stdout}"
    assert "pandas" not in installed.stdout.lower(), installed.stdout
    requires = zipfile.ZipFile(wheel).read(f"spark_kwire-{spark_kwire.__version__}.dist-info/METADATA").decode()
    assert not re.search(r"^Requires-Dist: pandas\b(?!.*extra ==)", requires, re.M), "pandas is a runtime dependency"


ADMIN_SCRIPT = textwrap.dedent("""
    import json, sys
    import spark_kwire
    from spark_kwire import admin

    bootstrap, topic, group = sys.argv[1:4]
    assert "site-packages" in spark_kwire.__file__, spark_kwire.__file__   # the wheel, not the checkout
    out = {"file": spark_kwire.__file__}
    out["topics"] = admin.describe_topics(bootstrap, [topic])
    out["every_topic"] = [t["topic"] for t in admin.describe_topics(bootstrap)]
    out["configs"] = admin.topic_configs(bootstrap, topic, ["retention.ms"])
    out["earliest"] = admin.earliest_offsets(bootstrap, topic)
    out["latest"] = admin.latest_offsets(bootstrap, topic)
    out["lag"] = admin.group_lag(bootstrap, group)
    out["groups"] = admin.list_groups(bootstrap)
    try:
        admin.group_lag(bootstrap, group + "-missing")
    except Exception as e:
        out["missing_group"] = f"{type(e).__name__}: {e}"
    admin.create_topic(bootstrap, topic + "-made", partitions=2)
    out["made"] = admin.describe_topics(bootstrap, [topic + "-made"])
    admin.delete_topic(bootstrap, topic + "-made")
    out["after_delete"] = topic + "-made" in admin.list_topics(bootstrap)
    out["pyspark_loaded"] = [m for m in sys.modules if m == "pyspark" or m.startswith("pyspark.")]
    print(json.dumps(out))
""")


def test_admin_works_without_pyspark(nospark_python, bootstrap, create_topic, produce, topic_name, tmp_path):
    from confluent_kafka import Consumer, TopicPartition
    from confluent_kafka.admin import AdminClient, ConfigResource

    create_topic(topic_name, partitions=3, config={"retention.ms": "3600000"})
    produce(topic_name, [(None, f"v{i}".encode(), None, None, i % 3) for i in range(30)])
    group = f"{topic_name}-g"
    # librdkafka commits offsets for the group: 4, 7 and 10 of partitions 0, 1, 2 (each holds 10 records)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    consumer.commit(offsets=[TopicPartition(topic_name, p, 4 + 3 * p) for p in range(3)], asynchronous=False)
    consumer.close()
    produce(topic_name, [(None, b"late", None, None, 0)] * 5)  # lag of partition 0 grows by 5

    script = tmp_path / "admin_script.py"
    script.write_text(ADMIN_SCRIPT)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    started = time.monotonic()
    run = subprocess.run([str(nospark_python), str(script), bootstrap, topic_name, group], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-4000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert str(NOSPARK_VENV) in out["file"] and out["pyspark_loaded"] == []
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic_name)
    librdkafka_admin = AdminClient({"bootstrap.servers": bootstrap})
    configs = librdkafka_admin.describe_configs([resource])[resource].result(30)
    assert out["topics"] == [{"topic": topic_name, "partitions": 3, "replication_factor": 1, "is_internal": False,
                              "cleanup_policy": configs["cleanup.policy"].value, "retention_ms": 3600000,
                              "max_message_bytes": int(configs["max.message.bytes"].value)}]
    assert topic_name in out["every_topic"]
    assert out["configs"] == {"retention.ms": "3600000"}
    assert out["earliest"] == {"0": 0, "1": 0, "2": 0} and out["latest"] == {"0": 15, "1": 10, "2": 10}
    lag = sorted((r["partition"], r["committed_offset"], r["latest_offset"], r["lag"]) for r in out["lag"])
    assert lag == [(0, 4, 15, 11), (1, 7, 10, 3), (2, 10, 10, 0)]
    assert all(r["group"] == group and r["topic"] == topic_name for r in out["lag"])
    assert group in out["groups"]
    assert f"Consumer group '{group}-missing' does not exist" in out["missing_group"]
    assert out["made"][0]["partitions"] == 2 and out["after_delete"] is False
    print(f"admin script without pyspark: {time.monotonic() - started:.1f}s")


def test_check_command_works_without_pyspark(nospark_python, bootstrap, create_topic, produce, topic_name, tmp_path):
    """`python -m spark_kwire check` and the `kwire` command from the wheel: a properties file as in conf/, a healthy
    topic (exit 0, JSON rows), a missing one (exit 1, its fix), a misspelt option (exit 2, the closest name)."""
    import socket

    from confluent_kafka.admin import AdminClient

    create_topic(topic_name, partitions=3)
    produce(topic_name, [(None, f"v{i}".encode(), None, None, i % 3) for i in range(300)])
    config = tmp_path / "client.properties"
    config.write_text(f"# as conf/client-plaintext.properties\nbootstrap.servers = {bootstrap}\n"
                      f"client.id=kwire-check-test\nrequest.timeout.ms: 20000\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}

    def run(*args, command=(str(nospark_python), "-m", "spark_kwire")):
        return subprocess.run([*command, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)

    healthy = run("check", "--config", str(config), "--topic", topic_name, "--throughput", "--json")
    assert healthy.returncode == 0, healthy.stdout[-4000:] + healthy.stderr[-4000:]
    report = json.loads(healthy.stdout)
    assert report["worst"] == "ok" and report["executor"] == "cli" and report["host"] == socket.gethostname()
    rows = {(r["step"], r["target"]): r for r in report["rows"]}
    partitions = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic_name, timeout=30) \
        .topics[topic_name].partitions
    assert f"{len(partitions)} partition(s)" in rows[("topic", f"topic {topic_name}")]["detail"]
    assert any(step == "throughput" and r["outcome"] == "ok" and "MB/s" in r["detail"]
               for (step, _), r in rows.items())
    kwire = NOSPARK_VENV / "bin" / "kwire"
    missing = run("check", "--bootstrap", bootstrap, "--topic", f"{topic_name}-missing", command=(str(kwire),))
    assert missing.returncode == 1, missing.stdout + missing.stderr
    assert "topic_missing" not in missing.stdout and "fix: Create the topic" in missing.stdout
    misspelt = run("check", "--bootstrap", bootstrap, "--option", f"subscibe={topic_name}")
    assert misspelt.returncode == 2 and "Did you mean 'subscribe'?" in misspelt.stderr
    assert run().returncode == 2 and "check" in run().stderr
