"""Where numba caches the kernels when the usual places cannot be written: a read-only installation (a copy of
the package with its write bits removed, as a locked-down site-packages) and a home directory nobody can write
in. Before this, numba raised at import ("no locator available"); now the kernels are cached in a private
temporary directory, or not at all when that is unsafe, with one warning, and records still decode and encode.

Tests usually run as root, whom permission bits do not stop: the child then runs as root without the
capabilities that bypass them (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER), through ``setpriv``.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import spark_kwire

CHILD = textwrap.dedent("""
    import json, logging, sys
    logging.basicConfig(level=logging.WARNING, format="WARNING %(name)s %(message)s")
    import pyarrow as pa
    import spark_kwire
    from spark_kwire.protocol.records import decode_record_set, encode_record_batches, kernels, warm_up
    from spark_kwire.protocol.records.jit.cache import cache_location

    warm_up()  # compiles (or loads) every kernel in this process: no helper process compiles meanwhile
    values = pa.array([b"value-%d" % i for i in range(50)])
    batches = encode_record_batches(values, pa.array([b"k"] * 50), timestamps_ms=7, compression="lz4",
                                    max_batch_bytes=400)
    res = decode_record_set(batches[0], start_offset=0)
    stats = [k.stats for k in (getattr(kernels, name) for name in kernels.KERNELS) if hasattr(k, "stats")]
    print(json.dumps({
        "package": spark_kwire.__file__, "implementation": kernels.IMPLEMENTATION,
        "cache": cache_location(), "cache_path": kernels.count_entries.stats.cache_path,
        "hits": sum(sum(s.cache_hits.values()) for s in stats),
        "misses": sum(sum(s.cache_misses.values()) for s in stats),
        "values": [v.decode() for v in res.value.to_pylist()], "batches": len(batches),
    }))
""")

DROP_OVERRIDES = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner"]


def _set_writable(root: Path, writable: bool) -> None:
    for path in [root, *root.rglob("*")]:
        mode = path.stat().st_mode
        path.chmod(mode | stat.S_IWUSR if writable else mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


@pytest.fixture
def read_only_install(tmp_path):
    """(site directory holding a read-only copy of spark_kwire, an unwritable home, a writable TMPDIR)."""
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: permission bits cannot be enforced on the child")
    site = tmp_path / "site"
    shutil.copytree(Path(spark_kwire.__file__).parent, site / "spark_kwire",
                    ignore=shutil.ignore_patterns("__pycache__"))
    home = tmp_path / "home"
    home.mkdir()
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    _set_writable(site, False)
    _set_writable(home, False)
    yield site, home, tmpdir
    _set_writable(site, True)
    _set_writable(home, True)


def run_child(site: Path, home: Path, tmpdir: Path, **env_extra) -> tuple[dict, list[str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "KWIRE_", "PYTHON"))}
    env.update(HOME=str(home), TMPDIR=str(tmpdir), PYTHONPATH=str(site), XDG_CACHE_HOME=str(home / ".cache"))
    env.update(env_extra)
    prefix = DROP_OVERRIDES if os.geteuid() == 0 else []
    out = subprocess.run([*prefix, sys.executable, "-c", CHILD], env=env, cwd=tmpdir, capture_output=True,
                         text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["package"].startswith(str(site)), result["package"]  # the read-only copy, not the checkout
    assert result["implementation"] == "numba"
    assert result["values"] == [f"value-{i}" for i in range(len(result["values"]))] and result["values"]
    return result, [line for line in out.stderr.splitlines() if line.startswith("WARNING")]


def test_unwritable_install_caches_in_a_private_temporary_directory(read_only_install):
    site, home, tmpdir = read_only_install
    private = tmpdir / f"spark-kwire-numba-{os.geteuid()}"
    first, warnings = run_child(site, home, tmpdir)
    assert first["cache"] == ["temporary directory", str(private)]
    assert first["cache_path"].startswith(str(private))
    assert first["misses"] >= 1 and first["hits"] == 0  # compiled, then saved
    assert len(warnings) == 1, warnings
    assert "numba cannot cache spark_kwire's record kernels" in warnings[0] and str(private) in warnings[0]
    assert "NUMBA_CACHE_DIR" in warnings[0]
    assert stat.S_IMODE(private.stat().st_mode) == 0o700
    assert list(private.rglob("*.nbi")), "nothing was cached"
    assert not list(site.rglob("__pycache__/*.nbi"))  # the read-only copy was not written to
    second, warnings = run_child(site, home, tmpdir)
    assert second["hits"] >= 1 and second["misses"] == 0  # the next process loads what the first one compiled
    assert len(warnings) == 1, warnings


def test_a_temporary_directory_others_can_write_is_not_trusted_and_nothing_is_cached(read_only_install):
    # machine code loaded from a directory another user can write would run in this process
    site, home, tmpdir = read_only_install
    shared = tmpdir / f"spark-kwire-numba-{os.geteuid()}"
    shared.mkdir()
    shared.chmod(0o777)
    result, warnings = run_child(site, home, tmpdir)
    assert result["cache"] == ["none", None]
    assert result["cache_path"] is None
    assert len(warnings) == 1, warnings
    assert "each process compiles them on first use" in warnings[0] and "NUMBA_CACHE_DIR" in warnings[0]
    assert not list(shared.iterdir())


def test_numba_cache_dir_is_honoured_without_a_warning(read_only_install, tmp_path):
    site, home, tmpdir = read_only_install
    chosen = tmp_path / "chosen-cache"
    result, warnings = run_child(site, home, tmpdir, NUMBA_CACHE_DIR=str(chosen))
    assert result["cache"][0] == "numba's default"
    assert result["cache_path"].startswith(str(chosen))
    assert warnings == []
    assert list(chosen.rglob("*.nbi"))


HELPER_CHILD = textwrap.dedent("""
    import json, sys
    import pyarrow as pa
    from spark_kwire.protocol.records import compiled_notes, decode_record_set, kernels
    from spark_kwire.protocol.records.compilation import warming

    with kernels.using("python"):
        from spark_kwire.protocol.records import encode_record_batches
        batch = encode_record_batches(pa.array([b"v"] * 50), None, timestamps_ms=7)[0]
    noted_before = compiled_notes.is_cached("decode")
    warming.PURE_SECONDS_BEFORE_COMPILING = 0.0  # a first call however small asks for a compile
    res = decode_record_set(batch, start_offset=0)
    asked = sorted(warming._asked)
    assert warming.wait(timeout=600)  # loads what a helper compiled
    warming.load("decode")  # (when none was asked to: from the cache)
    print(json.dumps({"noted_before": noted_before, "asked": asked, "records": res.record_count,
                      "notes": compiled_notes.notes_directory(), "how": warming.timings()["decode"]["how"]}))
""")


def test_in_an_unwritable_install_a_helper_compiles_into_the_private_directory_for_later_processes(
        read_only_install):
    site, home, tmpdir = read_only_install
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "KWIRE_", "PYTHON"))}
    env.update(HOME=str(home), TMPDIR=str(tmpdir), PYTHONPATH=str(site), XDG_CACHE_HOME=str(home / ".cache"))
    prefix = DROP_OVERRIDES if os.geteuid() == 0 else []
    results = []
    for _ in range(2):
        out = subprocess.run([*prefix, sys.executable, "-c", HELPER_CHILD], env=env, cwd=tmpdir,
                             capture_output=True, text=True, timeout=900)
        assert out.returncode == 0, out.stderr[-3000:]
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    private = str(tmpdir / f"spark-kwire-numba-{os.geteuid()}")
    first, second = results
    assert first["notes"] == private and first["records"] == 50
    assert not first["noted_before"] and first["asked"] == ["decode"]
    assert first["how"] in ("waited for a helper, then loaded", "loaded from numba's cache")  # not compiled here
    assert "compiled decode" in "".join(p.read_text() for p in Path(private).glob("spark_kwire-compile-*.log"))
    assert second["noted_before"] and second["asked"] == []  # the next process finds the helper's work
    assert second["how"] == "loaded from numba's cache"
    assert not list(site.rglob("__pycache__/*.nbi"))
