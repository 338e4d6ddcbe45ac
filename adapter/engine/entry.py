"""How one combatant appears in the plan: the :class:`Entry` a ruleset's ``describe`` gives.

Its own module so that the context (:mod:`.context`), which types the ruleset it carries as
a :class:`~.context.Rules` protocol, and the ruleset (:mod:`.ruleset`), whose rules take
that context, both name it without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from msgspec import Struct

from .model import Combat, Combatant


class Entry(Struct, frozen=True):
    """How one combatant appears in the plan (everything but its position and number)."""

    acts: str = "full"
    reaction: Mapping[str, Any] | None = None
    tags: tuple[str, ...] = ()
    detail: Mapping[str, Any] = {}
    rules: tuple[str, ...] = ()
    #: preferred tie-break fraction in [0, 1) for the initiative number (see order.py)
    hint: float | None = None


Describe = Callable[[Combat, Combatant], Entry]
#: given a combat, the sort key of each of its combatants: built once per sort, so what a key
#: reads of the whole combat (dice-pool's kept sequence) is computed there, not kept between sorts
SortKey = Callable[[Combat], Callable[[Combatant], Sequence[float]]]
