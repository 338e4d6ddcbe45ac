"""Shared fixtures and options (helpers live in ``tests/support/`` and ``tests/foundry.py``)."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, cast

import pytest

from adapter.engine import preview, snapshot

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
