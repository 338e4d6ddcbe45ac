"""The dice-pool ruleset's own state, kept in ``Combatant.ext`` and ``Combat.ext``: frozen
msgspec Structs, the ones in ``Ruleset.state_types`` tagged for snapshots."""

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
    """A combatant's roll (its group's, DP-6), and its hesitation (DP-4)."""

    roll: PoolRoll
    #: its own turns still to lose; only goes down, one per turn of it that passes
    turns_lost: int = 0
    #: the round whose turn was the last lost: it hesitates until that round ends
    lost_in_round: int | None = None
    #: a group member that stepped in elsewhere or got the GM's number keeps its own place
    apart: bool = False


class DicePoolCombat(Struct, CombatExt, frozen=True, tag=True):
    """Per-combat state: the rolls of the CombatantGroups, for later joiners (DP-6), and the
    kept sequence (DP-5: the order the round started in, less anyone scored since)."""

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
