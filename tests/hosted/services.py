"""The hosted tests' services (:mod:`adapter.benchkit.services`, shared with ``bench
--hosted``) and :func:`require`, which skips with one line naming what is missing."""

from __future__ import annotations

import pytest

from adapter.benchkit.services import NEEDS, Postgres, Redis, missing, nginx, postgres, redis
from tests.support.sidecar import free_port


def require(*needs: str) -> None:
    """Skip the calling module (one line, naming the binaries) unless they are all here."""
    if gone := missing(*needs):
        pytest.skip(f"hosted tests need {', '.join(gone)} (Debian: apt-get install postgresql "
                    "redis-server nginx; .ci/run does)", allow_module_level=True)


__all__ = ["NEEDS", "Postgres", "Redis", "free_port", "missing", "nginx", "postgres", "redis", "require"]
