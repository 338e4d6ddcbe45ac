"""What a ruleset is: data built from rule functions, kept in a registry by id.

Every rule function has one signature, ``rule(ctx, combat, event) -> combat``: it receives
each event of a message (a roll, a turn starting, an intent routed to it...) and returns the
combat as the rule leaves it (the same object when the event is not its business). It
raises a :mod:`adapter.errors` error to refuse; the engine then drops every change the
message made. ``combat`` is None for intents that need no combat (e.g. BI-3 outside combat).

A ruleset also says how it sorts (``sort_key``: numbers, higher acts first; the engine adds
Foundry's ``_id`` as the last tie-break) and how a combatant looks in the plan (``describe``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .model import Combat, Combatant

if TYPE_CHECKING:
    from .context import Ctx
    from .events import Event

#: ``acts`` values whose turns the module skips (and the engine passes over).
SKIPPED_ACTS = frozenset({"none", "defend_only", "held"})


class Rule(Protocol):
    __name__: str

    def __call__(self, ctx: Ctx, combat: Combat | None, event: Event) -> Combat | None: ...


@dataclass(frozen=True)
class Entry:
    """How one combatant appears in the plan (everything but its position and number)."""

    acts: str = "full"
    reaction: Mapping[str, Any] | None = None
    tags: tuple[str, ...] = ()
    detail: Mapping[str, Any] = field(default_factory=dict)
    rules: tuple[str, ...] = ()
    #: preferred tie-break fraction in [0, 1) for the initiative number (see order.py)
    hint: float | None = None


Describe = Callable[[Combat, Combatant], Entry]
#: first contact: ``adopt(ctx, combat, combatant_id) -> combat``, called for each combatant
#: once the combat shows Foundry's round, pointer and stored values (as scores); it takes a
#: stored value as a roll the ruleset never saw (docs/rules.md, "Meeting a combat already
#: under way") and may change the score (dice-pool: the net successes)
Adopt = Callable[["Ctx", Combat, str], Combat]
SortKey = Callable[[Combat, Combatant], Sequence[float]]


def describe_plain(combat: Combat, combatant: Combatant) -> Entry:
    """Foundry's own view: everyone acts fully; defeated combatants do not act."""
    if combatant.defeated:
        return Entry(acts="none", tags=("defeated",))
    return Entry()


def adopt_as_stored(ctx: Ctx, combat: Combat, combatant_id: str) -> Combat:
    """First contact, by default: the stored value is the combatant's score (a roll total,
    or a number the GM typed), and no rule state comes with it."""
    return combat


def sort_by_score(combat: Combat, combatant: Combatant) -> Sequence[float]:
    return (combatant.score if combatant.score is not None else 0.0,)


@dataclass(frozen=True)
class Ruleset:
    id: str
    #: rules that see every event, in this order
    rules: tuple[Rule, ...] = ()
    #: intent kind -> the rule that handles it (an unlisted kind is refused)
    intents: Mapping[str, Rule] = field(default_factory=dict)
    sort_key: SortKey = sort_by_score
    describe: Describe = describe_plain
    #: settings this ruleset reads, with their defaults
    settings: Mapping[str, Any] = field(default_factory=dict)
    #: where a combatant whose score changes mid-round goes: "next" = among the turns still
    #: to come (it acts after the turn in progress at the latest); "sorted" = where Foundry's
    #: sort puts it (above the turn in progress means its turn this round is over)
    late_scores: str = "next"
    #: how the ruleset takes a combat already under way (see ``Adopt``)
    adopt: Adopt = adopt_as_stored


_REGISTRY: dict[str, Ruleset] = {}


def register(ruleset: Ruleset) -> Ruleset:
    if ruleset.id in _REGISTRY:
        raise ValueError(f"ruleset {ruleset.id!r} is registered twice")
    _REGISTRY[ruleset.id] = ruleset
    return ruleset


def get_ruleset(ruleset_id: str) -> Ruleset:
    _load_builtin()
    return _REGISTRY[ruleset_id]


def known_rulesets() -> tuple[str, ...]:
    _load_builtin()
    return tuple(sorted(_REGISTRY))


def _load_builtin() -> None:
    # The rulesets import the engine, so the engine finds them lazily.
    import adapter.rulesets  # noqa: F401
