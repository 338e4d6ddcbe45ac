"""Hold and act: reading a combatant's hold, and the helpers the intents and the round
bookkeeping share."""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from ..model import ANY_POINT, HOLDING, STEPPED_IN, Combat, Combatant


def is_waiting(combatant: Combatant) -> bool:
    """Holding and free to step in (HOLDING or ANY_POINT)."""
    held = combatant.hold
    return held is not None and held.state in (HOLDING, ANY_POINT)


def at_point(combatant: Combatant, point: tuple[str, str]) -> bool:
    """Stepped in at ``point`` (ST-3: those stepped in at one point are ordered by the tie rule)."""
    held = combatant.hold
    return held is not None and held.state == STEPPED_IN and held.point == point


def _name(c: Combatant) -> str:
    return c.name or c.id


def _set(combat: Combat, cid: str, **changes: Any) -> Combat:
    combatants = {**combat.combatants, cid: replace(combat.combatants[cid], **changes)}
    return replace(combat, combatants=combatants)

