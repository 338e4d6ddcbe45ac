"""The events a message turns into; a ruleset's ``on`` table gives each to its rules.

A hook becomes, in this order: ``Joined``/``Left`` for roster changes, ``Rolled`` for an
initiative roll, then the turn bookkeeping of :mod:`adapter.engine.turns` (``RoundEnded``,
``RoundStarted``, ``TurnEnded``, ``TurnStarted``). An intent goes, as it is (a class of
:mod:`.messages`), to the one rule its class is routed to (``Ruleset.intents``), and may
cause events itself (a turn ending...); ``initiative.set`` becomes ``ScoreSet``. Every message
about a combat first gives ``Clock`` with its world time.
"""

from __future__ import annotations

from dataclasses import dataclass

from .messages import Roll


@dataclass(frozen=True)
class Clock:
    world_time: float


@dataclass(frozen=True)
class Joined:
    combatant_id: str


@dataclass(frozen=True)
class Left:
    combatant_id: str


@dataclass(frozen=True)
class Rolled:
    """An initiative roll for a combatant (or, with ``group_id``, for a CombatantGroup)."""

    combatant_id: str | None
    roll: Roll
    reroll_of: str | None = None
    group_id: str | None = None


@dataclass(frozen=True)
class ScoreSet:
    """The GM set a combatant's initiative by hand (intent ``initiative.set``)."""

    combatant_id: str
    value: float


@dataclass(frozen=True)
class CombatStarted:
    pass


@dataclass(frozen=True)
class RoundStarted:
    round: int


@dataclass(frozen=True)
class RoundEnded:
    round: int


@dataclass(frozen=True)
class TurnStarted:
    combatant_id: str


@dataclass(frozen=True)
class TurnEnded:
    combatant_id: str
    #: the turn passed without the combatant acting (the module skipped it)
    skipped: bool = False


Event = (
    Clock | Joined | Left | Rolled | ScoreSet | CombatStarted | RoundStarted | RoundEnded
    | TurnStarted | TurnEnded
)

#: every event class (a ruleset's ``on`` is keyed by these)
EVENTS: tuple[type[Event], ...] = (
    Clock, Joined, Left, Rolled, ScoreSet, CombatStarted, RoundStarted, RoundEnded, TurnStarted,
    TurnEnded,
)
