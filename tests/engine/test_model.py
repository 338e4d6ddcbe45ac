"""The engine's state is copied only through ``dataclasses.replace``: a copy runs the class's
``__init__``, so a field the class does not have is an error, never a silent new attribute."""

from __future__ import annotations

import ast
import dataclasses
import typing
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from adapter.engine.model import Combat, Combatant, World

ADAPTER = Path(__file__).resolve().parents[2] / "adapter"


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
    # decoder that built state the same way are gone
    found = [
        f"{path.relative_to(ADAPTER)}:{node.lineno}"
        for path in sorted(ADAPTER.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if (isinstance(node, ast.Name) and node.id == "evolve")
        or (isinstance(node, ast.Attribute) and node.attr == "__new__"
            and isinstance(node.value, ast.Name) and node.value.id == "object")
    ]
    assert found == []


@pytest.mark.parametrize("cls", [World, Combat, Combatant])
def test_the_state_classes_hold_nothing_but_their_fields(cls: type) -> None:
    # a ClassVar set on an instance (the preview's cache once was) is state no copy, no
    # comparison and no snapshot sees; the engine's state is its declared fields
    hints = typing.get_type_hints(cls, include_extras=True)
    assert [name for name, hint in hints.items() if typing.get_origin(hint) is typing.ClassVar] == []
    assert set(hints) == {f.name for f in dataclasses.fields(cls)}
