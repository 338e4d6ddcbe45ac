"""Fixtures of the hosted tests: one PostgreSQL cluster per run, a fresh database per test.

Every hosted test needs real PostgreSQL, Redis and nginx (Debian's packages; ``.ci/run``
installs them). Without them the other modules are not collected and
``test_hosted_services.py`` is skipped: one line, naming what is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hosted import services
from tests.reliability.conftest import serve_factory  # noqa: F401 (a fixture)

SENTINEL = "test_hosted_services.py"
collect_ignore = [p.name for p in Path(__file__).parent.glob("test_*.py") if p.name != SENTINEL] \
    if services.missing(*services.NEEDS) else []


@pytest.fixture(scope="session")
def cluster() -> Iterator[services.Postgres]:
    with services.postgres() as running:
        yield running


@pytest.fixture
def pg_url(cluster: services.Postgres) -> str:
    return cluster.new_database()
