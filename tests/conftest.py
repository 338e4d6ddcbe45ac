"""Shared fixtures and options (helpers live in ``tests/support/`` and ``tests/foundry.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

# Tests that build their own ruleset from a built-in one (``get_ruleset("foundry-core")``)
# and ``register`` it, for the one table to find, need the built-in ones registered: they
# are once their package is imported.
import adapter.rulesets  # noqa: F401

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def root() -> Path:
    return ROOT


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--full", action="store_true", default=False,
        help="run the long reliability variants (50 SIGKILLs, more fuzz cases)",
    )
