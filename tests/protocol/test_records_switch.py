"""The choice between the numba kernels and the pure-Python fallback: by default numba (imported when first
needed), ``KWIRE_NO_NUMBA`` asks for the fallback, and a numba that cannot be imported falls back with one warning.
The child processes encode, decode and partition real batches, and their results must equal this process's
(numba) results."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import textwrap

import pytest

from spark_kwire.protocol.records import jit, kernels, pure
from spark_kwire.protocol.records.kernels import KERNELS, NO_NUMBA_VARIABLE, numba_refused, using

# Encodes batches with headers in every codec, decodes them with a legacy message set and a transaction, and
# partitions keys; prints what was chosen, which modules got imported and the results, as JSON.
CHILD = textwrap.dedent("""
    import json, logging, struct, sys, zlib
    logging.basicConfig(level=logging.WARNING, format="WARNING %(name)s %(message)s")
    import pyarrow as pa
    import spark_kwire.client  # the whole package imports without numba too
    from spark_kwire.protocol.records import (HEADERS_TYPE, compress, decode_record_set, encode_record_batches,
                                              kernels, partition_for_keys, warm_up)
    warm_up()  # every call below on the chosen kernels (small calls would otherwise run on the pure-Python ones)

    def legacy(offset, value):
        body = struct.pack(">bbqi", 1, 0, 1_700_000_000_000, -1) + struct.pack(">i", len(value)) + value
        return struct.pack(">qiI", offset, len(body) + 4, zlib.crc32(body)) + body

    values = pa.array([b"v%d" % i * (i % 7) for i in range(300)])
    keys = pa.array([None if i % 5 == 0 else b"k%d" % i for i in range(300)])
    headers = pa.array([[{"key": "h", "value": b"%d" % i}] if i % 3 else None for i in range(300)], HEADERS_TYPE)
    buf = legacy(0, b"old")
    offset = 1
    for codec in ("none", "gzip", "snappy", "lz4", "zstd"):
        for batch in encode_record_batches(values, keys, timestamps_ms=1_700_000_000_000, headers=headers,
                                           compression=codec, max_batch_bytes=2000, producer_id=3,
                                           producer_epoch=0, base_sequence=0, transactional=codec == "gzip"):
            buf += struct.pack(">q", offset) + batch[8:]
            offset += struct.unpack_from(">i", batch, 57)[0]
    res = decode_record_set(buf, start_offset=0, read_committed=True, aborted_transactions=[(3, 301)],
                            include_headers=True)
    print(json.dumps({
        "implementation": kernels.IMPLEMENTATION, "why": kernels.WHY,
        "numba_imported": "numba" in sys.modules, "llvmlite_imported": "llvmlite" in sys.modules,
        "offsets": res.offset.tolist(), "timestamps": res.timestamp.tolist(),
        "keys": [None if k is None else k.hex() for k in res.key.to_pylist()],
        "values": [v.hex() for v in res.value.to_pylist()],
        "headers": json.dumps(res.headers.to_pylist(), default=lambda b: b.hex()),
        "next_offset": res.next_offset, "partitions": partition_for_keys(keys, 7).tolist(),
    }))
""")


def run_child(env_extra: dict, pythonpath: str | None = None) -> tuple[dict, str]:
    import os

    env = {k: v for k, v in os.environ.items() if k not in (NO_NUMBA_VARIABLE, "PYTHONPATH")}
    env.update(env_extra)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


@pytest.fixture(scope="module")
def numba_results():
    """The child's results computed with the numba kernels."""
    results, stderr = run_child({})
    assert results["implementation"] == "numba", results["why"]
    assert "WARNING" not in stderr, stderr
    return results


def _same_records(a: dict, b: dict) -> None:
    for field in ("offsets", "timestamps", "keys", "values", "headers", "next_offset", "partitions"):
        assert a[field] == b[field], field


def test_the_variable_chooses_the_pure_python_kernels_without_importing_numba(numba_results):
    results, stderr = run_child({NO_NUMBA_VARIABLE: "1"})
    assert results["implementation"] == "python"
    assert results["why"] == f"{NO_NUMBA_VARIABLE} is set"
    assert not results["numba_imported"] and not results["llvmlite_imported"]
    assert "WARNING" not in stderr, stderr  # asked for: nothing to warn about
    assert len(results["offsets"]) > 1000  # every codec was decoded, the aborted gzip batches dropped
    _same_records(results, numba_results)


def test_a_numba_that_cannot_be_imported_falls_back_with_one_warning(numba_results, tmp_path):
    broken = tmp_path / "numba"
    broken.mkdir()
    (broken / "__init__.py").write_text('raise ImportError("this numba is broken on purpose")\n')
    results, stderr = run_child({}, pythonpath=str(tmp_path))
    assert results["implementation"] == "python"
    assert "this numba is broken on purpose" in results["why"]
    warnings = [line for line in stderr.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1, stderr
    assert "numba cannot be imported" in warnings[0] and NO_NUMBA_VARIABLE in warnings[0]
    _same_records(results, numba_results)


@pytest.mark.parametrize("value, refused", [("", False), ("0", False), ("false", False), ("No", False),
                                            ("off", False), ("1", True), ("true", True), (" YES ", True),
                                            ("on", True)])
def test_variable_values(value, refused):
    assert numba_refused({NO_NUMBA_VARIABLE: value}) is refused
    assert numba_refused({}) is False


def test_a_value_that_is_neither_true_nor_false_is_an_error_naming_the_accepted_ones():
    with pytest.raises(ValueError, match=r"KWIRE_NO_NUMBA='maybe': expected one of 1, true, yes, on .*'0'"):
        numba_refused({NO_NUMBA_VARIABLE: "maybe"})


def test_this_process_uses_numba_unless_told_not_to():
    assert kernels.IMPLEMENTATION == ("python" if numba_refused() else "numba"), kernels.WHY


@pytest.mark.parametrize("name", KERNELS)
def test_both_implementations_offer_every_kernel_with_the_same_parameters(name):
    compiled, plain = getattr(jit, name), getattr(pure, name)
    if name == "HW_CRC32C":
        assert isinstance(compiled, bool) and plain is False
        return
    compiled = getattr(compiled, "py_func", compiled)  # a numba dispatcher wraps the Python function
    assert list(inspect.signature(compiled).parameters) == list(inspect.signature(plain).parameters)


def test_using_rebinds_and_restores():
    original = kernels.decode_regions
    with using("python"):
        assert kernels.decode_regions is pure.decode_regions
    assert kernels.decode_regions is original
