"""Ruleset ``storyteller``: delaying action (../shared/rules/README.md section 3, ST-1 … ST-5):
the system's roll, and the engine's shared hold/act mechanics under ST-1 … ST-5 as their ids.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...engine.events import Rolled
from ...engine.holding import HoldMechanics, hold_entry
from ...engine.model import Combat, Combatant
from ...engine.order import by_id
from ...engine.ruleset import Entry, HoldRuleIds, Ruleset, chain, describe_plain
from ..foundry_core import initiative_roll

HOLD = HoldMechanics(HoldRuleIds("ST-1", "ST-2", "ST-3", "ST-4", "ST-5"))


def initiative_mod(combatant: Combatant) -> float:
    value = combatant.stats.get("initiative_mod", 0)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def tie_rule(combat: Combat) -> Callable[[Combatant], Sequence[float]]:
    """Section 3 ruling: "ties go to the higher initiative modifier, then to Foundry's own
    order (`_id`)". ST-3 orders holders stepping in together by it."""
    return mod_then_id


def mod_then_id(combatant: Combatant) -> Sequence[float]:
    score = combatant.score if combatant.score is not None else 0.0
    return (score, initiative_mod(combatant), *by_id(combatant.id))


def describe(combat: Combat, combatant: Combatant) -> Entry:
    """ST-1: a holder shows ``acts: held``; ST-4: a combatant giving up its round
    ``movement_only``; ST-5: ``target_aware`` when the GM says the target knows."""
    return hold_entry(combat, combatant, describe_plain(combat, combatant), HOLD.ids)


RULESET = Ruleset(
    id="storyteller",
    # section 3: "The initiative roll itself is the game system's": its total, as in
    # foundry-core; scored before the hold mechanics read the new score
    on=chain({Rolled: (initiative_roll,)}, HOLD.on),
    intents=HOLD.intents,
    sort_key=tie_rule,
    describe=describe,
)
