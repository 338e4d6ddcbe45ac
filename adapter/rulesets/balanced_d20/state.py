"""The state `balanced-d20` keeps per combatant (``Combatant.ext``) and per world (BI-3):
frozen msgspec Structs, the ones in ``Ruleset.state_types`` tagged for snapshots; and the
helpers its rules share."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from msgspec import Struct
from msgspec.structs import replace

from ...engine.context import Ctx
from ...engine.model import Combat, Combatant, CombatantExt, WorldExt
from ...engine.order import by_id, place_by_rules

RULESET_ID = "balanced-d20"


class Reroll(Struct, frozen=True):
    """One clever reroll (BI-2) of a combatant's (or a group's) initiative. ``status``:
    ``offered``, ``approval``, ``approved`` (pending), then ``declined``, ``denied``,
    ``rerolled`` or ``superseded`` (a plain roll came first)."""

    offer_id: str
    status: str
    to: tuple[str, ...] | str
    formula: str
    natural: int
    approval_id: str | None = None
    roll_prompt_id: str | None = None
    #: the CombatantGroup whose roll this is, or None for a combatant's own roll
    group: str | None = None

    @property
    def pending(self) -> bool:
        return self.status in ("offered", "approval", "approved")


class Readied(Struct, frozen=True):
    """A readied action (BI-5). ``status``: ``waiting``, ``triggered`` (may react now),
    ``checking`` (opposed check with the GM), ``won``, ``kept`` (due when the turn
    ``during`` ends), ``due`` (taken without a reaction until the next turn's end)."""

    readied_id: str
    mode: str
    trigger: str
    action: str
    target_id: str | None
    status: str = "waiting"
    prompt_id: str | None = None
    #: the turn in progress when the trigger fired (None: no turn in progress)
    during: str | None = None
    during_ended: bool = False


class Fighter(Struct, CombatantExt, frozen=True, tag=True):
    """What `balanced-d20` knows of one combatant."""

    #: the combatant's own initiative (roll total or the GM's number), before any dash
    base: float | None = None
    natural: int | None = None
    reroll: Reroll | None = None
    #: dashes still to come or in progress: (round, amount), BI-4
    dashes: tuple[tuple[int, int], ...] = ()
    #: no reaction until a turn of this combatant starts in a later round (BI-4)
    reaction_blocked_through: int | None = None
    no_dominance: bool = False
    first_turn_started: bool = False
    #: why the reaction is spent (``used``, ``readied``, ``preemptive``), None if it is not
    reaction_spent: str | None = None
    ready_to_strike: bool = False
    #: the watched creatures in the fight when Ready to strike applied (BI-3)
    watched: tuple[str, ...] = ()
    readied: Readied | None = None

    def dash_for(self, round_: int) -> int | None:
        return next((amount for r, amount in self.dashes if r == round_), None)


class Watch(Struct, frozen=True):
    """A declared Ready to strike state of one actor, outside combat (BI-3)."""

    actor_id: str
    token_id: str | None
    owners: tuple[str, ...]
    watching: tuple[str, ...]
    started_at: float
    confirmed: bool = False
    #: a later message's world time was at least 6 s past the start
    elapsed: bool = False

    @property
    def ready(self) -> bool:
        return self.confirmed or self.elapsed


class WorldState(Struct, WorldExt, frozen=True, tag=True):
    """World-level state of the ruleset: Ready to strike declarations by actor id."""

    watches: Mapping[str, Watch] = {}


def fighter(combatant: Combatant) -> Fighter:
    ext = combatant.ext
    return ext if isinstance(ext, Fighter) else Fighter()


def update_fighter(combat: Combat, cid: str, **changes: Any) -> Combat:
    """The combat with ``changes`` applied to one combatant's :class:`Fighter`; the very
    same combat when every change is the object already there."""
    c = combat.combatants[cid]
    f = fighter(c)
    if c.ext is f and all(getattr(f, name) is value for name, value in changes.items()):
        return combat
    return replace(combat, combatants={**combat.combatants, cid: replace(c, ext=replace(f, **changes))})


def dash_round(combat: Combat) -> int:
    """The round a dash in force now belongs to (before the start: round 1)."""
    return combat.round if combat.started else 1


def scored(combat: Combat, cid: str, base: float | None) -> Combat:
    """Set a combatant's own initiative; its score adds a dash in force this round (BI-4)."""
    combat = update_fighter(combat, cid, base=base)
    c = combat.combatants[cid]
    amount = fighter(c).dash_for(dash_round(combat))
    score = None if base is None else base + (amount or 0)
    return replace(combat, combatants={**combat.combatants, cid: replace(c, score=score)})


def world_state(ctx: Ctx) -> WorldState:
    state = ctx.ext.get(RULESET_ID)
    return state if isinstance(state, WorldState) else WorldState()


def stat(combatant: Combatant, name: str) -> int:
    value = combatant.stats.get(name, 0)
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def proficient(combatant: Combatant) -> tuple[str, ...]:
    skills = combatant.stats.get("proficient") or ()
    return tuple(str(s) for s in skills) if isinstance(skills, (list, tuple)) else ()


def sort_key(combat: Combat) -> Callable[[Combatant], tuple[float, ...]]:
    """Section 1's tie ruling: "the higher Dex modifier first, then Foundry's own order
    (`_id`)"."""
    return dex_then_id


def dex_then_id(combatant: Combatant) -> tuple[float, ...]:
    score = combatant.score if combatant.score is not None else 0.0
    return (score, float(stat(combatant, "dex")), *by_id(combatant.id))


def replace_in_order(combat: Combat, cid: str) -> Combat:
    """Re-place one combatant among the turns still to come (a turn in progress stays)."""
    return replace(combat, order=place_by_rules(combat, cid, sort_key))

