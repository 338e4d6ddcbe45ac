"""Hold and act: the state a combatant's hold is in, and the helpers the intents and the
round bookkeeping share (see the package for the state table)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..model import Combat, Combatant

HOLDING = "holding"
GIVING_UP = "giving_up"
ANY_POINT = "any_point"
STEPPED_IN = "stepped_in"


@dataclass(frozen=True)
class Hold:
    """A combatant's hold (see the state table in the module docstring)."""

    state: str
    #: the round the hold was declared in
    since: int
    #: the score to return to at the next round start (ST-4, ST-5), or None to keep the score
    original: float | None = None
    target_aware: bool = False
    #: declared with ``next_round`` (ST-4) rather than carried over (ST-5)
    gave_up: bool = False
    #: where a STEPPED_IN combatant went: ("after" | "before", anchor id); kept by a
    #: HOLDING one that holds again at the place it stepped into this round
    point: tuple[str, str] | None = None
    #: it interrupted the turn in progress and its own turn has not ended: the moment before
    #: the anchor is open, and others interrupting the anchor share it (ST-3)
    interrupting: bool = False


def holding(combatant: Combatant) -> Hold | None:
    return combatant.hold if isinstance(combatant.hold, Hold) else None


def is_waiting(combatant: Combatant) -> bool:
    """Holding and free to step in (HOLDING or ANY_POINT)."""
    held = holding(combatant)
    return held is not None and held.state in (HOLDING, ANY_POINT)


def _name(c: Combatant) -> str:
    return c.name or c.id


def _set(combat: Combat, cid: str, **changes: Any) -> Combat:
    combatants = {**combat.combatants, cid: replace(combat.combatants[cid], **changes)}
    return replace(combat, combatants=combatants)

