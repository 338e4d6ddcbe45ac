"""How a `balanced-d20` combatant looks in the plan: acts, reaction, tags, detail, rules."""

from __future__ import annotations

from typing import Any

from ...engine.model import Combat, Combatant
from ...engine.ruleset import Entry
from .reactions import reaction_state
from .readied import readied_tags
from .state import dash_round, fighter

#: set by the test suite: every view given from :data:`_views` is compared with a fresh one
CHECK = False

#: the views last given, by combatant: (the combatant, the round, its view). A view is a
#: function of the combatant (an immutable object, held here so its id stays its own) and
#: the round alone, and is asked for every combatant on every message, most of them
#: unchanged since the last; dropped whole when full
_views: dict[int, tuple[Combatant, int, Entry]] = {}
_KEPT_VIEWS = 512


def describe(combat: Combat, c: Combatant) -> Entry:
    kept = _views.get(id(c))
    if kept is not None and kept[0] is c and kept[1] == combat.round:
        if CHECK:
            fresh = view_of(combat, c)
            assert kept[2] == fresh, f"stale balanced-d20 view of {c.id}: {kept[2]} instead of {fresh}"
        return kept[2]
    view = view_of(combat, c)
    if len(_views) >= _KEPT_VIEWS:
        _views.clear()
    _views[id(c)] = (c, combat.round, view)
    return view


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
