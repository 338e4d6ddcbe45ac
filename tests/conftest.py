"""Shared fixtures and options (helpers live in ``tests/support/`` and ``tests/foundry.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapter.engine import preview

# Every next-round preview the engine reuses is checked against one computed afresh, in
# every test (a stale preview fails the message with an AssertionError, hence the test).
preview.CHECK = True

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def root() -> Path:
    return ROOT


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--full", action="store_true", default=False,
        help="run the long reliability variants (50 SIGKILLs, more fuzz cases)",
    )
