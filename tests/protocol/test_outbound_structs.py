"""Each outbound struct (adapter/protocol/outbound.py) accepts exactly what its schema
accepts: on instances generated from the schema, on mutants of them, on every ack, plan and
prompt of the goldens and on mutants of some of them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter import protocol
from adapter.protocol.outbound import CHECKS
from tests.support.mutants import from_schema, mutated, paths, replaced

RECORDINGS = Path(__file__).resolve().parent.parent / "recordings"
GENERATED = settings(max_examples=40, deadline=None, database=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                            HealthCheck.data_too_large, HealthCheck.large_base_example])



def inlined(schema: Any, base: str, documents: dict[str, Any]) -> Any:
    """``schema`` with each ``$ref`` replaced by its target (the outbound schemas' refs have
    no sibling keywords but descriptions)."""
    if isinstance(schema, list):
        return [inlined(item, base, documents) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        document, fragment = urldefrag(urljoin(base, schema["$ref"]))
        target = documents[document]
        for part in fragment.split("/")[1:]:
            target = target[part]
        return inlined(target, document, documents)
    return {k: inlined(v, base, documents) for k, v in schema.items() if k not in ("$id", "$schema", "$defs")}


def unconditional(schema: dict[str, Any]) -> dict[str, Any]:
    """An ``if ok is true then ... else ...`` written as the ``anyOf`` of its two branches
    (hypothesis-jsonschema generates the branches quickly)."""
    if "if" not in schema:
        return schema
    base = {k: v for k, v in schema.items() if k not in ("if", "then", "else")}
    return {"anyOf": [{**base, **branch, "required": [*base["required"], *branch["required"]]}
                      for branch in (schema["then"], schema["else"])]}


@cache
def generated(name: str) -> st.SearchStrategy[Any]:
    documents = {protocol.BASE_URI + f"{n}.schema.json": s for n, s in protocol.load_schemas().items()}
    uri = protocol.BASE_URI + f"{name}.schema.json"
    return from_schema(unconditional(inlined(documents[uri], uri, documents)))


def _changes(value: Any) -> list[Any]:
    """What a mutant puts in place of ``value``: another type, a bool for a number and the
    reverse, a fraction for an integer, out of range, too long, a field more or less."""
    out: list[Any] = [None, "x", [], {}, 2.0]
    if type(value) is bool:
        out += [int(value), not value]
    elif type(value) is int:
        out += [True, float(value), value + 0.5, -value - 1, 2**53, str(value)]
    elif type(value) is float:
        out += [-value - 1, value + 0.25]
    elif type(value) is str:
        out += ["", "x" * 201, value * 130, 0]
    elif type(value) is list:
        out += [value[1:], [None], ["gm"] * 501, value * 2]
    elif type(value) is dict:
        out += [{**value, "unexpected": 1}, *({k: v for k, v in value.items() if k != key} for key in value)]
    return out


def struct_accepts(name: str, instance: Any) -> bool:
    try:
        CHECKS[name](instance)
    except msgspec.ValidationError:
        return False
    return True


def agree(name: str, instance: Any) -> bool:
    """The struct and jsonschema judge ``instance`` alike; whether they accept it."""
    expected = not list(protocol.validator(name).iter_errors(instance))
    assert struct_accepts(name, instance) == expected, \
        f"{name}: jsonschema {'accepts' if expected else 'refuses'}, the struct does not: {instance!r}"
    return expected


def golden_outputs() -> Iterator[tuple[str, Any]]:
    for path in sorted(RECORDINGS.rglob("*.golden.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            yield ("ack" if item["type"] == "ack" else item["event"]), item["data"]


def test_every_outbound_schema_has_a_struct() -> None:
    titles = {name for name, s in protocol.load_schemas().items() if s.get("title", "").startswith("Server to client")}
    assert titles == set(CHECKS)


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_the_struct_accepts_every_instance_generated_from_its_schema(name: str) -> None:
    @GENERATED
    @given(generated(name))
    def accepted(instance: Any) -> None:
        assert agree(name, instance), f"generated from {name} but refused: {instance!r}"

    accepted()


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_the_struct_refuses_exactly_the_mutants_its_schema_refuses(name: str) -> None:
    @GENERATED
    @given(mutated(generated(name), _changes))
    def judged_alike(instance: Any) -> None:
        agree(name, instance)

    judged_alike()


def test_the_goldens_acks_plans_and_prompts_pass_their_structs() -> None:
    counts: dict[str, int] = {}
    for name, instance in golden_outputs():
        assert agree(name, instance)
        counts[name] = counts.get(name, 0) + 1
    assert counts.keys() == {"ack", "plan", "prompt"} and min(counts.values()) > 5, counts


def test_mutants_of_golden_outputs_are_judged_alike() -> None:
    refused = 0
    for index, (name, instance) in enumerate(golden_outputs()):
        if index % 40:
            continue
        places = list(paths(instance))
        for path in places[::len(places) // 25 + 1]:
            at = instance
            for part in path:
                at = at[part]
            for change in _changes(at):
                refused += not agree(name, replaced(instance, path, change))
    assert refused > 100, refused


@pytest.mark.parametrize(("name", "instance", "valid"), [
    ("ack", {"ok": True, "seq": 1, "plans": [], "prompts": [], "notices": [], "error": None}, False),
    ("ack", {"ok": False, "seq": 1, "plans": [], "prompts": [], "notices": []}, False),
    ("ack", {"ok": 1, "seq": 1, "error": {"code": "too_large", "message": "m"}}, False),
    ("ack", {"ok": True, "seq": 1, "duplicate": False, "plans": [], "prompts": [], "notices": []}, False),
    ("ack", {"ok": True, "seq": 2.0, "duplicate": True, "plans": [], "prompts": [],
             "notices": [{"kind": "k", "text": "t", "extra": [1]}]}, True),
    ("ack", {"ok": False, "seq": None, "error": {"code": "too_large", "message": "m"}}, True),
    ("ack", {"seq": 1, "plans": [], "prompts": [], "notices": []}, False),
    ("export-answer", {"ok": False, "error": {"code": "superseded", "message": "m"}}, True),
    ("export-answer", {"ok": False, "seq": 1, "error": {"code": "superseded", "message": "m"}}, False),
    ("export-answer", {"ok": True, "world": "w", "lines": 0, "recording": ""}, True),
    ("welcome", {"world": "w", "ruleset": "r", "last_seq": 0, "combats": [], "skipped_acts": ["nope"]}, False),
    ("prompt", {"prompt_id": "p", "kind": "k", "combat_id": None, "combatant_id": None, "to": "gm",
                "rule": "r", "data": {}}, True),
    ("prompt", {"prompt_id": "p", "kind": "k", "combat_id": None, "combatant_id": None, "to": "all",
                "rule": "r", "data": {}}, False),
])
def test_the_structs_judge_the_conditions_and_constants_as_the_schemas_do(name: str, instance: Any,
                                                                           valid: bool) -> None:
    assert agree(name, instance) is valid


def test_check_outbound_phrases_a_failure_with_jsonschema() -> None:
    with pytest.raises(AssertionError, match="outbound welcome fails its schema: /combats/0/revision"):
        protocol.check_outbound("welcome", {"world": "w", "ruleset": "r", "last_seq": 0,
                                            "combats": [{"combat_id": "c", "revision": -1}]})
