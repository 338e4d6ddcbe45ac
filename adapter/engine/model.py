"""The engine's state, a connection's session, what a message did and how a combatant
appears in the plan: frozen msgspec Structs, copied with ``msgspec.structs.replace``, never
mutated. Their invariants: docs/engine.md, "State".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter
from typing import Any

from msgspec import Struct
from msgspec.structs import asdict


class CombatantExt:
    """Marks a ruleset's per-combatant state class: ``class Fighter(Struct, CombatantExt,
    frozen=True, tag=True)``."""

    __slots__ = ()


class CombatExt:
    """Marks a ruleset's per-combat state class (``Combat.ext``; see :class:`CombatantExt`)."""

    __slots__ = ()


class WorldExt:
    """Marks a ruleset's world-level state class (``World.ext``; see :class:`CombatantExt`)."""

    __slots__ = ()


HOLDING = "holding"
GIVING_UP = "giving_up"
ANY_POINT = "any_point"
STEPPED_IN = "stepped_in"


class Hold(Struct, frozen=True):
    """A combatant's hold (:mod:`.holding`; the states: docs/engine.md, "Hold and act")."""

    state: str
    #: the round the hold was declared in
    since: int
    #: the score to return to at the next round start (ST-4, ST-5), or None to keep the score
    original: float | None = None
    target_aware: bool = False
    #: declared with ``next_round`` (ST-4) rather than carried over (ST-5)
    gave_up: bool = False
    #: where a STEPPED_IN combatant went: ("after" | "before", anchor id); kept by a
    #: HOLDING one that holds again at the place it stepped into this round
    point: tuple[str, str] | None = None
    #: it interrupted the turn in progress and its own turn has not ended: the moment before
    #: the anchor is open, and others interrupting the anchor share it (ST-3)
    interrupting: bool = False


def _equal_but(cls: type[Struct], cache: str) -> None:
    """Give a Struct an ``__eq__`` that compares every field but ``cache`` (the identical
    object first: the usual case), and no ``__hash__`` (it would hash the cache)."""
    state = attrgetter(*(name for name in cls.__struct_fields__ if name != cache))

    def __eq__(self: Any, other: object) -> bool:
        if self is other:
            return True
        if type(other) is not cls:
            return NotImplemented
        return bool(state(self) == state(other))

    cls.__eq__ = __eq__  # type: ignore[method-assign]
    cls.__hash__ = None  # type: ignore[assignment]


class Combatant(Struct, frozen=True):
    """A combatant as the engine knows it: identity from snapshots, score from rolls."""

    id: str
    name: str = ""
    owners: tuple[str, ...] = ()
    is_npc: bool = False
    hidden: bool = False
    defeated: bool = False
    group: str | None = None
    actor_id: str | None = None
    token_id: str | None = None
    stats: Mapping[str, Any] = {}
    score: float | None = None
    #: Foundry's ``Combatant.roundJoined`` (v14; None before v14): the round it joined in
    round_joined: int | None = None
    #: first contact (:mod:`.adopt`): (the score adopted, the value Foundry stored)
    adopted: tuple[float, float] | None = None
    hold: Hold | None = None
    ext: CombatantExt | None = None
    #: what the last snapshot said of the fields above (to see at once that nothing changed):
    #: kept in snapshots, never compared
    source: tuple[Any, ...] = ()


_equal_but(Combatant, "source")


class Combat(Struct, frozen=True, weakref=True):
    """One Foundry combat (encounter) under one ruleset."""

    id: str
    ruleset: str
    combatants: Mapping[str, Combatant] = {}
    #: creation order of the combatants, as the snapshot lists them
    roster: tuple[str, ...] = ()
    groups: Mapping[str, str] = {}  # group id -> name
    round: int = 0
    order: tuple[str, ...] = ()
    passed: frozenset[str] = frozenset()
    current: str | None = None
    #: Foundry core's Skip Defeated as the module sends it, or None when the snapshot does not say
    skip_defeated: bool | None = None
    #: Foundry's own turn order as the module states it (``turn_order``), or (): how a tie the
    #: ruleset's sort key leaves goes (:func:`.order.rules_sort`; foundry-core's ties)
    turn_order: tuple[str, ...] = ()
    ext: CombatExt | None = None
    revision: int = 0
    #: the last plan's body as JSON text (:func:`.plan.plan_text`), or None
    last_plan: str | None = None
    #: the next-round preview's cache (:mod:`.preview`): never compared, shown or in a snapshot
    preview_cache: Any = None

    @property
    def started(self) -> bool:
        return self.round > 0

    def members(self, group: str) -> list[Combatant]:
        """The combatants of a CombatantGroup, in the roster's order."""
        return [self.combatants[cid] for cid in self.roster if self.combatants[cid].group == group]


_equal_but(Combat, "preview_cache")


class Prompt(Struct, frozen=True):
    """A question the sidecar is waiting on (a reroll offer, a GM approval, ...)."""

    prompt_id: str
    kind: str
    combat_id: str | None
    combatant_id: str | None
    to: tuple[str, ...] | str  # user ids, or "gm"
    rule: str
    data: Mapping[str, Any] = {}

    def to_wire(self) -> dict[str, Any]:
        to = self.to if isinstance(self.to, str) else list(self.to)
        return {**asdict(self), "to": to, "data": dict(self.data)}


class World(Struct, frozen=True):
    """Everything the sidecar knows about one Foundry world."""

    world: str
    ruleset: str = "foundry-core"
    settings: Mapping[str, Any] = {}
    gm_users: frozenset[str] = frozenset()
    last_seq: int = 0
    combats: Mapping[str, Combat] = {}
    prompts: Mapping[str, Prompt] = {}
    #: Ruleset state kept outside any combat (e.g. Ready to strike), keyed by ruleset id.
    ext: Mapping[str, WorldExt] = {}


class Session(Struct, frozen=True):
    """A connection's auth (without the token): who the GMs are, which ruleset, settings."""

    world: str
    ruleset: str
    settings: Mapping[str, Any]
    gm_users: frozenset[str]


class Notice(Struct, frozen=True):
    """Something a rule did that the table should read (a dash...): the ack's ``notices``."""

    kind: str
    text: str
    data: Mapping[str, Any] = {}

    def to_wire(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, **self.data}


class Outcome(Struct, frozen=True):
    """What one message did: the new world, and what to tell the module."""

    world: World
    plans: tuple[Any, ...] = ()
    prompts: tuple[Prompt, ...] = ()
    notices: tuple[Notice, ...] = ()


class Entry(Struct, frozen=True):
    """How one combatant appears in the plan (everything but its position and number)."""

    acts: str = "full"
    reaction: Mapping[str, Any] | None = None
    tags: tuple[str, ...] = ()
    detail: Mapping[str, Any] = {}
    rules: tuple[str, ...] = ()
    #: preferred tie-break fraction in [0, 1) for the initiative number (see order.py)
    hint: float | None = None


Describe = Callable[[Combat, Combatant], Entry]
#: given a combat, the sort key of each of its combatants: built once per sort, so what a key
#: reads of the whole combat (dice-pool's kept sequence) is computed there, not kept between sorts
SortKey = Callable[[Combat], Callable[[Combatant], Sequence[float]]]
