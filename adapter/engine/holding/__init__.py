"""Hold and act: delaying an action, written once for every ruleset that has it.

Used by ``storyteller`` (ST-1 … ST-5) and ``dice-pool`` (DP-5: "hold and act move a
combatant exactly as in the storyteller ruleset"). Public API, kept stable::

    HOLD = hold_mechanics(HoldRuleIds(...))    # built once per ruleset, given its rule ids
    HOLD.intents   {messages.Hold: hold_action, messages.Act: act_action}  -> Ruleset(intents=)
    HOLD.on        {RoundStarted: (hold_carry_over,), Rolled: (hold_rescored,), ScoreSet:
                    (hold_rescored,), TurnEnded: (hold_moment_closed,)}
                   -> Ruleset(on=chain(own, HOLD.on)): after the rule that sets scores on Rolled
    HOLD.hold, HOLD.act                        # the two intent rules (to wrap, as dice-pool does)
    HOLD.entry(combat, combatant, entry)       # at the end of describe()
    Hold, HOLDING, GIVING_UP, ANY_POINT, STEPPED_IN         # the state in Combatant.hold
    holding(combatant) -> Hold | None; is_waiting(combatant) -> bool

Intents (by the combatant's owner or a GM; ``combat_id`` and ``combatant_id`` required):

- ``hold {}``: on or before its turn this round the combatant keeps its place without acting
  (``acts: held``); if it was current, the turn passes to the next who acts, or, with nobody
  left, the round is over (``current`` None).
- ``hold {next_round: true}``: gives up this round's action, movement only
  (``acts: movement_only``); next round it may step in at any point (ST-4). Also from a
  holder (HOLDING, or ANY_POINT carried over) that has not stepped in this round; if its
  place is behind, its movement turn comes right after the turn in progress.
- ``hold {target_aware: bool}``: GM only; tags a holder ``target_aware`` (ST-5: the target
  knows, the shot loses surprise). On a combatant already holding it only changes the tag;
  on one that is not holding (or has stepped in) it is refused (ST-5).
- ``act {after: id}``: score ``id``'s − 1, placed right after it (ST-1); refused once that
  turn is over (use ``now``). ``act {before: id}``: score + 1, placed right before it (ST-2),
  allowed until that turn ends; if ``id`` is current, the holder interrupts and becomes
  current, and ``id``'s turn follows. ``act {now: true}``: right after the current turn (or at
  once, if the round has no turn in progress).
- ST-3 same moment: interrupters of one combatant whose turn is beginning share the moment
  while the first one's turn is in progress (``Hold.interrupting``); one that the tie rule
  puts first takes the turn, and the first one's turn (not yet ended) waits right after it.
  The moment closes when the turn pointer moves on (its turn ends).
- Placement wins over arithmetic: :mod:`adapter.engine.order` encodes the plan's numbers
  from ``Combat.order``. Holders stepping in at one point are ordered by the ruleset's
  ``sort_key`` (its tie rule, ST-3).

States of :class:`Hold` (``Combatant.hold``; None when not holding)::

    HOLDING     hold {} this round           acts held         act -> STEPPED_IN
    GIVING_UP   hold {next_round} this round acts movement_only
    ANY_POINT   carried into a new round     acts held         act -> STEPPED_IN
    STEPPED_IN  acted from a hold this round (``point`` = where, for ST-3)

At each round start (``hold_carry_over``): HOLDING and GIVING_UP become ANY_POINT (ST-5,
ST-4), remembering the score to return to (``original``); ANY_POINT carries again;
STEPPED_IN ends: back to ``original`` if it came from ANY_POINT (ST-4/ST-5 rulings), else
the new score stays for the fight (ST-1/ST-2 rulings).

Rule ids in errors and in the plan's ``rules`` are the ruleset's: the ``HoldRuleIds`` its
:func:`hold_mechanics` was built with (no global, no lookup of the ruleset inside the rules;
the one ruleset a message is applied under is ``ctx.ruleset``, for the turn bookkeeping). The
engine names no ruleset.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .. import messages
from ..context import Ctx
from ..events import Rolled, RoundStarted, ScoreSet, TurnEnded
from ..model import Combat, Combatant
from ..ruleset import Entry, HoldRuleIds, IntentRule, On
from . import declare
from .declare import act_action, hold_action
from .rounds import hold_carry_over, hold_entry, hold_moment_closed, hold_rescored
from .state import ANY_POINT, GIVING_UP, HOLDING, STEPPED_IN, Hold, holding, is_waiting


@dataclass(frozen=True)
class HoldMechanics:
    """The shared hold/act rules bound to one ruleset's rule ids (see the module docstring)."""

    ids: HoldRuleIds
    hold: IntentRule
    act: IntentRule
    on: On

    @property
    def intents(self) -> Mapping[type[messages.Intent], IntentRule]:
        return {messages.Hold: self.hold, messages.Act: self.act}

    def entry(self, combat: Combat, combatant: Combatant, entry: Entry) -> Entry:
        """``entry`` (the ruleset's own view) with the combatant's hold merged in."""
        return hold_entry(combat, combatant, entry, self.ids)


def hold_mechanics(ids: HoldRuleIds) -> HoldMechanics:
    """The hold/act rules for a ruleset that reports them under ``ids``."""

    def hold_action(ctx: Ctx, combat: Combat, intent: messages.Hold) -> Combat:
        """ST-1 / ST-4 / ST-5 (DP-5): ``hold {next_round?, target_aware?}``: keep the place."""
        return declare.hold_action(ctx, combat, intent, ids)

    def act_action(ctx: Ctx, combat: Combat, intent: messages.Act) -> Combat:
        """ST-1 / ST-2 / ST-3 (DP-5): ``act {after | before | now}``: a holder steps in."""
        return declare.act_action(ctx, combat, intent, ids)

    on: On = {
        RoundStarted: (hold_carry_over,),
        Rolled: (hold_rescored,),
        ScoreSet: (hold_rescored,),
        TurnEnded: (hold_moment_closed,),
    }
    return HoldMechanics(ids=ids, hold=hold_action, act=act_action, on=on)


__all__ = [
    "ANY_POINT", "GIVING_UP", "HOLDING", "STEPPED_IN", "Hold", "HoldMechanics", "HoldRuleIds",
    "act_action", "hold_action", "hold_carry_over", "hold_entry", "hold_mechanics",
    "hold_moment_closed", "hold_rescored", "holding", "is_waiting",
]
