"""Both kernel implementations under one test suite.

``records_kernels`` (module-scoped, parametrized ``numba`` / ``python``) rebinds the names of
``spark_kwire.protocol.records.kernels`` to one implementation for a whole module, so that tests calling the
public API (``decode_record_set``, ``encode_record_batch``, ...) run once through each. Modules opt in with
``pytestmark = pytest.mark.usefixtures("records_kernels")``.
"""

from __future__ import annotations

import contextlib

import pytest

from spark_kwire.protocol.records import jit, kernels, pure

IMPLEMENTATIONS = {"numba": jit, "python": pure}


@contextlib.contextmanager
def kernels_of(name: str):
    """Runs the block with ``kernels`` bound to implementation ``name``."""
    implementation = IMPLEMENTATIONS[name]
    with pytest.MonkeyPatch.context() as patch:
        for kernel in kernels.KERNELS:
            patch.setattr(kernels, kernel, getattr(implementation, kernel))
        yield implementation


@pytest.fixture(scope="module", params=sorted(IMPLEMENTATIONS))
def records_kernels(request):
    with kernels_of(request.param) as implementation:
        yield implementation
