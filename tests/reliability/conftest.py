"""Fixtures of the reliability tests: ``--full``, sidecar processes, fuzz counts."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.reliability import fuzzcount
from tests.reliability.harness import Serve
from tests.server.conftest import sidecar  # noqa: F401 (a fixture)


@pytest.fixture
def full(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--full"))


@pytest.fixture
async def serve_factory(tmp_path: Path) -> AsyncIterator[Callable[..., Serve]]:
    """Make sidecar processes (not started); every one is stopped when the test ends."""
    made: list[Serve] = []

    def make(name: str = "sidecar", **kw: Any) -> Serve:
        db = kw.pop("db", None) or tmp_path / f"{name}.db"
        serve = Serve(db, 0, tmp_path / f"{name}.log", **kw)
        made.append(serve)
        return serve

    yield make
    for serve in made:
        serve.kill()
        if serve.proc is not None:
            await serve.proc.wait()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if fuzzcount.COUNTS:
        terminalreporter.section("hostile input: fuzz cases run")
        for name, count in sorted(fuzzcount.COUNTS.items()):
            terminalreporter.write_line(f"{name}: {count} cases")
        terminalreporter.write_line(f"total: {sum(fuzzcount.COUNTS.values())} cases")
    if fuzzcount.FIGURES:
        terminalreporter.section("reliability figures")
        for name, value in fuzzcount.FIGURES.items():
            terminalreporter.write_line(f"{name}: {value}")
