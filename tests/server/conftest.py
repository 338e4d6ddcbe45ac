"""The fixture of the server tests: a real sidecar on a free port (``tests/support/sidecar.py``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapter.config import Config
from tests.support.sidecar import TOKEN, Running


@pytest.fixture
async def sidecar(tmp_path: Path) -> AsyncIterator[Running]:
    config = Config(host="127.0.0.1", port=0, db=tmp_path / "sidecar.db", token=TOKEN)
    running = Running(config)
    await running.start()
    yield running
    await running.stop()
