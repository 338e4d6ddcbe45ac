"""Each inbound message's struct (adapter/protocol/inbound.py, adapter/engine/messages.py)
accepts exactly what its JSON Schema accepts: on instances generated from the schema
(hypothesis-jsonschema), on mutants of them and of recorded hooks, on every line of the
recordings and on the goldens' messages, and at the edges the schemas spell out."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache, partial
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter import protocol
from adapter.benchkit.payloads import hooks
from adapter.errors import InvalidMessage
from adapter.protocol import inbound
from tests.support.mutants import from_schema, mutated, paths, replaced

RECORDINGS = Path(__file__).resolve().parent.parent / "recordings"
INBOUND = sorted(inbound.CONVERT)
#: the largest schemas (seconds each to generate for) marked slow
GENERATED_INBOUND = [pytest.param(n, marks=pytest.mark.slow) if n == "hook" else n
                     for n in INBOUND]
GENERATED = settings(max_examples=30, deadline=None, database=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                            HealthCheck.data_too_large, HealthCheck.large_base_example])
ODD: list[Any] = [None, True, False, 0, 2.0, 1.5, -1, "", "x", [], {}, [None], {"_id": 1}]


def struct_accepts(name: str, instance: Any) -> bool:
    try:
        inbound.CONVERT[name](instance, False)
    except ValueError:  # msgspec.ValidationError among them
        return False
    return True


def schema_accepts(name: str, instance: Any) -> bool:
    return not list(protocol.validator(name).iter_errors(instance))


def agree(name: str, instance: Any) -> bool | None:
    """Both give the same answer (returned); None for what the shape check refuses first."""
    try:
        protocol.check_shape(instance)
    except InvalidMessage:
        return None
    expected = schema_accepts(name, instance)
    assert struct_accepts(name, instance) == expected, \
        f"{name}: the schema {'accepts' if expected else 'refuses'}, the struct does not: {instance!r}"
    return expected


# ---------------------------------------------------------------- generating from the schemas


def inline(schema: Any, base: str, documents: dict[str, Any]) -> Any:
    """``schema`` with each ``$ref`` replaced by its target (hypothesis-jsonschema reads no
    other document), each conditional by :func:`unconditional`."""
    if isinstance(schema, list):
        return [inline(item, base, documents) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: inline(v, base, documents) for k, v in schema.items() if k not in ("$id", "$schema", "$ref", "$defs")}
    if "$ref" in schema:
        uri, fragment = urldefrag(urljoin(base, schema["$ref"]))
        target = documents[uri]
        for part in fragment.split("/")[1:]:
            target = target[part]
        resolved = inline(target, uri, documents)
        out = resolved if set(out) <= {"description", "title"} else {**out, "allOf": [resolved]}
    return unconditional(out)


def unconditional(schema: dict[str, Any]) -> dict[str, Any]:
    """The ``if``/``then`` on one property's const (alone or in ``allOf``) written as an
    ``anyOf`` of the branches, each value's and any other value's, each merged by hand (a
    ``then`` here only adds properties and required ones): hypothesis-jsonschema takes
    minutes over the intent's thirteen conditionals, and no time over this."""
    conditions = [c for c in [schema, *schema.get("allOf", [])] if "if" in c]
    if not conditions or "properties" not in schema:  # none, or one alone in an allOf
        return schema
    base = {k: v for k, v in schema.items() if k not in ("if", "then", "else", "allOf")}
    ((prop, _),) = conditions[0]["if"]["properties"].items()
    values = [c["if"]["properties"][prop]["const"] for c in conditions]
    branches = [{**base, "properties": {**base["properties"], **c["then"].get("properties", {}), prop: {"const": v}},
                 "required": [*base["required"], *c["then"].get("required", [])]}
                for v, c in zip(values, conditions)]
    if not set(base["properties"][prop].get("enum", [None])) <= set(values):
        branches.append({**base, "properties": {**base["properties"],
                                                prop: {**base["properties"][prop], "not": {"enum": values}}}})
    return {"anyOf": branches}


def _line(event: str, data: Any) -> dict[str, Any]:
    return {"event": event, "data": data}


@cache
def generated(name: str) -> st.SearchStrategy[Any]:
    """Instances of the schema, drawn branch by branch (one schema of thirteen branches
    takes hypothesis-jsonschema minutes to merge)."""
    if name == "recording-line":
        return st.one_of([generated(e).map(partial(_line, e)) for e in ("session", "hook", "intent")])
    documents = {protocol.BASE_URI + f"{n}.schema.json": s for n, s in protocol.load_schemas().items()}
    uri = protocol.BASE_URI + f"{name}.schema.json"
    schema = inline(documents[uri], uri, documents)
    return st.one_of([from_schema(branch) for branch in (schema["anyOf"] if set(schema) == {"anyOf"} else [schema])])


def _changes(value: Any) -> list[Any]:
    """What a mutant puts in place of ``value``: another type, a bool for a number and a
    number for a bool, a float for an int, a number out of range, a long string or array,
    an extra or a missing property."""
    out: list[Any] = [None, "x", [], {}]
    if type(value) is bool:
        out += [int(value), not value, float(value)]
    elif type(value) is int:
        out += [bool(value % 2), float(value), value + 0.5, value + 10**6, value - 10**6, -value, str(value)]
    elif type(value) is float:
        out += [value * 1e6, -value - 1e6, int(value) if value == value // 1 else value + 0.25]
    elif type(value) is str:
        out += [value * 300, value + "x" * 300, "", 0, True, value + "."]
    elif type(value) is list:
        out += [value * 300, [*value, None], value[1:], value[:1] * 600]
    elif type(value) is dict:
        out += [{**value, "unexpected": 1}, *({k: v for k, v in value.items() if k != key} for key in value)]
    return out


@pytest.mark.parametrize("name", GENERATED_INBOUND)
def test_the_struct_accepts_every_instance_generated_from_its_schema(name: str) -> None:
    @GENERATED
    @given(generated(name))
    def accepted(instance: Any) -> None:
        assert agree(name, instance) is not False, f"generated from {name} but refused: {instance!r}"

    accepted()


@pytest.mark.parametrize("name", GENERATED_INBOUND)
def test_the_struct_refuses_exactly_the_mutants_its_schema_refuses(name: str) -> None:
    @GENERATED
    @given(mutated(generated(name), _changes))
    def judged_alike(instance: Any) -> None:
        agree(name, instance)

    judged_alike()


# ---------------------------------------------------------------- recordings, goldens, edges


def recorded() -> Iterator[tuple[str, Any]]:
    for path in sorted(RECORDINGS.rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            item = json.loads(line) if line.strip() else None
            if not isinstance(item, dict):
                continue
            if path.name.endswith(".golden.jsonl"):
                if item.get("type") == "emit" and item.get("event") in inbound.CONVERT:
                    yield item["event"], item["data"]
                continue
            yield "recording-line", item
            if item.get("event") in ("hook", "intent", "session"):
                yield item["event"], item["data"]


def test_the_recordings_and_the_goldens_are_judged_alike() -> None:
    verdicts = [agree(name, instance) for name, instance in recorded()]
    assert verdicts.count(True) > 500 and verdicts.count(False) < verdicts.count(True) / 20


@pytest.mark.parametrize("index", [1, pytest.param(10, marks=pytest.mark.slow)])
def test_one_change_anywhere_in_a_recorded_hook_is_judged_alike(index: int) -> None:
    payload = hooks(12)[index]
    checked = 0
    for path in list(paths(payload))[index % 3::3]:
        at: Any = payload
        for part in path:
            at = at[part]
        for new in [*_changes(at), *ODD]:
            agree("hook", replaced(payload, path, new))
            checked += 1
    assert checked > 500


ENVELOPE = {"seq": 1, "user": "u", "world_time": 0, "combat_id": "c", "combatant_id": "a"}
ROLL: dict[str, Any] = {"combatant_id": "a", "roll": {"terms": [{"class": "Die", "faces": 20, "results": [{"result": 3}]}],
                                      "total": 3}}


@pytest.mark.parametrize(("name", "instance"), [
    ("hook", {**hooks(2)[0], "hook": "initiativeRoll"}),
    ("hook", {**hooks(2)[0], "roll": {"roll": {"terms": [], "total": 3}}}),
    ("hook", {**hooks(2)[0], "roll": None}),
    ("hook", {**hooks(2)[0], "hook": "initiativeRoll", "roll": {**ROLL, "combatant_id": None}}),
    ("hook", {**hooks(2)[0], "roll": {**ROLL, "roll": {**ROLL["roll"], "formula": None}}}),
    ("hook", {**hooks(2)[0], "roll": {**ROLL, "roll": {**ROLL["roll"], "terms": [{"faces": 2.5}]}}}),
    ("hook", {**hooks(2)[0], "seq": True}),
    ("hook", {**hooks(2)[0], "world_time": 1e16}),
    ("hook", {**hooks(2)[0], "hook": "somethingElse"}),
    ("hook", {**hooks(2)[0], "current": {"combatantId": None}}),
    ("intent", {**ENVELOPE, "kind": "dash", "args": {"amount": 2.5}}),
    ("intent", {**ENVELOPE, "kind": "dash", "args": {"amount": 2, "seq": 3}}),
    ("intent", {**ENVELOPE, "kind": "dash", "args": {"amount": 2, "kind": "dash"}}),
    ("intent", {**ENVELOPE, "kind": "dash", "combatant_id": None, "args": {"amount": 2}}),
    ("intent", {**ENVELOPE, "kind": "reaction.use", "args": {"reason": None}}),
    ("intent", {"seq": 1, "user": "u", "world_time": 0, "kind": "dash", "args": {"amount": 2}}),
    ("intent", {**ENVELOPE, "kind": "act", "args": {}}),
    ("intent", {**ENVELOPE, "kind": "act", "args": {"now": False}}),
    ("intent", {**ENVELOPE, "kind": "act", "args": {"now": True, "after": "a"}}),
    ("intent", {**ENVELOPE, "kind": "hold", "args": {"target_aware": None}}),
    ("session", {"world": "w", "ruleset": "balanced-d20", "gm_users": [], "token": None}),
    ("settings", {"ruleset": "dice-pool", "settings": {"die_faces": 1}}),
    ("settings", {"ruleset": "foundry-core", "settings": {"x": 1}}),
    ("settings", {"ruleset": "balanced-d20", "settings": {"stat_paths": {"dex": "a..b"}}}),
    ("settings", {"ruleset": "storyteller", "settings": {"stat_paths": {"initiative_mod": "a", "dex": "b"}}}),
    ("auth", {"token": "t", "world": "w", "ruleset": "r", "protocol": 1.5, "gm_users": []}),
    ("export", {"world": "w"}),
    ("recording-line", {"event": "hook", "data": {"seq": 1}}),
])
def test_the_struct_refuses_what_the_conditions_and_constants_refuse(name: str, instance: Any) -> None:
    assert agree(name, instance) is False


@pytest.mark.parametrize(("name", "instance"), [
    ("hook", {**hooks(2)[0], "seq": 2.0}),
    ("hook", {**hooks(2)[0], "hook": "initiativeRoll", "roll": ROLL, "changed": None, "extra": [1]}),
    ("intent", {**ENVELOPE, "kind": "dash", "args": {"amount": 2.0}, "after": "top-level extras pass"}),
    ("intent", {**ENVELOPE, "kind": "act", "args": {"now": True}}),
    ("intent", {"seq": 1, "user": "u", "world_time": 0, "kind": "ready.confirm", "args": {"actor_id": "x"}}),
    ("settings", {"ruleset": "a ruleset the sidecar does not know", "settings": {"anything": 1}}),
    ("settings", {"ruleset": "balanced-d20", "settings": {"stat_paths": {"int": "system.abilities.int.mod"}}}),
    ("auth", {"token": "t", "world": "w", "ruleset": "r", "protocol": 1.0, "gm_users": [], "more": 1}),
    ("export", {}),
    ("recording-line", {"event": "session", "data": {"world": "w", "ruleset": "r", "gm_users": []}, "t": None}),
])
def test_the_struct_accepts_what_the_schema_accepts_at_its_edges(name: str, instance: Any) -> None:
    assert agree(name, instance) is True


def test_an_integer_written_as_a_float_reaches_the_engine_as_an_int() -> None:
    message = protocol.decode("intent", {**ENVELOPE, "seq": 3.0, "kind": "dash", "args": {"amount": 2.0}})
    assert (message.seq, message.amount) == (3, 2)
    assert type(message.seq) is int and type(message.amount) is int


def test_a_refusal_names_the_deepest_failing_field() -> None:
    payload = hooks(2)[1]
    payload["combat"]["combatants"][3]["owners"] = "everyone"
    with pytest.raises(InvalidMessage) as refused:
        protocol.validate("hook", payload)
    assert refused.value.path == "/combat/combatants/3/owners"
