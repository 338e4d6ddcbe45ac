"""How many fuzz cases each test ran, printed in the terminal summary (see conftest)."""

from __future__ import annotations

from collections import Counter

COUNTS: Counter[str] = Counter()

#: figures a reliability test measured (name -> value), printed in the terminal summary
FIGURES: dict[str, float | str] = {}
