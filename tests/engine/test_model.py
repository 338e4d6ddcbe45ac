"""The engine's state is frozen msgspec Structs, copied only through ``msgspec.structs.replace``:
a field the class does not have is an error, never a silent new attribute; equality is the
state's, and the caches some objects carry take no part in it."""

from __future__ import annotations

import ast
import typing
from pathlib import Path
from typing import Any

import msgspec
import pytest
from msgspec.structs import replace

from adapter.engine.model import Combat, Combatant, Hold, Prompt, World
from adapter.rulesets import RULESETS

ADAPTER = Path(__file__).resolve().parents[2] / "adapter"
STATE = [World, Combat, Combatant, Prompt, Hold]


@pytest.mark.parametrize("state", [
    Combat(id="c1", ruleset="foundry-core"), Combatant(id="a"), World(world="w"),
])
def test_a_copy_with_a_misspelt_field_is_refused(state: Any) -> None:
    with pytest.raises(TypeError, match="currnet"):
        replace(state, currnet="a")


def test_a_copy_keeps_every_field_but_the_ones_changed() -> None:
    combat = Combat(id="c1", ruleset="foundry-core", round=2, order=("a", "b"), current="a")
    moved = replace(combat, current="b")
    assert (moved.current, moved.round, moved.order, combat.current) == ("b", 2, ("a", "b"), "a")


def test_no_module_copies_state_by_hand() -> None:
    # ``evolve`` (object.__new__ and a __dict__ update, skipping __init__) and the snapshot
    # decoder that built state the same way are gone; dataclasses.replace no longer copies state
    found = [
        f"{path.relative_to(ADAPTER)}:{node.lineno}"
        for path in sorted(ADAPTER.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if (isinstance(node, ast.Name) and node.id == "evolve")
        or (isinstance(node, ast.Attribute) and node.attr == "__new__"
            and isinstance(node.value, ast.Name) and node.value.id == "object")
        or (isinstance(node, ast.ImportFrom) and node.module == "dataclasses"
            and any(alias.name == "replace" for alias in node.names))
    ]
    assert found == []


@pytest.mark.parametrize("cls", STATE + [cls for rs in RULESETS.values() for cls in rs.state_types],
                         ids=lambda cls: cls.__name__)
def test_every_state_class_is_a_frozen_struct_holding_nothing_but_its_fields(cls: type) -> None:
    # a ClassVar set on an instance (the preview's cache once was) is state no copy, no
    # comparison and no snapshot sees; the engine's state is its declared fields
    assert issubclass(cls, msgspec.Struct) and cls.__struct_config__.frozen
    hints = typing.get_type_hints(cls, include_extras=True)
    assert [name for name, hint in hints.items() if typing.get_origin(hint) is typing.ClassVar] == []
    assert set(hints) == set(cls.__struct_fields__)


def test_a_combatant_s_source_takes_no_part_in_equality() -> None:
    a = Combatant(id="a", name="Abel", source=("Abel",))
    assert a == Combatant(id="a", name="Abel") == replace(a, source=("Abel", None))
    assert a != replace(a, name="Cain") and a != replace(a, score=1.0)
    assert (a != replace(a, source=())) is False
    hashes: list[object] = [Combatant.__hash__, Combat.__hash__]
    assert hashes == [None, None]  # msgspec's hash would see the cache


def test_a_combat_s_preview_cache_takes_no_part_in_equality() -> None:
    combat = Combat(id="c1", ruleset="foundry-core", round=1)
    assert combat == replace(combat, preview_cache=object())
    assert combat != replace(combat, round=2) and combat != replace(combat, ruleset="storyteller")
    others: list[object] = [Combatant(id="c1"), "c1"]
    assert all(combat != other for other in others)


def _decorator_name(deco: ast.expr) -> str | None:
    node = deco.func if isinstance(deco, ast.Call) else deco
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def test_the_engine_and_the_rulesets_keep_no_module_global_cache() -> None:
    # issue 27: the engine holds no hidden state; what a cache gave, state passed in gives
    # (PlanMemo, Seen), never a functools cache that outlives the message
    found = [
        f"{path.relative_to(ADAPTER)}:{node.lineno}"
        for folder in ("engine", "rulesets")
        for path in sorted((ADAPTER / folder).rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and any(_decorator_name(deco) in {"lru_cache", "cache"} for deco in node.decorator_list)
    ]
    assert found == []


def _module_containers() -> dict[str, Any]:
    """Every list, dict, set or bytearray held at module level in the engine and the rulesets,
    copied one level deep (a value kept there between messages shows as a change)."""
    import copy
    import importlib
    import pkgutil

    import adapter.engine
    import adapter.rulesets

    found: dict[str, Any] = {}
    for package in (adapter.engine, adapter.rulesets):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            module = importlib.import_module(info.name)
            for name, value in vars(module).items():
                if isinstance(value, (list, dict, set, bytearray)):
                    found[f"{info.name}.{name}"] = copy.copy(value)
    return found


def test_replaying_every_golden_leaves_the_modules_as_they_were() -> None:
    # issue 27: no module-global cache, whatever its form (a functools cache is caught above,
    # a list or dict kept at module level here: dice-pool once kept its last sorted combat)
    from adapter.replay import Replay, replay_lines

    recordings = sorted((ADAPTER.parent / "tests" / "recordings").rglob("*.jsonl"))
    recordings = [r for r in recordings if not r.name.endswith(".golden.jsonl")]
    before = _module_containers()
    for recording in recordings:
        lines = recording.read_text(encoding="utf-8").splitlines()
        assert list(replay_lines(lines, Replay(rulesets=RULESETS)))
    after = _module_containers()
    assert sorted(name for name in before if before[name] != after.get(name)) == []
