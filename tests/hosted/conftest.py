"""Fixtures of the hosted tests: one PostgreSQL cluster per run, a fresh database per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.hosted import services
from tests.reliability.conftest import serve_factory  # noqa: F401 (a fixture)


@pytest.fixture(scope="session")
def cluster() -> Iterator[services.Postgres]:
    with services.postgres() as running:
        yield running


@pytest.fixture
def pg_url(cluster: services.Postgres) -> str:
    return cluster.new_database()
