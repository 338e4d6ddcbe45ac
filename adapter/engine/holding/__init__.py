"""Hold and act: delaying an action, written once for ``storyteller`` (ST-1 … ST-5) and
``dice-pool`` (DP-5). A ruleset builds its rules with :class:`HoldMechanics`, given its rule
ids; the API, the states of a hold and the ST-3 moment: docs/engine.md, "Hold and act"; what
each declaration does: docs/rules.md, "Declaring a hold, stepping in".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from msgspec import Struct

from .. import messages
from ..context import Ctx
from ..events import Rolled, RoundStarted, ScoreSet, TurnEnded
from ..model import ANY_POINT, GIVING_UP, HOLDING, STEPPED_IN, Combat, Hold
from ..ruleset import HoldRuleIds, IntentRule, On
from . import declare
from .rounds import hold_carry_over, hold_entry, hold_moment_closed, hold_rescored
from .state import is_waiting


class HoldMechanics(Struct, frozen=True):
    """The shared hold/act rules bound to one ruleset's rule ids."""

    ids: HoldRuleIds
    #: the shared rules of the events, under any ruleset's ids
    on: ClassVar[On] = {
        RoundStarted: (hold_carry_over,),
        Rolled: (hold_rescored,),
        ScoreSet: (hold_rescored,),
        TurnEnded: (hold_moment_closed,),
    }

    def hold(self, ctx: Ctx, combat: Combat, intent: messages.Hold) -> Combat:
        """ST-1 / ST-4 / ST-5 (DP-5): ``hold {next_round?, target_aware?}``: keep the place."""
        return declare.hold_action(ctx, combat, intent, self.ids)

    def act(self, ctx: Ctx, combat: Combat, intent: messages.Act) -> Combat:
        """ST-1 / ST-2 / ST-3 (DP-5): ``act {after | before | now}``: a holder steps in."""
        return declare.act_action(ctx, combat, intent, self.ids)

    @property
    def intents(self) -> Mapping[type[messages.Intent], IntentRule]:
        return {messages.Hold: self.hold, messages.Act: self.act}


__all__ = [
    "ANY_POINT", "GIVING_UP", "HOLDING", "STEPPED_IN", "Hold", "HoldMechanics", "HoldRuleIds",
    "hold_entry", "is_waiting",
]
