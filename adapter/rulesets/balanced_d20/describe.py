"""How a `balanced-d20` combatant looks in the plan: acts, reaction, tags, detail, rules."""

from __future__ import annotations

from typing import Any

from ...engine.model import Combat, Combatant
from ...engine.ruleset import Entry
from .reactions import reaction_state
from .readied import readied_tags
from .state import Fighter, dash_round, fighter


def describe(combat: Combat, c: Combatant) -> Entry:
    """How the combatant looks in the plan: one of the views built once below for one with
    nothing on it but its roll and reaction (most), else :func:`view_of` (test_bd_views.py
    proves the two agree)."""
    f = fighter(c)
    if (f.reroll is None and not f.dashes and f.reaction_blocked_through is None and not f.no_dominance
            and not f.ready_to_strike and f.readied is None):
        return _PLAIN[c.defeated, f.base is not None, f.reaction_spent is not None, f.first_turn_started]
    return view_of(combat, c)


def view_of(combat: Combat, c: Combatant) -> Entry:
    """How the combatant looks in the plan: it reads the combatant and the round, nothing else."""
    f = fighter(c)
    available, reason = reaction_state(c)
    tags: list[str] = []
    detail: dict[str, Any] = {}
    rules: list[str] = ["BI-1"] if f.base is not None else []
    if c.defeated:
        tags.append("defeated")
    if f.reroll is not None:
        rules.append("BI-2")
        if f.reroll.pending:
            tags.append("reroll_pending")
            detail["natural"] = f.reroll.natural
    # BI-3: shown before the start, through round 1, and until a joiner's first turn
    if f.ready_to_strike and (combat.round <= 1 or not f.first_turn_started):
        if f.watched:  # BI-3: not surprised by the creatures it watches, and only those
            tags.append("surprise_immune")
            detail["watched"] = list(f.watched)
        tags.append("ready_to_strike")
    if f.ready_to_strike or reason == "before_first_turn":
        rules.append("BI-3")
    amount = f.dash_for(dash_round(combat))
    if amount is not None:
        tags.append("dashed")
        detail["dash"] = amount
    if f.no_dominance:
        tags.append("no_dominance")
    if amount is not None or f.no_dominance or f.reaction_blocked_through is not None:
        rules.append("BI-4")
    if f.readied is not None:
        tags += readied_tags(f.readied)
        detail["readied_id"] = f.readied.readied_id
        rules.append("BI-5")
    acts = "none" if c.defeated else "movement_or_action" if amount is not None else "full"
    return Entry(
        acts=acts,
        reaction={"available": available, "reason": reason},
        tags=tuple(tags),
        detail=detail,
        rules=tuple(rules),
    )


#: the views of a combatant with nothing on it but its roll and its reaction, by (defeated,
#: rolled, reaction spent, first turn started), built once by :func:`view_of` (shared, never written)
_PLAIN: dict[tuple[bool, bool, bool, bool], Entry] = {
    (defeated, rolled, spent, started): view_of(
        Combat(id="", ruleset="balanced-d20"),
        Combatant(id="", defeated=defeated, ext=Fighter(
            base=1.0 if rolled else None, reaction_spent="used" if spent else None, first_turn_started=started)))
    for defeated in (False, True) for rolled in (False, True) for spent in (False, True) for started in (False, True)
}
