"""The fault-injection suite (issue #10) is heavy: several 3-node clusters, a Spark standalone cluster,
process kills. It runs when KWIRE_RUN_FAULTS=1 and is not yet part of `make test`: on the shared 2-core
machine it did not finish within the session's CI budget, so it stays opt-in until it is trimmed."""

import os

import pytest

if os.environ.get("KWIRE_RUN_FAULTS") != "1":
    def pytest_collection_modifyitems(config, items):
        reason = ("fault-injection suite is opt-in until it fits CI's time budget (issue #10): "
                  "run `KWIRE_RUN_FAULTS=1 make test PYTEST_ARGS=tests/faults`")
        for item in items:
            if "tests/faults/" in str(item.fspath):
                item.add_marker(pytest.mark.skip(reason=reason))
