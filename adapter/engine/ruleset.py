"""What a ruleset is: its rules, listed by the class of event or intent each takes, and its
hooks into the order and the plan (docs/engine.md, "Rules and rulesets").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from msgspec import Struct

from .context import Adopt, Ctx, EventRule, Formula
from .context import IntentRule as IntentRule
from .context import On as On
from .events import Event
from .messages import Intent
from .model import Combat, Combatant, Describe
from .model import Entry as Entry
from .model import SortKey as SortKey

#: ``acts`` values whose turns the module skips (and the engine passes over).
SKIPPED_ACTS = frozenset({"none", "defend_only", "held"})


def chain(*tables: On) -> dict[type[Event], tuple[EventRule, ...]]:
    """``on`` tables joined: for each event, the rules of the first table, then the second's..."""
    joined: dict[type[Event], tuple[EventRule, ...]] = {}
    for table in tables:
        for event, rules in table.items():
            joined[event] = joined.get(event, ()) + tuple(rules)
    return joined


#: Foundry's own view's two entries, shared (frozen): a plan builds no new object for them
ACTS = Entry()
_DEFEATED = Entry(acts="none", tags=("defeated",))


def describe_plain(combat: Combat, combatant: Combatant) -> Entry:
    """Foundry's own view: everyone acts fully; defeated combatants do not act."""
    return _DEFEATED if combatant.defeated else ACTS


def adopt_as_stored(ctx: Ctx, combat: Combat, combatant_id: str) -> Combat:
    """First contact, by default: the stored value is the score, with no rule state."""
    return combat


def sort_by_score(combat: Combat) -> Callable[[Combatant], Sequence[float]]:
    return _score


def _score(combatant: Combatant) -> Sequence[float]:
    return (combatant.score if combatant.score is not None else 0.0,)


class HoldRuleIds(Struct, frozen=True):
    """A ruleset's ids for each rule of the shared hold/act mechanics (:mod:`.holding`)."""

    hold: str  # ST-1: hold, act after
    interrupt: str  # ST-2: act before
    same_moment: str  # ST-3: several at one point
    next_round: str  # ST-4: give up this round
    carry_over: str  # ST-5: waiting across rounds

    @classmethod
    def single(cls, rule: str) -> HoldRuleIds:
        return cls(rule, rule, rule, rule, rule)


class Ruleset(Struct, frozen=True):
    """A ruleset: its rules by the event and intent classes they take, and its hooks into the
    plan. A Struct like the state, though it holds functions and is never encoded: copies are
    ``msgspec.structs.replace``, which refuses a field it does not have."""

    id: str
    #: event class -> the rules it goes to, in this order
    on: On = {}
    #: intent class -> the rule that handles it (an unlisted intent is refused)
    intents: Mapping[type[Intent], IntentRule] = {}
    sort_key: SortKey = sort_by_score
    describe: Describe = describe_plain
    #: what ``describe`` reads of the combat besides the combatant, compared with ``==``
    #: (balanced-d20: the round), or None: it may read anything (:class:`.plan.PlanMemo`)
    view_inputs: Callable[[Combat], Any] | None = None
    #: where a combatant whose score changes mid-round goes: "next", among the turns still to
    #: come; "sorted", where Foundry's sort puts it (above the turn in progress: its turn is over)
    late_scores: str = "next"
    #: whether a new round Foundry reports with nobody current starts with nobody's turn, as
    #: core's ``nextRound`` keeps it (docs/rules.md, "A round that begins with nobody's turn")
    keeps_null_turn: bool = False
    #: whether core's Skip Defeated decides if a defeated combatant's turn is passed over (or it
    #: never takes a turn; docs/rules.md, "Defeated combatants and Skip Defeated")
    follows_skip_defeated: bool = False
    #: the initiative dice this ruleset needs rolled (sent in plan entries as ``formula``)
    formula: Formula | None = None
    #: how the ruleset takes a combat already under way (see ``Adopt``)
    adopt: Adopt = adopt_as_stored
    #: the classes of its own state, which snapshots read back (docs/engine.md, "State")
    state_types: tuple[type, ...] = ()

    @property
    def intent_kinds(self) -> frozenset[str]:
        """The wire kinds of the intents this ruleset takes (the module's menu, welcome)."""
        return frozenset(cls.kind for cls in self.intents)
