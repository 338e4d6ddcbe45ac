"""The engine's state, a connection's session and what a message did: frozen msgspec Structs,
nothing else (the inbound messages are the typed classes of :mod:`.messages`).

Invariants:
- State is never mutated: every change builds new objects with ``msgspec.structs.replace``,
  which refuses a field the class does not have (a misspelt ``replace(combat, currnet=x)``
  is a ``TypeError``); the mappings held in fields are plain dicts that are never written
  after construction.
- The ruleset's own state (``Combatant.ext``, ``Combat.ext``, ``World.ext[<ruleset id>]``) is
  a frozen Struct of the ruleset, tagged (``tag=True``) and marked with the place it lives
  in (:class:`CombatantExt`, :class:`CombatExt`, :class:`WorldExt`): the store's codec reads
  each place back as a tagged union of what the rulesets it was given declare
  (``Ruleset.state_types``), and the engine never names one.
- Equality is the state's: two combatants (two combats) are equal when every field is, but
  the caches they carry (``Combatant.source``, ``Combat.preview_cache``), which no
  comparison sees. A memo that asks for "the very combatant" compares with ``is``.
- Nothing here knows about sockets, SQLite, clocks or randomness: dice results and the world
  time arrive inside messages.
- ``Combatant.score`` is the rule's initiative score (the roll total, the net successes, a
  score set by a hold...), with the system's decimals. ``None`` until the combatant has
  rolled (or, at first contact, until Foundry's document shows a value).
- ``Combat.order`` is the turn order of the current round (all combatants, rolled first);
  ``Combat.passed`` holds those whose turn has ended this round; ``Combat.current`` is the
  combatant whose turn it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import attrgetter
from typing import Any

from msgspec import Struct

JSON = Any


class CombatantExt:
    """Marks a ruleset's per-combatant state class (``Combatant.ext``): a frozen, tagged Struct
    that also derives from this (``class Fighter(Struct, CombatantExt, frozen=True, tag=True)``)."""

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
    """A combatant's hold (the shared hold/act mechanics, :mod:`.holding`, whose docstring
    has the state table): kept here, beside the combatant that holds it."""

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
    object first: the usual case), and no ``__hash__`` (it would hash the cache too; nothing
    hashes state, which holds dicts)."""
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
    #: first contact (adapter.engine.adopt): (the score adopted, the value Foundry stored);
    #: while the score is still the one adopted, the plan writes the stored value back as is
    adopted: tuple[float, float] | None = None
    #: State of the shared hold/act mechanics (adapter.engine.holding), or None.
    hold: Hold | None = None
    #: The ruleset's own per-combatant state (a Struct of the ruleset), or None.
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
    #: Foundry core's Skip Defeated as the module sends it (``skip_defeated``), or None when
    #: the snapshot does not say (an older module, an old recording: passed over, as on)
    skip_defeated: bool | None = None
    #: Foundry's own turn order as the module states it (``turn_order``: ``combat.turns`` as
    #: ids, sorted by the system's ``_sortCombatants``), or () when the snapshot does not say:
    #: the last tie-break of every sort (:func:`adapter.engine.order.rules_sort`)
    turn_order: tuple[str, ...] = ()
    #: The ruleset's own per-combat state, or None.
    ext: CombatExt | None = None
    revision: int = 0
    #: the last plan's body as JSON text (:func:`adapter.engine.plan.plan_text`), or None: a
    #: world keeps some 4 KB of text for a 20-combatant plan instead of a ~9 KB tree of dicts
    #: and lists; :func:`adapter.engine.apply.plan_of` reads it back (a resent message, the
    #: status page), and an unchanged plan is seen by comparing the texts
    last_plan: str | None = None
    #: the next-round preview's cache, which adapter.engine.preview leaves on the combat a
    #: message leaves: never compared, never shown, never in a snapshot
    preview_cache: Any = None

    @property
    def started(self) -> bool:
        return self.round > 0


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
        return {
            "prompt_id": self.prompt_id,
            "kind": self.kind,
            "combat_id": self.combat_id,
            "combatant_id": self.combatant_id,
            "to": self.to if isinstance(self.to, str) else list(self.to),
            "rule": self.rule,
            "data": dict(self.data),
        }


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


# ---------------------------------------------------------------- a connection


class Session(Struct, frozen=True):
    """A connection's auth (without the token): who the GMs are, which ruleset, settings."""

    world: str
    ruleset: str
    settings: Mapping[str, Any]
    gm_users: frozenset[str]


class Notice(Struct, frozen=True):
    """Something a rule did that the table should read (a dash, a readied action taken), with its data: sent in the ack's ``notices``."""

    kind: str
    text: str
    data: Mapping[str, Any] = {}

    def to_wire(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, **self.data}


class Outcome(Struct, frozen=True):
    """What one message did: the new world, and what to tell the module."""

    world: World
    plans: tuple[JSON, ...] = ()
    prompts: tuple[Prompt, ...] = ()
    notices: tuple[Notice, ...] = ()
