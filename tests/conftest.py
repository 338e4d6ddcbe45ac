"""Shared fixtures and options (helpers live in ``tests/support/`` and ``tests/foundry.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def root() -> Path:
    return ROOT


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--full", action="store_true", default=False,
        help="run the long reliability variants (50 SIGKILLs, more fuzz cases)",
    )
