"""A process does not wait for numba when it can do without: its first calls run on the pure-Python kernels;
once they pass what loading numba would cost, a helper process compiles the path into numba's disk cache (or,
when the cache holds it already, the process loads it), and past a budget the process loads the numba kernels.
One helper per path serves every process of the machine; when none can run, the process compiles for itself.
Each case runs in new processes with an empty numba cache of its own, so that compiling really takes seconds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pyarrow as pa
import pytest

from spark_kwire.protocol.records import decode_record_set, encode_record_batches, kernels
from spark_kwire.protocol.records.compilation import warming

pytestmark = pytest.mark.skipif(kernels.IMPLEMENTATION != "numba", reason="nothing compiles without numba")

PRELUDE = textwrap.dedent("""
    import json, os, struct, sys, time
    import pyarrow as pa
    from spark_kwire.protocol.records import (compiled_notes, decode_record_set, encode_record_batches, kernels,
                                              partition_for_keys)
    from spark_kwire.protocol.records.compilation import warming

    def fetch(n, value_bytes=100):
        values = pa.array([bytes([i % 251]) * value_bytes for i in range(n)])
        with kernels.using("python"):  # building the input must not start anything
            batches = encode_record_batches(values, pa.array([b"k%d" % i for i in range(n)]), timestamps_ms=1,
                                            compression="none", max_batch_bytes=1 << 20)
        out, base = [], 0
        for b in batches:
            out.append(struct.pack(">q", base) + b[8:])
            base += struct.unpack_from(">i", b, 57)[0]
        return b"".join(out)

    def big_enough():  # input whose estimated pure-Python time alone exceeds any budget
        return fetch(int(3 * max(warming.PURE_SECONDS_WHILE_COMPILING, warming.PURE_SECONDS_BEFORE_LOADING)
                         / warming._PURE_SECONDS_PER_BYTE["decode"] / 10_000), value_bytes=10_000)

    def worth_compiling():  # input whose estimated pure-Python time passes where a compile starts, within budget
        seconds = (warming.PURE_SECONDS_BEFORE_COMPILING + warming.PURE_SECONDS_WHILE_COMPILING) / 2
        return fetch(int(seconds / warming._PURE_SECONDS_PER_BYTE["decode"] / 10_000), value_bytes=10_000)

    def ask_at_first_call():  # for cases about the helper itself: any call, however small, starts one
        warming.PURE_SECONDS_BEFORE_COMPILING = 0.0

    def stats(name):  # (cache hits, cache misses) of a numba kernel in this process
        from spark_kwire.protocol.records import jit
        s = getattr(jit, name).stats
        return sum(s.cache_hits.values()), sum(s.cache_misses.values())
""")


def run(code: str, cache, extra_env: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "KWIRE_"))}
    env["NUMBA_CACHE_DIR"] = str(cache)
    env.update(extra_env or {})
    out = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code)], env=env, capture_output=True,
                         text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["stderr"] = out.stderr
    return result


def helper_log(cache) -> str:
    logs = list(cache.glob("spark_kwire-compile-*.log"))
    return "".join(p.read_text() for p in logs)


def test_small_calls_start_no_compile_and_larger_ones_run_in_pure_python_while_a_helper_compiles(tmp_path):
    result = run("""
        small = fetch(2000)
        res = decode_record_set(small, start_offset=0)
        after_small = {"small_asked": sorted(warming._asked), "small_pure": warming.timings()["pure_seconds"]}
        medium = decode_record_set(worth_compiling(), start_offset=0)
        first = {"numba_imported": "numba" in sys.modules, "asked": sorted(warming._asked),
                 "ready": warming.is_ready("decode"), "medium_records": medium.record_count}
        assert warming.wait(timeout=600)  # loads what the helper cached into this process
        after = decode_record_set(small, start_offset=0)
        print(json.dumps({**after_small, **first, "records": res.record_count,
                          "hits_misses": stats("decode_v2_regions"),
                          "same": after.value.to_pylist() == res.value.to_pylist()
                                  and after.offset.tolist() == res.offset.tolist(),
                          "noted": compiled_notes.is_cached("decode")}))
    """, tmp_path / "cache")
    assert result["small_asked"] == [] and result["small_pure"] > 0, "a small first call started a compile"
    assert not result["numba_imported"], "the first decodes imported numba"
    assert result["asked"] == ["decode"] and not result["ready"] and result["medium_records"] > 0
    assert result["records"] == 2000 and result["same"] and result["noted"]
    hits, misses = result["hits_misses"]
    assert hits >= 1 and misses == 0, "this process compiled instead of loading what the helper compiled"
    assert "compiled decode" in helper_log(tmp_path / "cache")


def test_a_call_past_the_budget_waits_for_the_helper_then_loads(tmp_path):
    result = run("""
        res = decode_record_set(big_enough(), start_offset=0)
        print(json.dumps({"ready": warming.is_ready("decode"), "records": res.record_count,
                          "how": warming.timings()["decode"]["how"], "hits_misses": stats("decode_v2_regions")}))
    """, tmp_path / "cache")
    assert result["ready"] and result["records"] > 0
    assert result["how"] == "waited for a helper, then loaded"
    assert result["hits_misses"][1] == 0


def test_a_write_has_one_helper_compile_partitioning_and_encoding(tmp_path):
    result = run("""
        ask_at_first_call()
        keys = pa.array([b"k%d" % i for i in range(500)])
        partition_for_keys(keys, 4)
        encode_record_batches(pa.array([b"v"] * 500), keys)
        asked = sorted(warming._asked)
        assert warming.wait(timeout=600)
        print(json.dumps({"asked": asked, "noted": [compiled_notes.is_cached(p) for p in ("partition", "encode")],
                          "decode_noted": compiled_notes.is_cached("decode")}))
    """, tmp_path / "cache")
    assert result["asked"] == ["encode", "partition"]
    assert result["noted"] == [True, True] and not result["decode_noted"]  # a write compiles no decoder
    log = helper_log(tmp_path / "cache")
    assert log.count("compiled partition") == 1 and log.count("compiled encode") == 1, log


def test_with_the_kernels_cached_a_small_call_never_imports_numba_and_a_large_one_loads_them(tmp_path):
    cache = tmp_path / "cache"
    run("""
        from spark_kwire.protocol.records import warm_up
        warm_up()
        print(json.dumps({}))
    """, cache)
    result = run("""
        res = decode_record_set(fetch(2000), start_offset=0)
        small = {"numba_imported": "numba" in sys.modules, "pure_seconds": warming.timings()["pure_seconds"],
                 "asked": sorted(warming._asked)}
        big = decode_record_set(big_enough(), start_offset=0)
        print(json.dumps({**small, "records": res.record_count, "how": warming.timings()["decode"]["how"],
                          "hits_misses": stats("decode_v2_regions")}))
    """, cache)
    assert not result["numba_imported"] and result["pure_seconds"] > 0 and result["asked"] == []
    assert result["records"] == 2000
    assert result["how"] == "loaded from numba's cache"
    hits, misses = result["hits_misses"]
    assert hits >= 1 and misses == 0


def test_processes_asking_at_once_share_one_helper(tmp_path):
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "KWIRE_"))}
    env["NUMBA_CACHE_DIR"] = str(cache)
    code = PRELUDE + textwrap.dedent("""
        res = decode_record_set(big_enough(), start_offset=0)
        print(json.dumps({"how": warming.timings()["decode"]["how"], "records": res.record_count}))
    """)
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(3)]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, err[-3000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert all(r["records"] > 0 for r in results)
    # none compiles for itself: each waits for the one helper, or (started late on a busy machine, after the
    # helper finished) loads what it cached; the helper compiled once
    hows = [r["how"] for r in results]
    assert set(hows) <= {"waited for a helper, then loaded", "loaded from numba's cache"}, results
    assert "waited for a helper, then loaded" in hows, results
    assert helper_log(cache).count("compiled decode") == 1, helper_log(cache)


def test_a_forked_child_waits_for_the_helper_its_parent_started(tmp_path):
    result = run("""
        ask_at_first_call()
        decode_record_set(fetch(100), start_offset=0)  # the parent starts a helper
        pid = os.fork()
        if pid == 0:
            ok = decode_record_set(big_enough(), start_offset=0).record_count > 0 and warming.is_ready("decode")
            how = warming.timings()["decode"]["how"]
            with open(os.environ["CHILD_OUT"], "w") as f:
                f.write(how)
            os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"child_exit": os.waitstatus_to_exitcode(status)}))
    """, tmp_path / "cache", {"CHILD_OUT": str(tmp_path / "child")})
    assert result["child_exit"] == 0
    # the helper may have finished before the child needed the kernels: then it loaded them; never compiled
    assert (tmp_path / "child").read_text() in ("waited for a helper, then loaded", "loaded from numba's cache")
    assert helper_log(tmp_path / "cache").count("compiled decode") == 1


def test_a_helper_that_dies_leaves_the_process_compiling_for_itself_with_a_warning(tmp_path):
    # /bin/false as the helper's Python: it exits at once, holding the lock of a process that no longer exists
    result = run("""
        import logging
        logging.basicConfig(level=logging.WARNING, format="WARNING %(message)s")
        sys.executable = "/bin/false"
        decode_record_set(fetch(100), start_offset=0)
        res = decode_record_set(big_enough(), start_offset=0)
        print(json.dumps({"how": warming.timings()["decode"]["how"], "records": res.record_count,
                          "noted": compiled_notes.is_cached("decode")}))
    """, tmp_path / "cache")
    assert result["how"] == "compiled in this process" and result["records"] > 0
    assert result["noted"], "what this process compiled was not noted for the others"
    warnings = [line for line in result["stderr"].splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1 and "stopped without caching them" in warnings[0], warnings


def test_without_a_python_to_run_a_helper_the_process_compiles_when_its_budget_is_spent(tmp_path):
    result = run("""
        sys.executable = ""
        decode_record_set(fetch(100), start_offset=0)
        served_pure = not warming.is_ready("decode")
        res = decode_record_set(big_enough(), start_offset=0)
        print(json.dumps({"served_pure": served_pure, "how": warming.timings()["decode"]["how"],
                          "asked": sorted(warming._asked), "records": res.record_count}))
    """, tmp_path / "cache")
    assert result["served_pure"] and result["asked"] == [] and result["records"] > 0
    assert result["how"] == "compiled in this process"


def test_inside_using_every_call_runs_on_the_chosen_kernels():
    values = pa.array([b"v"] * 10)
    with kernels.using("numba"):
        assert warming.choose("decode", 10) is kernels
        batch = encode_record_batches(values, None, timestamps_ms=1)[0]
        assert decode_record_set(batch, start_offset=0).record_count == 10
    with kernels.using("python"):
        assert warming.choose("encode", 10) is kernels


def test_every_path_has_a_sample_and_warm_up_marks_them_ready():
    from spark_kwire.protocol.records import warm_up

    assert set(warming._samples) == {"decode", "decode_headers", "encode", "partition", "hash"}
    warm_up()
    assert all(warming.is_ready(path) for path in warming._samples)


def test_preload_loads_what_is_cached_and_has_a_helper_compile_the_rest(tmp_path):
    cache = tmp_path / "cache"
    run("""
        ask_at_first_call()
        decode_record_set(fetch(100), start_offset=0)
        assert warming.wait(timeout=600)
        print(json.dumps({}))
    """, cache)
    result = run("""
        done = warming.preload()
        print(json.dumps({"done": done, "numba": "numba" in sys.modules}))
    """, cache)
    assert result["done"]["decode"] == "loaded" and result["numba"]
    assert result["done"]["encode"] == result["done"]["partition"] == "compiling in a helper"
    assert result["done"]["decode_headers"] == "not cached"  # rarely used: compiled when a call needs it
