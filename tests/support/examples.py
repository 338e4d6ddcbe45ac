"""How many examples a property draws: as written under ``make test``, a tenth under ``make test-fast``.

``make test`` loads the hypothesis profile ``repeatable`` (tests/conftest.py) and every
property draws what its ``@settings(max_examples=N)`` says. ``make test-fast`` loads the
profile ``fast``, the same but for the number of examples, and a test that names its own
count passes it through ``examples(N)``, so the fast loop draws fewer of the same kind.
"""

from __future__ import annotations

from hypothesis import settings

#: the profile ``make test-fast`` loads (``--hypothesis-profile=fast``)
FAST_PROFILE = "fast"
#: the fewest examples a property draws in the fast loop
FAST_FLOOR = 5


def fast_examples(n: int) -> int:
    """A tenth of ``n``, at least ``FAST_FLOOR`` and never more than ``n``."""
    return min(n, max(FAST_FLOOR, n // 10))


def examples(n: int, profile: str | None = None) -> int:
    """``n`` under every profile but ``fast`` (by default the profile loaded now)."""
    current = settings.get_current_profile_name() if profile is None else profile
    return fast_examples(n) if current == FAST_PROFILE else n
