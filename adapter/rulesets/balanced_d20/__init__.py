"""Ruleset `balanced-d20`: the balanced initiative house rules for D&D 5e (BI-1 .. BI-5).

See ../shared/rules/README.md section 1 and docs/rules.md. One rule, one function:

- :func:`initiative_roll` (BI-1) and :func:`clever_reroll` (BI-2), in ``reroll.py``;
- :func:`ready_to_strike` (BI-3), in ``ready.py``;
- :func:`initiative_dash` (BI-4), in ``dash.py``;
- :func:`readied_action` (BI-5), in ``readied.py``;
- :func:`reactions` (reaction bookkeeping, ``reaction.use``), in ``reactions.py``.

Ties: the higher Dex modifier, then Foundry's order (``_id``).
"""

from ...engine.ruleset import Ruleset, register
from .adopt import adopt_initiative
from .common import sort_key
from .dash import initiative_dash
from .describe import describe
from .reactions import reactions
from .readied import readied_action
from .ready import ready_to_strike
from .reroll import clever_reroll, initiative_roll

RULESET = register(
    Ruleset(
        id="balanced-d20",
        # order matters: the roll is scored before the reroll rule reads it; the dash rule
        # lifts its reaction block before the reaction rule gives the reaction back
        rules=(initiative_roll, clever_reroll, ready_to_strike, initiative_dash,
               readied_action, reactions),
        intents={
            "reroll.decide": clever_reroll,
            "reroll.approve": clever_reroll,
            "ready.start": ready_to_strike,
            "ready.break": ready_to_strike,
            "ready.confirm": ready_to_strike,
            "dash": initiative_dash,
            "readied.declare": readied_action,
            "readied.trigger": readied_action,
            "opposed.result": readied_action,
            "reaction.use": reactions,
        },
        sort_key=sort_key,
        describe=describe,
        settings={"auto_approve_rerolls": False},
        adopt=adopt_initiative,
    )
)

__all__ = [
    "RULESET", "clever_reroll", "initiative_dash", "initiative_roll", "reactions",
    "readied_action", "ready_to_strike",
]
