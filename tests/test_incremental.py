"""A message costs what changed: a hook whose combatants are those of the last hook of its
combat is checked without them and not read again (adapter/pipeline.py, "What a message
costs"), and gives exactly what the whole check and the whole read give.

The property: random sequences of hooks (turn changes that repeat the combatants, and
changes in a combatant that must be noticed: a field, a type that Python's ``==`` confuses
such as ``true`` and ``1``, a join, a leave, an order, a group, a roll, a second combat, a
deletion, invalid values) give the same acks, broadcasts and worlds with the memo
(``seen``) as without it. The suite also runs the engine with ``snapshot.CHECK`` set: every
snapshot taken as unchanged is read in full too and compared.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter import pipeline, protocol
from adapter.benchkit.payloads import GM, combatant, roll
from adapter.engine import World
from adapter.pipeline import Seen, open_session, process

#: values that must be noticed when a combatant's field takes them (some are invalid; some
#: equal the one before under Python's ``==`` but not in JSON)
CHANGES: dict[str, list[Any]] = {
    "name": ["Aria 0", "", None, 7],
    "hidden": [False, True, 1, 0],
    "defeated": [False, True, 0],
    "is_defeated": [False, True, 1],
    "roundJoined": [1, 1.0, 0, None, -1, True],
    "initiative": [None, 12, 12.0, 7.5, "12"],
    "owners": [[], ["player000000001"], "player000000001"],
    "stats": [{}, {"dex": 2}, {"dex": 2.0}, {"dex": True}],
    "group": [None, "group00000000001", 5],
    "actorId": ["act0000000000001", None, 1],
}

steps = st.one_of(
    st.tuples(st.just("turn")),
    st.tuples(st.just("turn")),
    st.tuples(st.just("turn")),
    st.tuples(st.just("change"), st.integers(0, 9), st.sampled_from(sorted(CHANGES)), st.integers(0, 5)),
    st.tuples(st.just("join"), st.integers(10, 14)),
    st.tuples(st.just("leave"), st.integers(0, 9)),
    st.tuples(st.just("swap"), st.integers(0, 9), st.integers(0, 9)),
    st.tuples(st.just("groups"), st.booleans()),
    st.tuples(st.just("roll"), st.integers(0, 9), st.integers(3, 22)),
    st.tuples(st.just("other_combat")),
    st.tuples(st.just("delete")),
)


class Table:
    """The hooks a module would send for the steps, one combat at a time (two combats)."""

    def __init__(self, size: int) -> None:
        self.combats = {cid: [combatant(i) for i in range(size)] for cid in ("combatAAAAAAAAAA", "combatBBBBBBBBBB")}
        self.combat_id = "combatAAAAAAAAAA"
        self.seq = 0
        self.round = 0
        self.turn = 0
        self.groups: list[dict[str, Any]] = []

    def hook(self, step: tuple[Any, ...]) -> dict[str, Any]:
        people = self.combats[self.combat_id]
        name, extra = "updateCombat", {}
        kind = step[0]
        if kind == "turn":
            if self.round == 0:
                self.round, name = 1, "combatStart"
            else:
                self.turn += 1
                name = "combatTurn"
                if self.turn >= len(people):
                    self.round, self.turn, name = self.round + 1, 0, "combatRound"
        elif kind == "change" and people:
            _, i, field, value = step
            values = CHANGES[field]
            people[i % len(people)] = {**people[i % len(people)], field: values[value % len(values)]}
            name = "updateCombatant"
        elif kind == "join":
            if all(p["_id"] != combatant(step[1])["_id"] for p in people):
                people.append(combatant(step[1]))
            name = "createCombatant"
        elif kind == "leave" and people:
            people.pop(step[1] % len(people))
            name = "deleteCombatant"
        elif kind == "swap" and people:
            i, j = step[1] % len(people), step[2] % len(people)
            people[i], people[j] = people[j], people[i]
        elif kind == "groups":
            self.groups = [{"_id": "group00000000001", "name": "Wolves"}] if step[1] else []
        elif kind == "roll" and people:
            who = people[step[1] % len(people)]
            who["initiative"] = float(step[2])
            name, extra = "initiativeRoll", {"roll": {"combatant_id": who["_id"], "roll": roll(step[2])}}
        elif kind == "other_combat":
            self.combat_id = "combatBBBBBBBBBB" if self.combat_id == "combatAAAAAAAAAA" else "combatAAAAAAAAAA"
        elif kind == "delete":
            name = "deleteCombat"
        self.seq += 1
        turn = self.turn if people and self.round else None
        current = people[self.turn % len(people)]["_id"] if turn is not None else None
        combat = {"_id": self.combat_id, "round": self.round, "turn": turn,
                  "combatants": copy.deepcopy(people), "groups": copy.deepcopy(self.groups)}
        hook = {"seq": self.seq, "user": GM, "world_time": float(self.seq * 6), "hook": name,
                "combat": combat, "current": {"round": self.round, "turn": turn, "combatantId": current,
                                              "tokenId": None}, **extra}
        if name == "deleteCombat":
            self.combats[self.combat_id] = [combatant(i) for i in range(3)]
        return hook


def _session(ruleset: str) -> World:
    return open_session(None, {"world": "worldIncremental", "ruleset": ruleset, "gm_users": [GM]})


def _wire(payload: dict[str, Any]) -> Any:
    """The payload as the server reads it: fresh objects, every time."""
    return protocol.wirejson.loads(orjson.dumps(payload))


def _same(a: pipeline.Result, b: pipeline.Result) -> None:
    assert a.ack == b.ack
    assert getattr(a.ack, "text", None) == getattr(b.ack, "text", None)
    assert a.emits == b.emits
    assert a.world == b.world
    assert a.error == b.error and a.record == b.record


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ruleset=st.sampled_from(["foundry-core", "balanced-d20"]), size=st.integers(1, 6),
       plan=st.lists(steps, min_size=1, max_size=30))
def test_the_memo_gives_what_the_whole_check_and_read_give(ruleset: str, size: int, plan: list[tuple[Any, ...]]) -> None:
    table = Table(size)
    incremental = whole = _session(ruleset)
    seen: Seen = {}
    for step in plan:
        payload = table.hook(step)
        fast = process(incremental, "hook", _wire(payload), from_wire=True, seen=seen)
        full = process(whole, "hook", _wire(payload), from_wire=True)
        _same(fast, full)
        incremental, whole = fast.world, full.world
        if fast.seen is not None:
            seen = fast.seen


def _turns(count: int) -> list[dict[str, Any]]:
    table = Table(4)
    return [table.hook(("turn",)) for _ in range(count)]


def test_a_turn_change_checks_none_of_the_combatants_seen_last_time(monkeypatch: Any) -> None:
    checked: list[int] = []
    real = protocol.is_valid_fast

    def counting(name: str, instance: Any) -> bool:
        if name == "hook":
            checked.append(len(instance["combat"]["combatants"]))
        return real(name, instance)

    monkeypatch.setattr(protocol, "is_valid_fast", counting)
    world = _session("balanced-d20")
    seen: Seen = {}
    for payload in _turns(3):
        result = process(world, "hook", _wire(payload), from_wire=True, seen=seen)
        assert result.ack["ok"] is True
        world, seen = result.world, result.seen if result.seen is not None else seen
    assert checked == [4, 0, 0]


def test_a_combatant_whose_true_became_1_is_refused_after_an_unchanged_turn() -> None:
    world = _session("foundry-core")
    seen: Seen = {}
    first, second, third = _turns(3)
    for payload in (first, second):
        result = process(world, "hook", _wire(payload), from_wire=True, seen=seen)
        world, seen = result.world, result.seen if result.seen is not None else seen
    third["combat"]["combatants"][0]["hidden"] = 1  # == True in Python, not in JSON
    refused = process(world, "hook", _wire(third), from_wire=True, seen=seen)
    assert refused.ack["ok"] is False
    assert refused.ack["error"]["code"] == "invalid_message"
    assert refused.ack["error"]["path"] == "/combat/combatants/0/hidden"
    assert refused.seen is None  # a refusal leaves the memo as it was


def test_the_memo_follows_deleted_combats() -> None:
    table = Table(2)
    world = _session("foundry-core")
    seen: Seen = {}
    for step in [("turn",), ("turn",), ("delete",)]:
        result = process(world, "hook", _wire(table.hook(step)), from_wire=True, seen=seen)
        world, seen = result.world, result.seen if result.seen is not None else seen
    assert "combatAAAAAAAAAA" not in seen and "combatAAAAAAAAAA" not in world.combats
