"""Ruleset ``storyteller``: delaying action (../shared/rules/README.md section 3, ST-1 … ST-5).

The initiative is the system's roll (:mod:`.initiative`); holding, stepping in, holding
into the next round and waiting across rounds are the engine's shared hold/act mechanics
(:mod:`adapter.engine.holding`), built with ST-1 … ST-5 as their ids (:mod:`.plan`).
"""

from ...engine.events import Rolled
from ...engine.ruleset import Ruleset, chain
from .initiative import initiative_roll, tie_rule
from .plan import HOLD, describe

RULESET = Ruleset(
    id="storyteller",
    # the roll is scored before the hold mechanics read the new score
    on=chain({Rolled: (initiative_roll,)}, HOLD.on),
    intents=HOLD.intents,
    sort_key=tie_rule,
    describe=describe,
)
