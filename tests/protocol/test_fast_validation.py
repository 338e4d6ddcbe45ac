"""The typed check (msgspec types built from the schemas, the one run-time validator) accepts
exactly what jsonschema accepts: on instances generated from every schema, on mutants of
them, on the recordings and on the goldens."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.internal.conjecture import utils as conjecture_utils

from adapter import protocol
from adapter.benchkit.payloads import hooks
from adapter.errors import InvalidMessage
from adapter.pipeline import open_session, process
from adapter.protocol.typed import _merged, _split, inline
from adapter.rulesets import RULESETS

RECORDINGS = Path(__file__).resolve().parent.parent / "recordings"
ODD_VALUES: list[Any] = [None, True, 0, 1.5, -1, "", "x", [], {}, [None], {"_id": 1}]
#: every schema but ``common`` (definitions only, no message) is a message with a typed check
MESSAGES = [name for name in protocol.load_schemas() if name != "common"]
#: the same, the two largest schemas (10 s each to generate for) marked slow
GENERATED_MESSAGES = [pytest.param(name, marks=pytest.mark.slow) if name in ("hook", "recording-line") else name
                      for name in MESSAGES]
GENERATED = settings(max_examples=30, deadline=None, database=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                            HealthCheck.data_too_large, HealthCheck.large_base_example])

_END = object()


def _more(self: Any) -> bool:
    """``many.more()`` as hypothesis-jsonschema 0.23 calls it: hypothesis 6.16x replaced it
    with iterating inside a ``with`` block (hypothesis-jsonschema's object strategy then
    fails with "'many' object has no attribute 'more'"); the same draws, the new protocol."""
    if self._depth is None:
        self.__enter__()
        self._elements = iter(self)
    return next(self._elements, _END) is not _END


if not hasattr(conjecture_utils.many, "more"):
    conjecture_utils.many.more = _more  # type: ignore[attr-defined]

from hypothesis_jsonschema import from_schema  # noqa: E402  (after the shim it needs)


def recorded() -> Iterator[tuple[str, Any]]:
    for path in sorted(RECORDINGS.rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            if path.name.endswith(".golden.jsonl"):
                if item.get("type") == "ack":
                    yield "ack", item["data"]
                elif item.get("type") == "emit":
                    yield item["event"], item["data"]
            else:
                yield "recording-line", item
                if item.get("event") in ("hook", "intent", "session"):
                    yield item["event"], item["data"]


def mutants(value: Any) -> Iterator[Any]:
    """``value`` with one field replaced by an odd value, or removed, everywhere in turn."""
    if isinstance(value, dict):
        for key in value:
            for odd in ODD_VALUES:
                yield {**value, key: odd}
            yield {k: v for k, v in value.items() if k != key}
            for inner in mutants(value[key]):
                yield {**value, key: inner}
    elif isinstance(value, list):
        for i, item in enumerate(value[:3]):
            for inner in mutants(item):
                yield value[:i] + [inner] + value[i + 1:]


def _changes(value: Any) -> list[Any]:
    """What a mutant puts in place of ``value``: a type swap, a number out of range, a bool
    for an int and an int for a bool, a float for an int, a too-long string or array, an
    extra or a missing property."""
    out: list[Any] = [None, "x", [], {}]
    if type(value) is bool:
        out += [int(value), not value, float(value)]
    elif type(value) is int:
        out += [bool(value % 2), float(value), value + 0.5, value + 10**6, value - 10**6, -value, str(value)]
    elif type(value) is float:
        out += [value * 1e6, -value - 1e6, int(value) if value == value // 1 else value + 0.25]
    elif type(value) is str:
        out += [value * 300, value + "x" * 300, "", 0, True]
    elif type(value) is list:
        out += [value * 300, value + [None], value[1:], value[:1] * 300]
    elif type(value) is dict:
        out += [{**value, "unexpected": 1}, *({k: v for k, v in value.items() if k != key} for key in value)]
    return out


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, path + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, path + (i,))


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copied = copy.copy(value)
    copied[path[0]] = _replaced(value[path[0]], path[1:], new)
    return copied


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def mutated(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A valid instance with one of :func:`_changes` made at one of its places."""
    @st.composite
    def build(draw: Callable[..., Any]) -> Any:
        instance = draw(valid)
        path = draw(st.sampled_from(list(_paths(instance))))
        return _replaced(instance, path, draw(st.sampled_from(_changes(_at(instance, path)))))
    return build()


@cache
def generated(name: str) -> st.SearchStrategy[Any]:
    schemas = protocol.load_schemas()
    documents = {protocol.BASE_URI + f"{n}.schema.json": s for n, s in schemas.items()}
    uri = protocol.BASE_URI + f"{name}.schema.json"
    return from_schema(unconditional(inline(documents[uri], uri, documents)))


def unconditional(schema: Any) -> Any:
    """The same schema with each ``if``/``then``/``else`` on a property's const written as an
    ``anyOf`` of its branches (that value's, and any other value's): hypothesis-jsonschema
    takes minutes to merge the intent's thirteen conditionals, and no time for the branches."""
    if not isinstance(schema, dict):
        return schema
    schema = {k: ({n: unconditional(v) for n, v in value.items()} if k == "properties" else value)
              for k, value in schema.items()}
    if not ({"if", "allOf"} & schema.keys()):
        return schema
    base, conditions = _split(schema, "")
    if not conditions:
        return base
    prop, values = conditions[0][0], list(dict.fromkeys(c[1] for c in conditions))
    branches = []
    for value in [*values, None]:
        pinned = {"const": value} if value is not None else {"not": {"enum": values}}
        branch = _merged(base, {"properties": {prop: pinned}}, "")
        for _, const, _, then, otherwise in conditions:
            branch = _merged(branch, then if value is not None and const == value else otherwise, "")
        branches.append(unconditional(branch))
    return {"anyOf": branches}


def jsonschema_accepts(name: str, instance: Any) -> bool:
    return not list(protocol.validator(name).iter_errors(instance))


def typed_accepts(name: str, instance: Any) -> bool:
    check = protocol.typed_check(name)
    assert check is not None, f"{name} has no typed check"
    return check(instance)


def agree(name: str, instance: Any) -> bool:
    """Both checks give the same answer on ``instance`` (which is returned)."""
    expected = jsonschema_accepts(name, instance)
    assert typed_accepts(name, instance) == expected, \
        f"{name}: jsonschema {'accepts' if expected else 'refuses'}, the typed check does not: {instance!r}"
    return expected


def test_every_message_schema_has_a_typed_check() -> None:
    assert [name for name in protocol.load_schemas() if protocol.typed_check(name) is None] == ["common"]


@pytest.mark.parametrize("name", GENERATED_MESSAGES)
def test_the_typed_check_accepts_every_instance_generated_from_the_schema(name: str) -> None:
    @GENERATED
    @given(generated(name))
    def accepted(instance: Any) -> None:
        assert agree(name, instance), f"generated from {name} but refused: {instance!r}"

    accepted()


@pytest.mark.parametrize("name", GENERATED_MESSAGES)
def test_the_typed_check_refuses_exactly_the_mutants_jsonschema_refuses(name: str) -> None:
    @GENERATED
    @given(mutated(generated(name)))
    def judged_alike(instance: Any) -> None:
        agree(name, instance)

    judged_alike()


def test_the_recorded_messages_and_the_goldens_are_judged_alike() -> None:
    accepted = refused = 0
    for name, instance in recorded():
        if agree(name, instance):
            accepted += 1
        else:
            refused += 1
    assert accepted > 1000  # the lines refused on purpose are few, and judged alike too
    assert refused < accepted / 20


@pytest.mark.parametrize(("name", "instance"), [
    ("ack", {"ok": True, "seq": 1, "plans": [], "prompts": [], "notices": [], "error": None}),
    ("ack", {"ok": False, "seq": 1, "plans": [], "prompts": [], "notices": []}),
    ("ack", {"ok": 1, "seq": 1, "error": {"code": "too_large", "message": "m"}}),
    ("ack", {"ok": True, "seq": 1, "duplicate": False, "plans": [], "prompts": [], "notices": []}),
    ("hook", {**hooks(2)[0], "hook": "initiativeRoll"}),
    ("hook", {**hooks(2)[0], "roll": {"roll": {"terms": [], "total": 3}}}),
    ("hook", {**hooks(2)[0], "seq": True}),
    ("intent", {"seq": 1, "user": "u", "world_time": 0, "kind": "dash", "args": {"amount": 2}}),
    ("intents/act", {}),
    ("intents/act", {"now": True, "after": "a"}),
    ("session", {"world": "w", "ruleset": "balanced-d20", "gm_users": [], "token": "t"}),
    ("settings", {"ruleset": "dice-pool", "settings": {"die_faces": 1}}),
    ("settings", {"ruleset": "balanced-d20", "settings": {"stat_paths": {"dex": "a..b"}}}),
    ("recording-line", {"event": "hook", "data": {"seq": 1}}),
])
def test_the_typed_check_refuses_what_the_conditions_and_constants_refuse(name: str, instance: Any) -> None:
    assert not jsonschema_accepts(name, instance)
    assert not typed_accepts(name, instance)


@pytest.mark.parametrize(("name", "instance"), [
    ("hook", {**hooks(2)[0], "seq": 2.0}),
    ("settings", {"ruleset": "a ruleset the sidecar does not know", "settings": {"anything": 1}}),
    ("intents/act", {"now": True}),
])
def test_the_typed_check_accepts_what_the_schema_accepts_at_its_edges(name: str, instance: Any) -> None:
    assert jsonschema_accepts(name, instance)
    assert typed_accepts(name, instance)


@pytest.mark.parametrize("index", [1, 10])
def test_mutated_hooks_are_judged_alike(index: int) -> None:
    payload = hooks(12)[index]
    for mutant in mutants(payload):
        agree("hook", mutant)


def test_mutated_acks_are_judged_alike() -> None:
    world = open_session(None, {"world": "w", "ruleset": "foundry-core", "gm_users": []}, rulesets=RULESETS)
    for payload in hooks(12):
        result = process(world, "hook", payload, rulesets=RULESETS)
        world = result.world
    ack = copy.deepcopy(dict(result.ack))
    assert typed_accepts("ack", ack)
    for mutant in mutants(ack):
        agree("ack", mutant)


def test_validate_still_names_the_deepest_failing_field() -> None:
    payload = hooks(2)[1]
    payload["combat"]["combatants"][3]["owners"] = "everyone"
    with pytest.raises(InvalidMessage) as refused:
        protocol.validate("hook", payload)
    assert refused.value.path == "/combat/combatants/3/owners"
