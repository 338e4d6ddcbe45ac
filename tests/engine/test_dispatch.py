"""Rules are dispatched by the class of what happens: each rule is typed to the class it is
listed under, the message classes follow their schemas, and no rule tests its event's type."""

from __future__ import annotations

import ast
import inspect
import json
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

from adapter.engine.context import Ctx
from adapter.engine.events import EVENTS
from adapter.engine.messages import ENVELOPE, HOOKS, INTENTS, Intent
from adapter.engine.model import Combat
from adapter.rulesets import RULESETS

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "schemas"


def _handled(rule: Callable[..., Any]) -> set[type]:
    """The classes the rule's third parameter is annotated with (a union gives several)."""
    hints = typing.get_type_hints(rule)
    third = list(inspect.signature(rule).parameters)[2]
    hint = hints[third]
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return set(typing.get_args(hint))
    return {hint}


@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_every_rule_is_typed_to_the_class_it_is_listed_under(ruleset: str) -> None:
    rs = RULESETS[ruleset]
    for event, rules in rs.on.items():
        assert event in EVENTS
        for rule in rules:
            assert event in _handled(rule), f"{rule.__name__} is listed under {event.__name__}"
    for intent, handler in rs.intents.items():
        assert intent in INTENTS
        assert _handled(handler) == {intent}, f"{handler.__name__} is listed under {intent.__name__}"


@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_every_rule_takes_the_context_and_the_combat(ruleset: str) -> None:
    """Each rule's own annotations say it takes a Ctx and a combat (mypy checks the tables'
    types, ``ctx`` a :class:`Ctx`; this also catches a rule whose ``ctx`` is Any)."""
    rs = RULESETS[ruleset]
    rules: list[Callable[..., Any]] = [r for rules in rs.on.values() for r in rules] + list(rs.intents.values())
    rules += [r for r in (rs.adopt, rs.formula) if r is not None]
    for rule in rules:
        hints = typing.get_type_hints(rule)
        ctx, combat = list(inspect.signature(rule).parameters)[:2]
        assert hints[ctx] is Ctx, f"{rule.__name__}: ctx is {hints[ctx]}"
        assert Combat in {hints[combat], *typing.get_args(hints[combat])}, f"{rule.__name__}: combat is {hints[combat]}"


def test_the_intent_kinds_each_ruleset_takes_are_those_welcome_announced_before() -> None:
    kinds = {rs_id: sorted(rs.intent_kinds) for rs_id, rs in RULESETS.items()}
    assert kinds == {
        "foundry-core": [],
        "balanced-d20": ["dash", "opposed.result", "reaction.use", "readied.declare",
                         "readied.trigger", "ready.break", "ready.confirm", "ready.start",
                         "reroll.approve", "reroll.decide"],
        "dice-pool": ["act", "hold"],
        "storyteller": ["act", "hold"],
    }


def test_the_order_of_the_rules_for_one_event_is_the_listed_tuple() -> None:
    rolled = [r.__name__ for r in RULESETS["balanced-d20"].on[EVENTS[3]]]
    assert rolled == ["initiative_roll", "clever_reroll_on_roll"]
    round_started = [r.__name__ for r in RULESETS["dice-pool"].on[EVENTS[6]]]
    assert round_started == ["kept_sequence", "hold_carry_over"]  # DP-5 reads the holds first


@pytest.mark.parametrize("cls", INTENTS, ids=lambda c: c.kind)
def test_an_intent_class_has_the_fields_of_its_schema(cls: type[Intent]) -> None:
    schema = json.loads((SCHEMAS / "intents" / f"{cls.kind}.schema.json").read_text())
    args = set(cls.__struct_fields__) - ENVELOPE
    assert args == set(schema.get("properties", {}))
    required = {f.name for f in msgspec.structs.fields(cls) if f.required} - ENVELOPE
    assert required == set(schema.get("required", []))
    envelope = json.loads((SCHEMAS / "intent.schema.json").read_text())
    needs = next(c["then"].get("required", []) for c in envelope["allOf"]
                 if c["if"]["properties"]["kind"]["const"] == cls.kind)
    for name in ("combat_id", "combatant_id"):
        assert msgspec.structs.fields(cls)[list(cls.__struct_fields__).index(name)].required == (name in needs), \
            f"{cls.kind}.{name}"


def test_every_hook_and_intent_of_the_schemas_has_its_class() -> None:
    hook = json.loads((SCHEMAS / "hook.schema.json").read_text())
    intent = json.loads((SCHEMAS / "intent.schema.json").read_text())
    assert sorted(str(c.__struct_config__.tag) for c in HOOKS) == sorted(hook["properties"]["hook"]["enum"])
    assert sorted(c.kind for c in INTENTS) == sorted(intent["properties"]["kind"]["enum"])


def test_no_rule_tests_the_type_of_its_event_or_reads_raw_arguments() -> None:
    found = []
    for path in [*(ROOT / "adapter" / "rulesets").rglob("*.py"),
                 *(ROOT / "adapter" / "engine" / "holding").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "isinstance" and isinstance(node.args[0], ast.Name)
                    and node.args[0].id in ("event", "intent")):
                found.append(f"{path.name}:{node.lineno} isinstance({node.args[0].id}, ...)")
            if isinstance(node, ast.Attribute) and node.attr == "args" and isinstance(node.value, ast.Name) \
                    and node.value.id in ("event", "intent"):
                found.append(f"{path.name}:{node.lineno} {node.value.id}.args")
    assert found == []
