"""Hold and act: the state a combatant's hold is in, and the helpers the intents and the
round bookkeeping share (see the package for the state table)."""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from ..model import ANY_POINT, GIVING_UP, HOLDING, STEPPED_IN, Combat, Combatant, Hold

__all__ = ["ANY_POINT", "GIVING_UP", "HOLDING", "STEPPED_IN", "Hold", "holding", "is_waiting"]


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

