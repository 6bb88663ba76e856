"""Test-wide settings: under CI (``CI`` set) hypothesis draws the same examples every run,
so whether a submission lands does not depend on luck; locally every run explores anew.

The suite runs in two pytest-xdist workers (``addopts`` in pyproject.toml; ``-n 0`` runs it in one process).
Each worker has a Redis of its own (tests/integration/conftest.py), but the 3+3 cluster of
``REDIS_CLUSTER_URL`` is one for the run and its tests empty it: every test using it is sent to one worker (and
holds a lock on it meanwhile: tests/integration/conftest.py ``cluster_url``)."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


CLUSTER_FIXTURE = "_session_cluster_url"
"""The fixture every test on the shared cluster reaches (``cluster_url`` and the cluster servers take it)."""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test on the run's shared cluster goes to the same xdist worker (``--dist loadgroup``).

    First among the hooks: the xdist worker reads the ``xdist_group`` marks in its own hook of this name, and
    called after it this one's marks came too late, so the cluster tests were spread over both workers
    (tests/integration/test_cluster.py checks the group reaches the test's id)."""
    for item in items:
        if CLUSTER_FIXTURE in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("cluster"))
