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
    """Foundry's world time as the hook reports it (seconds)."""

    world_time: float


@dataclass(frozen=True)
class Joined:
    """A combatant joined the combat."""

    combatant_id: str


@dataclass(frozen=True)
class Left:
    """A combatant left the combat (deleted)."""

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
    """The GM began the combat."""


@dataclass(frozen=True)
class RoundStarted:
    """A round began."""

    round: int


@dataclass(frozen=True)
class RoundEnded:
    """A round ended (every turn of it taken or passed)."""

    round: int


@dataclass(frozen=True)
class TurnStarted:
    """A combatant's turn began."""

    combatant_id: str


@dataclass(frozen=True)
class TurnEnded:
    """A combatant's turn ended."""

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
