"""A fresh process does not wait for numba: its first calls run on the pure-Python kernels while the numba ones
compile in a background thread, up to a budget of input past which calls wait for them; a forked child
compiles for itself. Each case runs in a new process with an empty numba cache, so that compiling really takes
seconds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pyarrow as pa
import pytest

from spark_kwire.protocol.records import decode_record_set, encode_record_batches, kernels, warming

pytestmark = pytest.mark.skipif(kernels.IMPLEMENTATION != "numba", reason="nothing compiles without numba")

PRELUDE = textwrap.dedent("""
    import json, os, struct, sys, time
    import pyarrow as pa
    from spark_kwire.protocol.records import (decode_record_set, encode_record_batches, jit, partition_for_keys,
                                              warming)

    def fetch(n, value_bytes=100):
        values = pa.array([bytes([i % 251]) * value_bytes for i in range(n)])
        batches = encode_record_batches(values, pa.array([b"k%d" % i for i in range(n)]), timestamps_ms=1,
                                        compression="none", max_batch_bytes=1 << 20)
        out, base = [], 0
        for b in batches:
            out.append(struct.pack(">q", base) + b[8:])
            base += struct.unpack_from(">i", b, 57)[0]
        return b"".join(out)

    def compiled(kernel):  # signatures numba compiled or loaded in this process
        return len(kernel.signatures)
""")


def run(code: str, tmp_path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "KWIRE_"))}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba-cache")
    out = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code)], env=env, capture_output=True,
                         text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_first_calls_do_not_wait_for_the_compiler(tmp_path):
    result = run("""
        small = fetch(2000)
        res = decode_record_set(small, start_offset=0)
        served_before_ready = not warming.is_ready("decode")
        first = (res.record_count, res.value.to_pylist()[:3])
        assert warming.wait(timeout=600)
        after = decode_record_set(small, start_offset=0)
        print(json.dumps({"served_before_ready": served_before_ready, "first": first[0],
                          "same": after.value.to_pylist() == res.value.to_pylist()
                                  and after.offset.tolist() == res.offset.tolist(),
                          "compiled": compiled(jit.decode_v2_regions)}, default=repr))
    """, tmp_path)
    assert result["served_before_ready"], "the first decode waited for the compiler"
    assert result["first"] == 2000
    assert result["same"]
    assert result["compiled"] == 1  # the background thread compiled it, the later call used it


def test_a_call_past_the_budget_waits_for_the_compiled_kernels(tmp_path):
    result = run(f"""
        big = fetch({warming.PURE_BUDGET_BYTES // 100 + 20_000})
        assert len(big) > warming.PURE_BUDGET_BYTES
        res = decode_record_set(big, start_offset=0)
        print(json.dumps({{"ready": warming.is_ready("decode"), "records": res.record_count,
                          "compiled": compiled(jit.decode_v2_regions)}}))
    """, tmp_path)
    assert result["ready"] and result["compiled"] == 1
    assert result["records"] == warming.PURE_BUDGET_BYTES // 100 + 20_000


def test_a_forked_child_compiles_for_itself(tmp_path):
    # the parent's compiling thread does not exist in the child: waiting for it would hang forever
    result = run(f"""
        small = fetch(100)
        decode_record_set(small, start_offset=0)  # the parent starts compiling in a thread
        pid = os.fork()
        if pid == 0:
            big = fetch({warming.PURE_BUDGET_BYTES // 100 + 20_000})
            ok = decode_record_set(big, start_offset=0).record_count > 0 and warming.is_ready("decode")
            os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({{"child_exit": os.waitstatus_to_exitcode(status)}}))
    """, tmp_path)
    assert result["child_exit"] == 0


def test_inside_using_every_call_runs_on_the_chosen_kernels():
    values = pa.array([b"v"] * 10)
    with kernels.using("numba"):
        assert warming.kernels_for("decode", 10) is kernels
        batch = encode_record_batches(values, None, timestamps_ms=1)[0]
        assert decode_record_set(batch, start_offset=0).record_count == 10
    with kernels.using("python"):
        assert warming.kernels_for("encode", 10) is kernels


def test_every_path_has_a_sample_and_warm_up_marks_them_ready():
    from spark_kwire.protocol.records import warm_up

    assert set(warming._samples) == {"decode", "decode_headers", "encode", "partition", "hash"}
    warm_up()
    assert all(warming.is_ready(path) for path in warming._samples)


def test_with_the_kernels_in_numbas_disk_cache_the_first_calls_load_them(tmp_path):
    run("""
        from spark_kwire.protocol.records import warm_up
        warm_up()
        print(json.dumps({}))
    """, tmp_path)
    result = run("""
        small = fetch(2000)
        res = decode_record_set(small, start_offset=0)
        print(json.dumps({"ready_at_first_call": warming.is_ready("decode"), "pure_bytes": warming._pure_bytes,
                          "records": res.record_count, "loaded": compiled(jit.decode_v2_regions)}))
    """, tmp_path)
    assert result["records"] == 2000
    assert result["pure_bytes"] == 0, "calls ran on the pure-Python kernels although numba's cache held them"
    assert result["ready_at_first_call"] and result["loaded"] == 1
