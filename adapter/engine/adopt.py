"""First contact: a combat the sidecar has never seen is taken as Foundry holds it (its round,
its current combatant or none, each initiative exactly as stored), each stored value given to
the ruleset's ``adopt`` as a roll it never saw, and written back as stored while no rule
moved it (docs/rules.md, "Meeting a combat already under way").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from msgspec.structs import replace

from .context import Ctx
from .events import CombatStarted
from .model import Combat, Combatant
from .order import rules_sort
from .ruleset import SortKey
from .turns import emit


def stored_initiative(data: Mapping[str, Any]) -> float | None:
    """A combatant's initiative as Foundry stores it (None: null, absent, or not a number)."""
    value = data.get("initiative")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def adopt_combat(
    ctx: Ctx, combat: Combat, data: Mapping[str, Any], current: str | None,
    rolling: frozenset[str] = frozenset(),
) -> Combat:
    """``combat`` (its roster just read from ``data``) as Foundry holds it. ``rolling``: those
    whose roll the message itself brings, which the rules are about to see: not adopted."""
    values = {
        c["_id"]: None if c["_id"] in rolling else stored_initiative(c)
        for c in data.get("combatants", ())
    }
    combatants = {cid: replace(c, score=values.get(cid)) for cid, c in combat.combatants.items()}
    combat = replace(combat, combatants=combatants, round=max(0, int(data.get("round") or 0)))
    rs = ctx.ruleset
    combat = foundrys_pointer(rs.sort_key, combat, current)
    for cid in combat.roster:
        combat = rs.adopt(ctx, combat, cid)
    kept = {
        cid: replace(c, adopted=(c.score, stored))
        for cid, c in combat.combatants.items()
        if (stored := values.get(cid)) is not None and c.score is not None
    }
    combat = replace(combat, combatants={**combat.combatants, **kept})
    if combat.started:  # a rule that applies "when the combat starts" (BI-3) applies now
        combat = emit(ctx, combat, CombatStarted())
    return foundrys_pointer(rs.sort_key, combat, combat.current)


def foundrys_pointer(sort_key: SortKey, combat: Combat, current: str | None) -> Combat:
    """The order by the rules, with Foundry's current combatant and those before it passed (no
    current: nobody's turn in progress, nobody known to have acted this round)."""
    order = rules_sort(combat, sort_key)
    if combat.started and current in order:
        at = order.index(current)
        return replace(combat, order=order, current=current, passed=frozenset(order[:at]))
    return replace(combat, order=order, current=None, passed=frozenset())


def adopted_values(combat: Combat) -> dict[str, float]:
    """The stored values still to write back as stored: adopted, and the score unmoved."""
    return {cid: c.adopted[1] for cid, c in combat.combatants.items()
            if c.adopted is not None and c.adopted[0] == c.score}


def turns_had(combat: Combat, combatant: Combatant) -> int:
    """How many of its turns have ended since it joined, as far as Foundry's document shows:
    one per round before this one from the round it joined (``roundJoined``, else round 1),
    and this round's if passed."""
    if not combat.started:
        return 0
    joined = max(1, combatant.round_joined) if combatant.round_joined is not None else 1
    earlier = max(0, combat.round - joined)
    return earlier + (1 if combatant.id in combat.passed else 0)


def turn_begun(combat: Combat, combatant: Combatant) -> bool:
    """Whether a turn of the combatant has begun since it joined (its turn in progress too)."""
    return turns_had(combat, combatant) > 0 or combat.current == combatant.id
