"""The format kernels' implementation choice and their disk cache's staleness check."""

from __future__ import annotations

import os
import subprocess
import sys
import types

from spark_kwire.formats import kernels


def test_no_numba_variable_chooses_python():
    code = "from spark_kwire.formats import kernels; print(kernels.current().implementation)"
    for value, expected in (("1", "python"), ("0", "numba")):
        out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "KWIRE_NO_NUMBA": value},
                             capture_output=True, text=True, check=True).stdout.strip()
        assert out == expected


def test_cache_is_flushed_when_any_kernel_source_changes(tmp_path):
    """numba checks a cached kernel against its own file only; a change in any kernel source (or in the
    constants compiled in) must flush them all."""
    flushed = []
    dispatcher = types.SimpleNamespace(_cache=types.SimpleNamespace(cache_path=str(tmp_path),
                                                                    flush=lambda: flushed.append(1)))
    source = tmp_path / "helper.py"
    source.write_text("A = 1\n")
    kernels._forget_stale_cache([dispatcher], [str(source)])
    assert flushed == [1]  # no stamp yet: whatever is cached may be stale
    kernels._forget_stale_cache([dispatcher], [str(source)])
    assert flushed == [1]  # unchanged sources: the cache is kept
    source.write_text("A = 2\n")
    kernels._forget_stale_cache([dispatcher], [str(source)])
    assert flushed == [1, 1]
