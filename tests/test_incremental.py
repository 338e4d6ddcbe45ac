"""A message costs what changed: a hook whose combatants are those of the last hook of its
combat is neither parsed (``seen.loads_frame``), checked nor read again
(adapter/pipeline.py, "What a message costs"), its plan's entries are built, encoded and
checked again only where their inputs changed (``engine.plan.PlanMemo``), and all of it
gives exactly what the whole read, check and build give.

The property: random sequences of hooks (turn changes that repeat the combatants, and
changes in a combatant that must be noticed: a field, a type that Python's ``==`` confuses
such as ``true`` and ``1``, a join, a leave, an order, a group, core's Skip Defeated on the
combat, a roll, a second combat, a deletion, invalid values), under each ruleset, give the same frames read, acks (value and
bytes), broadcasts (value and bytes) and worlds with the memos (``seen``, ``plans``) as
without them, and every ack still passes its schema whole.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter import pipeline, protocol
from adapter.benchkit.payloads import GM, combatant, roll
from adapter.engine import World, messages
from adapter.engine import plan as plan_module
from adapter.engine.plan import PlanMemo
from adapter.pipeline import open_session, process
from adapter.rulesets import RULESETS
from adapter.seen import Known, Seen, loads_frame
from tests.support.examples import examples

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
    st.tuples(st.just("skip_defeated"), st.integers(0, 3)),
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
        #: core's Skip Defeated as the combat's ``skip_defeated`` ({}: absent; 1 is invalid)
        self.skip: dict[str, Any] = {}

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
        elif kind == "skip_defeated":
            self.skip = [{}, {"skip_defeated": True}, {"skip_defeated": False}, {"skip_defeated": 1}][step[1]]
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
                  "combatants": copy.deepcopy(people), "groups": copy.deepcopy(self.groups), **self.skip}
        hook = {"seq": self.seq, "user": GM, "world_time": float(self.seq * 6), "hook": name,
                "combat": combat, "current": {"round": self.round, "turn": turn, "combatantId": current,
                                              "tokenId": None}, **extra}
        if name == "deleteCombat":
            self.combats[self.combat_id] = [combatant(i) for i in range(3)]
        return hook


def _session(ruleset: str) -> World:
    return open_session(None, {"world": "worldIncremental", "ruleset": ruleset, "gm_users": [GM]}, rulesets=RULESETS)


def _wire(payload: dict[str, Any]) -> Any:
    """The payload as the server reads it: fresh objects, every time."""
    return protocol.wirejson.loads(orjson.dumps(payload))


def _same(a: pipeline.Result, b: pipeline.Result) -> None:
    assert a.ack == b.ack
    assert getattr(a.ack, "text", None) == getattr(b.ack, "text", None)
    assert a.emits == b.emits
    for name, data in a.emits:  # a broadcast goes out as its text: the whole encoding's
        text = getattr(data, "text", None)
        assert text is None or text == protocol.wirejson.dumps(dict(data)), name
    assert a.world == b.world
    assert a.error == b.error and a.record == b.record
    if a.ack["ok"]:
        protocol.check_outbound("ack", orjson.loads(orjson.dumps(a.ack)))  # whole, every entry


def _data(item: Any) -> Any:
    return item.get("data") if type(item) is dict else None


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ruleset=st.sampled_from(["foundry-core", "balanced-d20", "dice-pool", "storyteller"]),
       size=st.integers(1, 6), plan=st.lists(steps, min_size=1, max_size=30))
def test_the_memo_gives_what_the_whole_check_and_read_give(ruleset: str, size: int, plan: list[tuple[Any, ...]]) -> None:
    table = Table(size)
    incremental = whole = _session(ruleset)
    seen: Seen = {}
    plans = PlanMemo()
    for step in plan:
        line = orjson.dumps({"event": "hook", "data": table.hook(step)})
        read = loads_frame(line.decode(), seen, _data, worth=0)
        assert read == protocol.wirejson.loads(line)
        fast = process(incremental, "hook", read["data"], from_wire=True, seen=seen, plans=plans, keep_read=True, rulesets=RULESETS)
        full = process(whole, "hook", protocol.wirejson.loads(line)["data"], from_wire=True, rulesets=RULESETS)
        _same(fast, full)
        incremental, whole = fast.world, full.world
        if fast.seen is not None:
            seen = fast.seen


def _turns(count: int) -> list[dict[str, Any]]:
    table = Table(4)
    return [table.hook(("turn",)) for _ in range(count)]


def test_a_turn_change_checks_none_of_the_combatants_seen_last_time(monkeypatch: Any) -> None:
    checked: list[int] = []
    real = messages.check_combat

    def counting(combat: dict[str, Any]) -> None:
        checked.append(len(combat["combatants"]))
        real(combat)

    monkeypatch.setattr(messages, "check_combat", counting)
    world = _session("balanced-d20")
    seen: Seen = {}
    for payload in _turns(3):
        result = process(world, "hook", _wire(payload), from_wire=True, seen=seen, rulesets=RULESETS)
        assert result.ack["ok"] is True
        world, seen = result.world, result.seen if result.seen is not None else seen
    assert checked == [4, 0, 0]


def test_a_combatant_whose_true_became_1_is_refused_after_an_unchanged_turn() -> None:
    world = _session("foundry-core")
    seen: Seen = {}
    first, second, third = _turns(3)
    for payload in (first, second):
        result = process(world, "hook", _wire(payload), from_wire=True, seen=seen, rulesets=RULESETS)
        world, seen = result.world, result.seen if result.seen is not None else seen
    third["combat"]["combatants"][0]["hidden"] = 1  # == True in Python, not in JSON
    refused = process(world, "hook", _wire(third), from_wire=True, seen=seen, rulesets=RULESETS)
    assert refused.ack["ok"] is False
    assert refused.ack["error"]["code"] == "invalid_message"
    assert refused.ack["error"]["path"] == "/combat/combatants/0/hidden"
    assert refused.seen is None  # a refusal leaves the memo as it was


def test_the_memo_follows_deleted_combats() -> None:
    table = Table(2)
    world = _session("foundry-core")
    seen: Seen = {}
    for step in [("turn",), ("turn",), ("delete",)]:
        result = process(world, "hook", _wire(table.hook(step)), from_wire=True, seen=seen, rulesets=RULESETS)
        world, seen = result.world, result.seen if result.seen is not None else seen
    assert "combatAAAAAAAAAA" not in seen and "combatAAAAAAAAAA" not in world.combats


def test_a_turn_change_builds_and_checks_only_the_entries_that_changed(monkeypatch: Any) -> None:
    built: list[str] = []
    real_entry = plan_module._entry

    def counting_entry(cid: str, *args: Any) -> dict[str, Any]:
        built.append(cid)
        return real_entry(cid, *args)

    checked: list[int] = []
    real_check = protocol.check_outbound

    def counting_check(name: str, instance: Any) -> None:
        if name == "ack":
            checked.append(sum(len(p["order"]) for p in instance["plans"]))
        real_check(name, instance)

    monkeypatch.setattr(plan_module, "_entry", counting_entry)
    monkeypatch.setattr(protocol, "check_outbound", counting_check)
    table = Table(12)
    world = _session("balanced-d20")
    seen: Seen = {}
    plans = PlanMemo()
    counts = []
    for step in [("turn",)] * 4:
        built.clear()
        result = process(world, "hook", _wire(table.hook(step)), from_wire=True, seen=seen, plans=plans, rulesets=RULESETS)
        assert result.ack["ok"] is True and result.ack["plans"]
        counts.append(len(built))
        world, seen = result.world, result.seen if result.seen is not None else seen
    assert counts[0] >= 12  # the start: every entry
    assert all(0 < n <= 3 for n in counts[2:]), counts  # a turn: who ended, who begins
    assert all(n <= 3 for n in checked[2:]), checked


def _frame(text: str) -> Any:
    return orjson.loads(text)


def _kept(people: list[Any]) -> Seen:
    return {"combatAAAAAAAAAA": Known(orjson.dumps(people), people)}


@given(where=st.sampled_from(["elsewhere", "duplicate", "string", "nested", "nan", "place"]))
@settings(max_examples=examples(30), deadline=None)
def test_a_kept_list_is_taken_only_at_the_message_s_own_combatants(where: str) -> None:
    people = [combatant(i) for i in range(3)]
    seen = _kept(people)
    text = orjson.dumps(people).decode()
    combat = '{"_id":"combatAAAAAAAAAA","round":1,"turn":0,'
    frames = {
        # the kept list under another key, the message's own list empty
        "elsewhere": f'{{"event":"hook","data":{{"other":{{"combatants":{text}}},"combat":{combat}"combatants":[]}}}}}}',
        # a duplicate key: the reader keeps the last one
        "duplicate": f'{{"event":"hook","data":{{"combat":{combat}"combatants":{text},"combatants":[1]}}}}}}',
        # the text inside a string
        "string": '{"event":"hook","data":{"note":' + orjson.dumps('"combatants":' + text).decode()
                  + f',"combat":{combat}"combatants":[]}}}}}}',
        # a combatant's own key
        "nested": f'{{"event":"hook","data":{{"combat":{combat}"combatants":[{{"combatants":{text}}}]}}}}}}',
        # what orjson cannot read elsewhere in the frame
        "nan": f'{{"event":"hook","data":{{"x":Infinity,"combat":{combat}"combatants":{text}}}}}}}',
        "place": f'{{"event":"hook","data":{{"combat":{combat}"combatants":{text}}}}}}}',
    }
    frame = frames[where]
    read = loads_frame(frame, seen, _data, worth=0)
    whole = protocol.wirejson.loads(frame)
    assert read == whole
    taken = read["data"]["combat"]["combatants"] is people
    assert taken == (where == "place")


#: scores with ties, and ints beside floats (written differently); none unrolled: those go last
SCORES = [5, 5.0, 7, 7.5, 10, 10.0, 12]


@settings(max_examples=examples(200), deadline=None)
@given(ruleset=st.sampled_from(["balanced-d20", "foundry-core", "dice-pool"]),
       start=st.lists(st.sampled_from(SCORES), min_size=1, max_size=8),
       changes=st.lists(st.tuples(st.integers(0, 7), st.sampled_from(["score", "adopted", "defeated", "round"]),
                                  st.sampled_from(SCORES)), max_size=20))
def test_plan_entries_built_again_only_where_changed_equal_the_whole_plan(
    ruleset: str, start: list[Any], changes: list[tuple[int, str, Any]],
) -> None:
    """The engine's half alone: a combat whose order stays put while scores (ties among
    them), adopted values, defeats and the round change under it; the memo's body and text
    are the whole build's after every change."""
    from msgspec.structs import replace

    from adapter.engine.model import Combat, Combatant
    from adapter.rulesets import RULESETS

    rs = RULESETS[ruleset]
    ids = [f"cbt{i:013d}" for i in range(len(start))]
    combat = Combat(id="combatAAAAAAAAAA", ruleset=ruleset, round=1, order=tuple(ids), current=ids[0],
                    combatants={cid: Combatant(id=cid, score=s) for cid, s in zip(ids, start)})
    memo = PlanMemo()
    for i, what, value in [(0, "round", 1), *changes]:
        cid = ids[i % len(ids)]
        c = combat.combatants[cid]
        if what == "score":
            c = replace(c, score=value)
        elif what == "adopted":
            c = replace(c, adopted=None if value is None or c.score is None else (c.score, value))
        elif what == "defeated":
            c = replace(c, defeated=not c.defeated)
        else:
            combat = replace(combat, round=combat.round + 1)
        combat = replace(combat, combatants={**combat.combatants, cid: c})
        fast = memo.body(rs, combat, None, None)
        full = PlanMemo().body(rs, combat, None, None)
        assert fast == full
        assert plan_module.plan_text(fast, memo, combat.id) == plan_module.plan_text(full)


def test_the_plan_memo_forgets_a_deleted_combat() -> None:
    table = Table(2)
    world = _session("balanced-d20")
    seen: Seen = {}
    plans = PlanMemo()
    for step in [("turn",), ("other_combat",), ("turn",), ("delete",)]:
        result = process(world, "hook", _wire(table.hook(step)), from_wire=True, seen=seen, plans=plans, rulesets=RULESETS)
        assert result.ack["ok"] is True
        world, seen = result.world, result.seen if result.seen is not None else seen
    assert set(plans.combats) == set(world.combats) == {"combatAAAAAAAAAA"}
