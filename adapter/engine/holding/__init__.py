"""Hold and act: delaying an action, written once for every ruleset that has it.

Used by ``storyteller`` (ST-1 … ST-5) and ``dice-pool`` (DP-5: "hold and act move a
combatant exactly as in the storyteller ruleset"). Public API, kept stable::

    HOLD_INTENTS = {"hold": hold_action, "act": act_action}  # into Ruleset(intents=...)
    HOLD_RULES = (hold_carry_over, hold_rescored, hold_moment_closed)  # Ruleset(rules=...), after
                                                            # the rule that sets scores on Rolled
    hold_entry(combat, combatant, entry) -> Entry           # call at the end of describe()
    Hold, HOLDING, GIVING_UP, ANY_POINT, STEPPED_IN         # the state in Combatant.hold
    holding(combatant) -> Hold | None; is_waiting(combatant) -> bool
    HoldRuleIds, rule_ids(ruleset_id), use_rule_ids(ruleset_id, ids)

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

Rule ids in errors and in the plan's ``rules`` are the calling ruleset's: looked up by
``Combat.ruleset`` in a small table (:func:`rule_ids`). ``storyteller`` and ``dice-pool``
are filled in; another ruleset calls :func:`use_rule_ids` (unknown ids fall back to the
ruleset id for every rule).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ...errors import InvalidMessage
from ..model import Combat, Combatant

HOLDING = "holding"
GIVING_UP = "giving_up"
ANY_POINT = "any_point"
STEPPED_IN = "stepped_in"


@dataclass(frozen=True)
class Hold:
    """A combatant's hold (see the state table in the module docstring)."""

    state: str
    #: the round the hold was declared in
    since: int
    #: the score to return to at the next round start (ST-4, ST-5), or None to keep the score
    original: float | None = None
    target_aware: bool = False
    #: declared with ``next_round`` (ST-4) rather than carried over (ST-5)
    gave_up: bool = False
    #: where a STEPPED_IN combatant went: ("after" | "before", anchor id)
    point: tuple[str, str] | None = None
    #: it interrupted the turn in progress and its own turn has not ended: the moment before
    #: the anchor is open, and others interrupting the anchor share it (ST-3)
    interrupting: bool = False


@dataclass(frozen=True)
class HoldRuleIds:
    """The calling ruleset's ids for each rule of the mechanics."""

    hold: str  # ST-1: hold, act after
    interrupt: str  # ST-2: act before
    same_moment: str  # ST-3: several at one point
    next_round: str  # ST-4: give up this round
    carry_over: str  # ST-5: waiting across rounds

    @classmethod
    def single(cls, rule: str) -> HoldRuleIds:
        return cls(rule, rule, rule, rule, rule)


_RULE_IDS: dict[str, HoldRuleIds] = {
    "storyteller": HoldRuleIds("ST-1", "ST-2", "ST-3", "ST-4", "ST-5"),
    "dice-pool": HoldRuleIds.single("DP-5"),
}


def use_rule_ids(ruleset_id: str, ids: HoldRuleIds) -> None:
    _RULE_IDS[ruleset_id] = ids


def rule_ids(ruleset_id: str) -> HoldRuleIds:
    return _RULE_IDS.get(ruleset_id) or HoldRuleIds.single(ruleset_id)


def holding(combatant: Combatant) -> Hold | None:
    return combatant.hold if isinstance(combatant.hold, Hold) else None


def is_waiting(combatant: Combatant) -> bool:
    """Holding and free to step in (HOLDING or ANY_POINT)."""
    held = holding(combatant)
    return held is not None and held.state in (HOLDING, ANY_POINT)


def _name(c: Combatant) -> str:
    return c.name or c.id


def _set(combat: Combat, cid: str, **changes: Any) -> Combat:
    combatants = {**combat.combatants, cid: replace(combat.combatants[cid], **changes)}
    return replace(combat, combatants=combatants)


def _require_combat(combat: Combat | None, kind: str) -> Combat:
    if combat is None:
        raise InvalidMessage(f"{kind} needs combat_id", path="")
    return combat


# The intents and the round bookkeeping live in their own modules; their names are the API.
from .declare import act_action, hold_action  # noqa: E402
from .rounds import hold_carry_over, hold_entry, hold_moment_closed, hold_rescored  # noqa: E402

HOLD_INTENTS = {"hold": hold_action, "act": act_action}
HOLD_RULES = (hold_carry_over, hold_rescored, hold_moment_closed)

__all__ = [
    "ANY_POINT", "GIVING_UP", "HOLDING", "HOLD_INTENTS", "HOLD_RULES", "STEPPED_IN", "Hold",
    "HoldRuleIds", "act_action", "hold_action", "hold_carry_over", "hold_entry",
    "hold_moment_closed", "hold_rescored",
    "holding", "is_waiting", "rule_ids", "use_rule_ids",
]
