"""decode(encode(world)) == world, for worlds holding any state each ruleset declares.

The strategies are read from the classes' annotations (the same ones the decoder reads), so
a field added to a state class is generated, encoded and decoded here without a change."""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from adapter.engine.model import Combat, Combatant, CombatantExt, CombatExt, Prompt, World, WorldExt
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
    """Values of a type as the state classes annotate them (a Struct's ``fixed`` fields left
    to their defaults: drawn by the caller)."""
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
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        hints = typing.get_type_hints(tp)
        return st.builds(tp, **{name: values(hints[name]) for name in tp.__struct_fields__ if name not in fixed})
    raise TypeError(f"no strategy for {tp!r}")


def maybe(kinds: tuple[type, ...]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), *(values(cls) for cls in kinds))


def declared(rs: Ruleset, place: type) -> tuple[type, ...]:
    return tuple(cls for cls in rs.state_types if issubclass(cls, place))


COMBATANT, PROMPT = values(Combatant, ext=None), values(Prompt)
COMBAT = values(Combat, combatants=None, ext=None, preview_cache=None)
WORLD = values(World, combats=None, ext=None, prompts=None)


def worlds(rs: Ruleset) -> st.SearchStrategy[World]:
    """Worlds whose combats run under ``rs``, holding the state ``rs`` declares."""
    person = st.builds(lambda c, ext: replace(c, ext=ext), COMBATANT, maybe(declared(rs, CombatantExt)))
    combat = st.builds(
        lambda c, people, ext: replace(
            c, ruleset=rs.id, combatants={p.id: p for p in people}, roster=tuple(p.id for p in people), ext=ext),
        COMBAT, st.lists(person, max_size=4, unique_by=lambda c: c.id), maybe(declared(rs, CombatExt)))
    ext = maybe(declared(rs, WorldExt)).map(lambda s: {} if s is None else {rs.id: s})
    return st.builds(
        lambda w, c, ext, prompts: replace(w, combats={c.id: c}, ext=ext, prompts=prompts),
        WORLD, combat, ext, st.dictionaries(st.text(max_size=6), PROMPT, max_size=2))


#: sets and maps in a fixed order: equal states give equal bytes (``source`` included, which
#: equality ignores)
CANONICAL = msgspec.msgpack.Encoder(order="deterministic")


# Combatant.ext, Combat.ext and World.ext hold what a ruleset declares: drawn above, by ruleset
@settings(max_examples=examples(60), deadline=None)
@given(st.one_of(*(worlds(rs) for rs in RULESETS.values())))
def test_every_ruleset_s_state_comes_back_equal(world: World) -> None:
    back = CODEC.decode(snapshots.Encoder().encode(world))
    assert back == world
    assert CANONICAL.encode(back) == CANONICAL.encode(world)
