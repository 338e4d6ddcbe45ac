"""The events a message turns into (in which order: docs/engine.md, "Rules and rulesets"); a
ruleset's ``on`` table gives each to its rules. Frozen Structs, like the messages.
"""

from __future__ import annotations

from typing import get_args

from msgspec import Struct

from .messages import Roll


class Clock(Struct, frozen=True):
    """Foundry's world time as the message reports it (seconds): first, for every combat."""

    world_time: float


class Joined(Struct, frozen=True):
    combatant_id: str


class Left(Struct, frozen=True):
    combatant_id: str


class Rolled(Struct, frozen=True):
    """An initiative roll for a combatant (or, with ``group_id``, for a CombatantGroup)."""

    combatant_id: str | None
    roll: Roll
    reroll_of: str | None = None
    group_id: str | None = None


class ScoreSet(Struct, frozen=True):
    """The GM set a combatant's initiative by hand (intent ``initiative.set``)."""

    combatant_id: str
    value: float


class CombatStarted(Struct, frozen=True):
    """The GM began the combat (or first contact met it begun)."""


class RoundStarted(Struct, frozen=True):
    round: int


class RoundEnded(Struct, frozen=True):
    """A round ended (every turn of it taken or passed)."""

    round: int


class TurnStarted(Struct, frozen=True):
    combatant_id: str


class TurnEnded(Struct, frozen=True):
    combatant_id: str
    #: the turn passed without the combatant acting (the module skipped it)
    skipped: bool = False


Event = (
    Clock | Joined | Left | Rolled | ScoreSet | CombatStarted | RoundStarted | RoundEnded
    | TurnStarted | TurnEnded
)

#: every event class (a ruleset's ``on`` is keyed by these)
EVENTS: tuple[type[Event], ...] = get_args(Event)
