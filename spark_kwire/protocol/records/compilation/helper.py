"""The helper process that compiles paths' numba kernels into the disk cache (started by ``background_compile``).

``python -m spark_kwire.protocol.records.compilation.helper PATH...`` compiles each path by running its sample
through the numba kernels, notes it as cached (``compiled_notes``) and releases its lock, one path after the
other; each line of its standard error (the log ``background_compile`` gives it) says what it compiled and
how long that took, or why it failed.
"""

from __future__ import annotations

import os
import sys
import time

from .. import batch, encoding, kernels, partitioner
from . import warming  # noqa: F401 - the modules register their samples
from .. import compiled_notes as notes

HELPER_NICENESS = 5  # the helper yields the cores to the query a little; it still gets its share when waited for


def main(paths: list[str]) -> int:
    try:
        os.nice(HELPER_NICENESS)
    except OSError:
        pass
    failed = 0
    for path in paths:
        try:
            implementation = kernels.load()
            if kernels.IMPLEMENTATION != "numba":
                raise RuntimeError(f"numba is not usable here: {kernels.WHY}")
            started = time.perf_counter()
            warming.run_sample(path, implementation)
            if not notes.remember(path, implementation.cache.loaded_index_files()):
                raise RuntimeError(f"numba did not cache the {path} kernels (see jit/cache.py)")
            print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} pid {os.getpid()}: compiled {path} in "
                  f"{time.perf_counter() - started:.2f} s", file=sys.stderr)
        except Exception as exc:  # noqa: BLE001 - reported in the log, and by the waiting process
            print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} pid {os.getpid()}: compiling {path} failed: "
                  f"{type(exc).__name__}: {exc}", file=sys.stderr)
            failed += 1
        finally:
            notes.unlock(path)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
