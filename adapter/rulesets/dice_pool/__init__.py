"""Ruleset ``dice-pool``: success-counting initiative (../shared/rules/README.md section 2).

DP-1 pool = Reaction + Wits − size (+ the GM's dice, DP-7); DP-3 successes recounted from
the dice; DP-2 order by net successes, then base, then ``_id``; DP-4 hesitation; DP-5 the
order is kept for the fight, but for delay and waiting (the engine's shared hold/act,
:mod:`.delay`): each round starts in the sequence the last one ended in (:mod:`.sequence`);
DP-6 groups roll once with their slowest member's pool.
"""

from ...engine.holding import HOLD_RULES
from ...engine.ruleset import Ruleset
from .adopt import adopt_pool_roll
from .delay import INTENTS
from .describe import HOLD_IDS, describe
from .rules import (
    SETTINGS,
    group_initiative,
    hesitation,
    initiative_formula,
    initiative_roll,
    order_key,
)
from .sequence import kept_sequence

RULESET = Ruleset(
    id="dice-pool",
    # kept_sequence reads the holds of the round that ended before HOLD_RULES clear them
    rules=(initiative_roll, group_initiative, hesitation, kept_sequence, *HOLD_RULES),
    intents=INTENTS,
    sort_key=order_key,
    describe=describe,
    settings=SETTINGS,
    formula=initiative_formula,
    adopt=adopt_pool_roll,
    hold_ids=HOLD_IDS,
)
