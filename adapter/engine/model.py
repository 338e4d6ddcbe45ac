"""The engine's state, a connection's session and what a message did: frozen dataclasses, nothing
else (the inbound messages are the typed classes of :mod:`.messages`).

Invariants:
- State is never mutated: every change builds new objects with ``dataclasses.replace``, which
  runs ``__init__`` and so refuses a field the class does not have (a misspelt
  ``replace(combat, currnet=x)`` is a ``TypeError``, and mypy sees it); the mappings held
  in fields are plain dicts that are never written after construction.
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
from dataclasses import dataclass, field
from typing import Any

JSON = Any


@dataclass(frozen=True)
class Combatant:
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
    stats: Mapping[str, Any] = field(default_factory=dict)
    score: float | None = None
    #: Foundry's ``Combatant.roundJoined`` (v14; None before v14): the round it joined in
    round_joined: int | None = None
    #: first contact (adapter.engine.adopt): (the score adopted, the value Foundry stored);
    #: while the score is still the one adopted, the plan writes the stored value back as is
    adopted: tuple[float, float] | None = None
    #: State of the shared hold/act mechanics (adapter.engine.holding), or None.
    hold: Any = None
    #: The ruleset's own per-combatant state (a frozen dataclass of the ruleset), or None.
    ext: Any = None
    #: what the last snapshot said of the fields above (to see at once that nothing changed)
    source: tuple[Any, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class Combat:
    """One Foundry combat (encounter) under one ruleset."""

    id: str
    ruleset: str
    combatants: Mapping[str, Combatant] = field(default_factory=dict)
    #: creation order of the combatants, as the snapshot lists them
    roster: tuple[str, ...] = ()
    groups: Mapping[str, str] = field(default_factory=dict)  # group id -> name
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
    ext: Any = None
    revision: int = 0
    #: the last plan's body as JSON text (:func:`adapter.engine.plan.plan_text`), or None: a
    #: world keeps some 4 KB of text for a 20-combatant plan instead of a ~9 KB tree of dicts
    #: and lists; :func:`adapter.engine.apply.plan_of` reads it back (a resent message, the
    #: status page), and an unchanged plan is seen by comparing the texts
    last_plan: str | None = None
    #: the next-round preview's cache, which adapter.engine.preview leaves on the combat a
    #: message leaves: never compared, never shown, never in a snapshot
    preview_cache: Any = field(default=None, compare=False, repr=False)

    @property
    def started(self) -> bool:
        return self.round > 0


@dataclass(frozen=True)
class Prompt:
    """A question the sidecar is waiting on (a reroll offer, a GM approval, ...)."""

    prompt_id: str
    kind: str
    combat_id: str | None
    combatant_id: str | None
    to: tuple[str, ...] | str  # user ids, or "gm"
    rule: str
    data: Mapping[str, Any] = field(default_factory=dict)

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


@dataclass(frozen=True)
class World:
    """Everything the sidecar knows about one Foundry world."""

    world: str
    ruleset: str = "foundry-core"
    settings: Mapping[str, Any] = field(default_factory=dict)
    gm_users: frozenset[str] = frozenset()
    last_seq: int = 0
    combats: Mapping[str, Combat] = field(default_factory=dict)
    prompts: Mapping[str, Prompt] = field(default_factory=dict)
    #: Ruleset state kept outside any combat (e.g. Ready to strike), keyed by ruleset id.
    ext: Mapping[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------- a connection


@dataclass(frozen=True)
class Session:
    """A connection's auth (without the token): who the GMs are, which ruleset, settings."""

    world: str
    ruleset: str
    settings: Mapping[str, Any]
    gm_users: frozenset[str]


@dataclass(frozen=True)
class Notice:
    """Something a rule did that the table should read (a dash, a readied action taken), with its data: sent in the ack's ``notices``."""

    kind: str
    text: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_wire(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, **self.data}


@dataclass(frozen=True)
class Outcome:
    """What one message did: the new world, and what to tell the module."""

    world: World
    plans: tuple[JSON, ...] = ()
    prompts: tuple[Prompt, ...] = ()
    notices: tuple[Notice, ...] = ()
