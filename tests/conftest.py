"""Shared fixtures and options (helpers live in ``tests/support/`` and ``tests/foundry.py``)."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, settings

from adapter.engine import preview, snapshot

# ---------------------------------------------------------------- hypothesis: one answer per commit
# ``make test`` and ``.ci/run`` give the same answer on the same commit: every property test
# draws the same examples on every run (``derandomize``: the seed is a hash of the test
# function), keeps no example database between runs and has no deadline (a slow machine is
# not a failing property). ``--hypothesis-profile=random`` (hypothesis's own pytest option)
# draws afresh at every run and keeps the failures it finds in ``.hypothesis/`` to replay
# them first; ``--hypothesis-seed=N`` repeats such a run. docs/testing.md says how a failure
# found that way becomes a named example.
_QUIET = [HealthCheck.too_slow]  # a health check that measures time: not a property
settings.register_profile("repeatable", derandomize=True, database=None, deadline=None,
                          print_blob=True, suppress_health_check=_QUIET)
settings.register_profile("random", derandomize=False, deadline=None, print_blob=True,
                          suppress_health_check=_QUIET)
settings.load_profile("repeatable")

# Every next-round preview the engine reuses is checked against one computed afresh, in
# every test (a stale preview fails the message with an AssertionError, hence the test);
# so is every snapshot read as unchanged at a glance (read in full too), and every
# balanced-d20 view given again (described afresh too).
preview.CHECK = True
snapshot.CHECK = True
# (the package's name ``describe`` is the function: the module is taken by its full name)
cast(Any, importlib.import_module("adapter.rulesets.balanced_d20.describe")).CHECK = True

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def root() -> Path:
    return ROOT


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--full", action="store_true", default=False,
        help="run the long reliability variants (50 SIGKILLs, more fuzz cases)",
    )
