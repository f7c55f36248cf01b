"""Both kernel implementations under one test suite.

``records_kernels`` (module-scoped, parametrized ``numba`` / ``python``) binds
``spark_kwire.protocol.records.kernels`` to one implementation for a whole module, so that tests calling the
public API (``decode_record_set``, ``encode_record_batch``, ...) run once through each. Modules opt in with
``pytestmark = pytest.mark.usefixtures("records_kernels")``; ``kernels.using`` does the same for one block.
"""

from __future__ import annotations

import pytest

from spark_kwire.protocol.records import jit, kernels, pure

IMPLEMENTATIONS = {"numba": jit, "python": pure}


@pytest.fixture(scope="module", params=sorted(IMPLEMENTATIONS))
def records_kernels(request):
    with kernels.using(request.param) as implementation:
        yield implementation
