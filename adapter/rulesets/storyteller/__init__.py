"""Ruleset ``storyteller``: delaying action (../shared/rules/README.md section 3, ST-1 … ST-5).

The initiative is the system's roll (:mod:`.initiative`); holding, stepping in, holding
into the next round and waiting across rounds are the engine's shared hold/act mechanics
(:mod:`adapter.engine.holding`), reporting errors under ST-1 … ST-5.
"""

from ...engine.holding import HOLD_INTENTS, HOLD_RULES
from ...engine.ruleset import Ruleset
from .initiative import initiative_roll, tie_rule
from .plan import HOLD_IDS, describe

RULESET = Ruleset(
    id="storyteller",
    rules=(initiative_roll, *HOLD_RULES),
    intents=dict(HOLD_INTENTS),
    sort_key=tie_rule,
    describe=describe,
    hold_ids=HOLD_IDS,
)
