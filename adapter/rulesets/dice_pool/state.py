"""The dice-pool ruleset's own state, kept in ``Combatant.ext`` and ``Combat.ext``.

Frozen, module-level msgspec Structs (compared by value; the ones declared in ``Ruleset.state_types``
are tagged, and snapshots read them back). Invariants:
- ``PoolRoll`` is what one initiative roll gave: the pool rolled, the base (the tie-break,
  DP-2), the recounted successes and ones, the net result and whether it was a critical
  failure (DP-3). A group's members all hold the group's ``PoolRoll`` (DP-6).
- ``DicePoolState.turns_lost`` counts the combatant's own turns still to lose (DP-4); it
  only goes down, one per turn of the combatant that passes. ``lost_in_round`` is the round
  whose turn was the last one lost: the combatant stays hesitating until that round ends
  (Abel "loses his first turn's active phase but may dodge or block" for all of it).
- ``DicePoolState.apart``: a group member that stepped in elsewhere on its own, or got the
  GM's number, keeps its own place in the sequence, not its group's (DP-5, DP-6).
- ``DicePoolCombat.groups`` holds the roll of each CombatantGroup that has rolled, so a
  member who joins later takes the group's result.
- ``DicePoolCombat.sequence`` is the kept sequence (DP-5): the order the round started in,
  less anyone given a new score since (a roll, the GM's number). Whoever has rolled and is
  not in it (a joiner, a new score) is placed among it by DP-2.
"""

from __future__ import annotations

from collections.abc import Mapping

from msgspec import Struct

from ...engine.model import CombatantExt, CombatExt


class PoolRoll(Struct, frozen=True):
    """One initiative roll, recounted (DP-1, DP-3)."""

    pool: int
    base: int
    dice: tuple[int, ...]
    successes: int
    ones: int
    net: int
    critical: bool
    group: str | None = None


class DicePoolState(Struct, CombatantExt, frozen=True, tag=True):
    """A combatant's roll, the turns it still loses to hesitation (DP-4), and whether it
    stands apart from its group (DP-5, DP-6)."""

    roll: PoolRoll
    turns_lost: int = 0
    lost_in_round: int | None = None
    apart: bool = False


class DicePoolCombat(Struct, CombatExt, frozen=True, tag=True):
    """Per-combat state: the rolls of the CombatantGroups (DP-6) and the kept sequence (DP-5)."""

    groups: Mapping[str, PoolRoll] = {}
    sequence: tuple[str, ...] = ()


def roll_of(ext: object) -> PoolRoll | None:
    return ext.roll if isinstance(ext, DicePoolState) else None


def turns_lost_of(ext: object) -> int:
    return ext.turns_lost if isinstance(ext, DicePoolState) else 0


def hesitating(ext: object, round_: int) -> bool:
    """DP-4: the combatant still loses turns, or lost its turn of this round."""
    if not isinstance(ext, DicePoolState):
        return False
    return ext.turns_lost > 0 or (ext.lost_in_round is not None and ext.lost_in_round == round_)


def combat_state(ext: object) -> DicePoolCombat:
    return ext if isinstance(ext, DicePoolCombat) else DicePoolCombat()
