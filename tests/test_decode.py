"""Decoding the wire into the engine's typed messages (adapter.pipeline.decode).

The JSON Schemas stay the contract: every message they accept decodes (all those of the
recordings, and the real combats' fixtures), and a message they refuse never reaches the
engine: the refusal is jsonschema's, with its message and path. A rule's refusal names a
field and the pipeline turns it into the wire's JSON pointer.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from adapter import pipeline, protocol
from adapter.engine import World
from adapter.engine.messages import HOOKS, INTENTS, Act, Dash, Hold, Hook, InitiativeRoll, Intent
from adapter.errors import InvalidMessage, SidecarError
from adapter.protocol import inbound
from adapter.rulesets import RULESETS

RECORDINGS = Path(__file__).parent / "recordings"


def recorded() -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(where, event, payload) of every hook and intent line of every recording."""
    for path in sorted(RECORDINGS.rglob("*.jsonl")):
        if path.name.endswith(".golden.jsonl"):
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            item = orjson.loads(line)
            if item.get("event") in ("hook", "intent"):
                yield f"{path.parent.name}/{path.name}:{number}", item["event"], item["data"]


MESSAGES = list(recorded())


def accepted(event: str, payload: Any) -> bool:
    try:
        protocol.validate(event, payload)
    except InvalidMessage:
        return False
    return True


def test_every_recorded_message_the_schema_accepts_decodes_to_its_class() -> None:
    seen: set[type] = set()
    for where, event, payload in MESSAGES:
        if not accepted(event, payload):
            continue
        message = pipeline.decode(event, payload)
        seen.add(type(message))
        assert message.seq == payload["seq"] and message.user == payload["user"], where
        if isinstance(message, Hook):
            assert type(message).__struct_config__.tag == payload["hook"], where
            assert message.combat == payload["combat"], where
            assert message.current.combatant_id == payload["current"]["combatantId"], where
            if "roll" in payload:
                assert message.roll is not None and message.roll.roll.total == payload["roll"]["roll"]["total"]
        else:
            assert isinstance(message, Intent) and message.kind == payload["kind"], where
            for name, value in payload["args"].items():
                got = getattr(message, name)
                assert got == (tuple(value) if isinstance(value, list) else value), (where, name)
    assert len(MESSAGES) > 200
    assert InitiativeRoll in seen and Dash in seen and len(seen & set(INTENTS)) >= 8
    assert len(seen & set(HOOKS)) >= 6


def test_a_whole_number_written_as_a_float_decodes_as_the_integer_the_schema_accepted() -> None:
    payload = {"seq": 1, "user": "u", "world_time": 0, "kind": "dash", "combat_id": "c",
               "combatant_id": "a", "args": {"amount": 2.0}}
    assert accepted("intent", payload)
    message = pipeline.decode("intent", payload)
    assert isinstance(message, Dash) and message.amount == 2 and type(message.amount) is int


def test_a_top_level_key_never_becomes_an_argument_the_args_schema_did_not_check() -> None:
    envelope = {"seq": 1, "user": "u", "world_time": 0, "combat_id": "c", "combatant_id": "a"}
    act = {**envelope, "kind": "act", "args": {"now": True}, "after": "b1", "before": "zz"}
    hold = {**envelope, "kind": "hold", "args": {}, "target_aware": "true", "next_round": [1]}
    assert accepted("intent", act) and accepted("intent", hold)  # the envelope allows extras
    decoded_act = pipeline.decode("intent", act)
    assert isinstance(decoded_act, Act) and (decoded_act.now, decoded_act.after, decoded_act.before) == (True, None, None)
    decoded_hold = pipeline.decode("intent", hold)
    assert isinstance(decoded_hold, Hold) and not decoded_hold.target_aware and not decoded_hold.next_round


def spoiled(payload: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Variants of a valid payload that its schema refuses."""
    for key in ("user", "world_time"):
        broken = copy.deepcopy(payload)
        broken[key] = None if key != "user" else 7
        yield broken
    if "args" in payload:
        extra = copy.deepcopy(payload)
        extra["args"]["surplus"] = 1
        yield extra
        for name in payload["args"]:
            wrong = copy.deepcopy(payload)
            wrong["args"][name] = {"not": "this"}
            yield wrong
    else:
        no_id = copy.deepcopy(payload)
        del no_id["combat"]["_id"]
        yield no_id
        if "roll" in payload:
            bad_roll = copy.deepcopy(payload)
            bad_roll["roll"]["roll"]["total"] = "many"
            yield bad_roll


def test_a_message_the_schema_refuses_is_refused_in_its_words_and_never_reaches_the_engine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    decoded: list[Any] = []
    real = pipeline.apply_message

    def spy(world: World, message: Hook | Intent, *args: Any, **options: Any) -> Any:
        decoded.append(message)
        return real(world, message, *args, **options)

    monkeypatch.setattr(pipeline, "apply_message", spy)
    world = World(world="w", ruleset="balanced-d20", gm_users=frozenset({"gm"}))
    checked = 0
    for _, event, payload in MESSAGES[::7]:
        if not accepted(event, payload):
            continue
        for broken in spoiled({**payload, "seq": 1}):
            with pytest.raises(InvalidMessage) as schema:
                protocol.validate(event, broken)
            result = pipeline.process(world, event, broken, rulesets=RULESETS)
            assert result.ack["ok"] is False
            assert result.ack["error"] == {"code": "invalid_message", "message": schema.value.message,
                                           "path": schema.value.path}
            checked += 1
    assert decoded == [] and checked > 100


@pytest.mark.parametrize(("message", "field", "path"), [
    (Dash(seq=1, user="u", world_time=0.0, combat_id="c", combatant_id="a", amount=2), "amount",
     "/args/amount"),
    (Dash(seq=1, user="u", world_time=0.0, combat_id="c", combatant_id="a", amount=2),
     "combatant_id", "/combatant_id"),
    (Dash(seq=1, user="u", world_time=0.0, combat_id="c", combatant_id="a", amount=2), "kind", "/kind"),
    (None, ("roll", "roll", "terms", 0, "faces"), "/roll/roll/terms/0/faces"),
    (None, ("combat", "combatants", 3, "stats", "a/b~c"), "/combat/combatants/3/stats/a~1b~0c"),
])
def test_a_refused_field_becomes_the_json_pointer_of_the_wire(message: Any, field: Any, path: str) -> None:
    if message is None:
        message = next(pipeline.decode(e, p) for _, e, p in MESSAGES if e == "hook" and accepted(e, p))
    assert pipeline.field_pointer(message, field) == path


def test_a_rule_s_refusal_reaches_the_ack_with_the_path_of_its_field() -> None:
    world = World(world="w", ruleset="storyteller", gm_users=frozenset({"gm"}))
    hook = {"seq": 1, "user": "gm", "world_time": 0, "hook": "createCombat",
            "combat": {"_id": "c", "round": 0, "combatants": [{"_id": "a"}, {"_id": "b"}]},
            "current": {"round": 0, "combatantId": None}}
    world = pipeline.process(world, "hook", hook, rulesets=RULESETS).world
    hold = {"seq": 2, "user": "gm", "world_time": 0, "kind": "hold", "combat_id": "c",
            "combatant_id": "a", "args": {"target_aware": True}}
    result = pipeline.process(world, "intent", hold, rulesets=RULESETS)
    assert result.ack["error"]["code"] == "rule_violation" and result.ack["error"]["rule"] == "ST-5"
    assert result.ack["error"]["path"] == "/args/target_aware"
    with pytest.raises(SidecarError) as direct:
        pipeline.apply_message(world, pipeline.decode("intent", hold), RULESETS)
    assert direct.value.field == "target_aware" and direct.value.path == "/args/target_aware"


def test_a_class_stricter_than_its_schema_is_a_bug_the_world_survives(monkeypatch: pytest.MonkeyPatch) -> None:
    """Were a message class to refuse what its schema accepted, the message would be an
    ``internal_error`` with its seq used up and the world as it was (never a refusal of
    the message's content, never a wedge)."""

    class Stricter(Dash, frozen=True, kw_only=True):
        amount: str  # type: ignore[assignment]

    monkeypatch.setitem(inbound.INTENT_CLASSES, "dash", Stricter)
    world = World(world="w", ruleset="balanced-d20", gm_users=frozenset({"gm"}))
    dash = {"seq": 1, "user": "gm", "world_time": 0, "kind": "dash", "combat_id": "c",
            "combatant_id": "a", "args": {"amount": 2}}
    result = pipeline.process(world, "intent", dash, rulesets=RULESETS)
    assert result.ack["error"]["code"] == "internal_error"
    assert result.world.last_seq == 1 and result.world.combats == world.combats and result.record
