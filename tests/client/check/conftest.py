"""Fixtures of the check's tests: the staged cluster (staging.py), started once per test module that asks for it."""

from __future__ import annotations

import pytest

from tests.client.check.staging import staged_cluster


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    with staged_cluster(tmp_path_factory.mktemp("staged")) as cluster:
        yield cluster
