"""Hold and act: delaying an action, written once for every ruleset that has it.

Used by ``storyteller`` (ST-1 … ST-5) and ``dice-pool`` (DP-5: "hold and act move a
combatant exactly as in the storyteller ruleset"). Public API, kept stable::

    HOLD_INTENTS = {"hold": hold_action, "act": act_action}  # into Ruleset(intents=...)
    HOLD_RULES = (hold_carry_over, hold_rescored, hold_moment_closed)  # Ruleset(rules=...), after
                                                            # the rule that sets scores on Rolled
    hold_entry(combat, combatant, entry, ids) -> Entry      # at the end of describe()
    Hold, HOLDING, GIVING_UP, ANY_POINT, STEPPED_IN         # the state in Combatant.hold
    holding(combatant) -> Hold | None; is_waiting(combatant) -> bool
    HoldRuleIds, hold_rule_ids(ruleset) -> HoldRuleIds      # ids: Ruleset(hold_ids=...)

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

Rule ids in errors and in the plan's ``rules`` are the calling ruleset's: its
``Ruleset.hold_ids`` (:func:`hold_rule_ids`; without them, the ruleset id for every rule),
found through ``ctx.ruleset(combat.ruleset)``; ``hold_entry`` takes them from the ruleset's
``describe``. The engine names no ruleset.
"""

from __future__ import annotations

from ..ruleset import HoldRuleIds
from .declare import act_action, hold_action
from .rounds import hold_carry_over, hold_entry, hold_moment_closed, hold_rescored
from .state import (
    ANY_POINT,
    GIVING_UP,
    HOLDING,
    STEPPED_IN,
    Hold,
    hold_rule_ids,
    holding,
    is_waiting,
)

HOLD_INTENTS = {"hold": hold_action, "act": act_action}
HOLD_RULES = (hold_carry_over, hold_rescored, hold_moment_closed)

__all__ = [
    "ANY_POINT", "GIVING_UP", "HOLDING", "HOLD_INTENTS", "HOLD_RULES", "STEPPED_IN", "Hold",
    "HoldRuleIds", "act_action", "hold_action", "hold_carry_over", "hold_entry",
    "hold_moment_closed", "hold_rescored",
    "hold_rule_ids", "holding", "is_waiting",
]
