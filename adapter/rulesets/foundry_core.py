"""``foundry-core``: Foundry's own behaviour, for tables that want the sidecar's plumbing only
(docs/rules.md, foundry-core): the score is the roll's total or the GM's number.
"""

from __future__ import annotations

from msgspec.structs import replace

from ..engine.context import Ctx
from ..engine.events import Rolled
from ..engine.model import Combat, Combatant
from ..engine.ruleset import ACTS, Entry, Ruleset, describe_plain


def initiative_roll(ctx: Ctx, combat: Combat, event: Rolled) -> Combat:
    """Foundry core: the initiative is the roll's total, the score of the combatant that rolled
    or of every member of the group that rolled (Foundry v13 gives a group's initiative to each)."""
    score = float(event.roll.total)
    group = event.group_id
    rolled = combat.members(group) if group is not None else [combat.combatants[str(event.combatant_id)]]
    combatants = {**combat.combatants, **{c.id: replace(c, score=score) for c in rolled}}
    return replace(combat, combatants=combatants)


def describe(combat: Combat, combatant: Combatant) -> Entry:
    """Foundry core: everyone acts fully; a defeated combatant does not act only under Skip
    Defeated (with it off, core's Next Turn and Next Round give it its turn like anyone's)."""
    if combatant.defeated and combat.skip_defeated is False:
        return ACTS  # everyone's entry
    return describe_plain(combat, combatant)


RULESET = Ruleset(id="foundry-core", on={Rolled: (initiative_roll,)}, describe=describe,
                  late_scores="sorted", keeps_null_turn=True, follows_skip_defeated=True)
