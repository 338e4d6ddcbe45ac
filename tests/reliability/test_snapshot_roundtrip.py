"""decode(encode(world)) == world, for worlds holding any state each ruleset declares.

The strategies are read from the classes' annotations (the same ones the decoder reads), so
a field added to a state class is generated, encoded and decoded here without a change."""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.engine.holding import Hold
from adapter.engine.model import Combat, Combatant, Prompt, World
from adapter.engine.ruleset import Ruleset
from adapter.rulesets import RULESETS
from adapter.store import snapshots
from tests.support.examples import examples

CODEC = snapshots.Codec(RULESETS.values())

#: what a field typed ``Any`` holds: JSON values (stats, settings, a prompt's data)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def values(tp: Any, **fixed: Any) -> st.SearchStrategy[Any]:
    """Values of a type as the state classes annotate them (a dataclass's ``fixed`` fields
    left to their defaults: drawn by the caller)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is Any:
        return JSON
    if tp is type(None):
        return st.none()
    if tp in (bool, str):
        return st.booleans() if tp is bool else st.text(max_size=10)
    if tp is int:
        return st.integers(-(2**63), 2**63 - 1)
    if tp is float:
        return st.floats(allow_nan=False)  # NaN comes back, but is not equal to itself
    if origin in (typing.Union, types.UnionType):
        return st.one_of(*(values(a) for a in args))
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return st.lists(values(args[0]), max_size=3).map(tuple)
        return st.tuples(*(values(a) for a in args))
    if origin is frozenset:
        return st.frozensets(values(args[0]), max_size=3)
    if origin in (dict, Mapping):
        return st.dictionaries(values(args[0]), values(args[1]), max_size=3)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        hints = typing.get_type_hints(tp)
        return st.builds(tp, **{f.name: values(hints[f.name]) for f in dataclasses.fields(tp)
                                if f.name not in fixed})
    raise TypeError(f"no strategy for {tp!r}")


def maybe(cls: type | None) -> st.SearchStrategy[Any]:
    return st.none() if cls is None else st.none() | values(cls)


COMBATANT, PROMPT, HOLD = values(Combatant, ext=None, hold=None), values(Prompt), maybe(Hold)
COMBAT = values(Combat, combatants=None, ext=None, preview_cache=None)
WORLD = values(World, combats=None, ext=None, prompts=None)


def worlds(rs: Ruleset) -> st.SearchStrategy[World]:
    """Worlds whose combats run under ``rs``, holding the state ``rs`` declares."""
    kinds = rs.state
    person = st.builds(lambda c, ext, hold: dataclasses.replace(c, ext=ext, hold=hold),
                       COMBATANT, maybe(kinds.combatant), HOLD)
    combat = st.builds(
        lambda c, people, ext: dataclasses.replace(
            c, ruleset=rs.id, combatants={p.id: p for p in people}, roster=tuple(p.id for p in people), ext=ext),
        COMBAT, st.lists(person, max_size=4, unique_by=lambda c: c.id), maybe(kinds.combat))
    ext = st.just({}) if kinds.world is None else values(kinds.world).map(lambda s: {rs.id: s})
    return st.builds(
        lambda w, c, ext, prompts: dataclasses.replace(w, combats={c.id: c}, ext=ext, prompts=prompts),
        WORLD, combat, ext, st.dictionaries(st.text(max_size=6), PROMPT, max_size=2))


# Combatant.hold and .ext, Combat.ext and World.ext are typed Any: drawn above, by ruleset
@settings(max_examples=examples(40), deadline=None)
@given(st.one_of(*(worlds(rs) for rs in RULESETS.values())))
def test_every_ruleset_s_state_comes_back_equal(world: World) -> None:
    assert CODEC.decode(snapshots.encode(world)) == world
