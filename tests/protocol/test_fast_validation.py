"""The fast checks never accept what jsonschema refuses (they may only say "look closer"):
the typed one (msgspec types built from the schemas) and the compiled one (fastjsonschema)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapter import protocol
from adapter.benchkit.payloads import hooks
from adapter.errors import InvalidMessage
from adapter.pipeline import open_session, process
from adapter.protocol.fast import is_valid

RECORDINGS = Path(__file__).resolve().parent.parent / "recordings"
ODD_VALUES: list[Any] = [None, True, 0, 1.5, -1, "", "x", [], {}, [None], {"_id": 1}]


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


def jsonschema_accepts(name: str, instance: Any) -> bool:
    try:
        return not list(protocol.validator(name).iter_errors(instance))
    except Exception:  # an unresolvable $ref: jsonschema does not accept
        return False


def typed_accepts(name: str, instance: Any) -> bool:
    check = protocol.typed_check(name)
    return check is not None and check(instance)


def agree(name: str, instance: Any) -> None:
    if is_valid(protocol.fast_check(name), instance):
        assert jsonschema_accepts(name, instance), f"{name}: fast check accepted {instance!r}"
    if typed_accepts(name, instance):
        assert jsonschema_accepts(name, instance), f"{name}: typed check accepted {instance!r}"


def test_the_recorded_messages_are_judged_alike() -> None:
    for name, instance in recorded():
        agree(name, instance)
        assert is_valid(protocol.fast_check(name), instance) == jsonschema_accepts(name, instance) \
            or protocol.fast_check(name) is None


@pytest.mark.parametrize("name", ["hook", "ack", "plan", "prompt", "auth", "welcome", "intents/dash"])
def test_the_hot_messages_have_a_typed_check(name: str) -> None:
    assert protocol.typed_check(name) is not None


def test_the_typed_check_accepts_every_recorded_hook_and_ack_jsonschema_accepts() -> None:
    """Else the hot path would quietly be the slow one."""
    seen = 0
    for name, instance in recorded():
        if name in ("hook", "ack") and jsonschema_accepts(name, instance):
            assert typed_accepts(name, instance), f"{name}: typed check refused {instance!r}"
            seen += 1
    assert seen > 100


@pytest.mark.parametrize(("name", "instance"), [
    ("ack", {"ok": True, "seq": 1, "plans": [], "prompts": [], "notices": [], "error": None}),
    ("ack", {"ok": False, "seq": 1, "plans": [], "prompts": [], "notices": []}),
    ("ack", {"ok": 1, "seq": 1, "error": {"code": "too_large", "message": "m"}}),
    ("ack", {"ok": True, "seq": 1, "duplicate": False, "plans": [], "prompts": [], "notices": []}),
    ("hook", {**hooks(2)[0], "hook": "initiativeRoll"}),
    ("hook", {**hooks(2)[0], "roll": {"roll": {"terms": [], "total": 3}}}),
    ("hook", {**hooks(2)[0], "seq": True}),
])
def test_the_typed_check_refuses_what_the_conditions_and_constants_refuse(name: str, instance: Any) -> None:
    assert not jsonschema_accepts(name, instance)
    assert not typed_accepts(name, instance)


@pytest.mark.parametrize("index", [1, 10])
def test_mutated_hooks_are_never_accepted_by_the_fast_check_alone(index: int) -> None:
    payload = hooks(12)[index]
    for mutant in mutants(payload):
        agree("hook", mutant)


def test_mutated_acks_are_never_accepted_by_the_fast_check_alone() -> None:
    world = open_session(None, {"world": "w", "ruleset": "foundry-core", "gm_users": []})
    for payload in hooks(12):
        result = process(world, "hook", payload)
        world = result.world
    ack = copy.deepcopy(dict(result.ack))
    assert is_valid(protocol.fast_check("ack"), ack)
    assert typed_accepts("ack", ack)
    for mutant in mutants(ack):
        agree("ack", mutant)


def test_validate_still_names_the_deepest_failing_field() -> None:
    payload = hooks(2)[1]
    payload["combat"]["combatants"][3]["owners"] = "everyone"
    with pytest.raises(InvalidMessage) as refused:
        protocol.validate("hook", payload)
    assert refused.value.path == "/combat/combatants/3/owners"
