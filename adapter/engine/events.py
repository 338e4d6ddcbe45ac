"""The events a message turns into, which every rule function receives in turn.

A hook becomes, in this order: ``Joined``/``Left`` for roster changes, ``Rolled`` for an
initiative roll, then the turn bookkeeping of :mod:`adapter.engine.turns` (``RoundEnded``,
``RoundStarted``, ``TurnEnded``, ``TurnStarted``). An intent becomes ``Declared`` and goes to
the one rule its kind is routed to; ``initiative.set`` becomes ``ScoreSet``. Every message
first gives ``Clock`` with its world time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


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
    roll: Mapping[str, Any]
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


@dataclass(frozen=True)
class Declared:
    kind: str
    combatant_id: str | None
    args: Mapping[str, Any] = field(default_factory=dict)


Event = (
    Clock | Joined | Left | Rolled | ScoreSet | CombatStarted | RoundStarted | RoundEnded
    | TurnStarted | TurnEnded | Declared
)
