"""Hostile and broken input: every mutation of a valid message is refused precisely and
changes nothing.

Property (hypothesis, at the pipeline the server and replay share): for every inbound kind
(each hook name, each intent kind) and every kind of damage (fields dropped, wrong types,
numbers out of range, NaN/Infinity, nesting past the limit, very long strings, a message past
the size limit, unknown hooks and intents, unknown args, ids of other combats and prompts,
bad ``seq``), the ack is ``ok: false`` with the expected ``code`` and ``path``, it matches the
ack schema, and every plan and pending prompt of the world is as it was. The number of cases
is printed in the terminal summary ("hostile input: fuzz cases run").
"""

from __future__ import annotations

import asyncio
import copy
import random
import time
from collections.abc import Sequence
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings
from msgspec.structs import replace

from adapter import protocol
from adapter.pipeline import process
from adapter.rulesets import RULESETS
from tests.reliability import fuzzcount
from tests.reliability.harness import auth_for, open_link
from tests.reliability.mutations import CATEGORIES, Case, RandomDraw, bases, make_case
from tests.reliability.table import build, read_state, state_of
from tests.support.sidecar import Running


class HypothesisDraw:
    def __init__(self, data: st.DataObject) -> None:
        self.data = data

    def choice(self, items: Sequence[Any]) -> Any:
        return self.data.draw(st.sampled_from(list(items)))

    def integer(self, lo: int, hi: int) -> int:
        return int(self.data.draw(st.integers(lo, hi)))


def check_refused(case: Case) -> None:
    """Apply the case to its base world; the refusal and the unchanged state, or fail."""
    world = case.world
    assert world is not None
    result = process(world, case.event, case.payload, rulesets=RULESETS)
    ack = result.ack
    assert ack["ok"] is False, (case.category, ack)
    assert ack["error"]["code"] == case.code, (case.category, case.path, ack)
    assert ack["error"].get("path") == case.path, (case.category, case.code, ack)
    if case.names:
        assert any(f"'{name}'" in ack["error"]["message"] for name in case.names), ack
    protocol.check_outbound("ack", ack)
    after = result.world
    assert after.combats == world.combats and after.prompts == world.prompts and after.ext == world.ext
    assert (after.ruleset, after.settings, after.gm_users) == (world.ruleset, world.settings, world.gm_users)
    assert after.last_seq == world.last_seq + (1 if case.recorded else 0)
    assert result.record is case.recorded and result.emits == ()


def test_every_template_is_valid_so_each_refusal_is_the_mutation_s() -> None:
    """The fuzz starts from valid messages of every kind (a broken template would make every
    refusal trivially true)."""
    kinds = set()
    for base in bases():
        for event, payload in base.templates:
            protocol.validate(event, payload)
            kinds.add(payload.get("hook") or payload.get("kind"))
    assert len(kinds) == 11 + 13


@pytest.fixture(scope="module")
def examples(request: pytest.FixtureRequest) -> int:
    return 1500 if request.config.getoption("--full") else 150


@pytest.mark.parametrize("category", CATEGORIES)
def test_a_mutated_message_is_refused_with_its_code_and_path_and_changes_nothing(category: str, examples: int) -> None:
    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        case = make_case(HypothesisDraw(data), category)
        check_refused(case)
        fuzzcount.COUNTS[f"pipeline {category}"] += 1

    run()


# ---------------------------------------------------------------- through the real server


def renumbered(case: Case, nxt: int) -> Any:
    """The case's payload for a world whose next seq is ``nxt`` (a gap keeps its size)."""
    payload = copy.deepcopy(case.payload)
    if not isinstance(payload, dict):
        return payload
    if case.code == "out_of_order":
        assert case.world is not None
        payload["seq"] = min(payload["seq"] - (case.world.last_seq + 1) + nxt, 2**53 - 1)
    elif case.category != "bad_seq":
        payload["seq"] = nxt
    return payload


def _verdict(ack: dict[str, Any]) -> Any:
    """An ack without its message text (the wire may turn 10**30 into 1e+30 in it)."""
    error = ack.get("error") or {}
    return ack["ok"], ack["seq"], error.get("code"), error.get("path")


def deep_list(levels: int) -> Any:
    inner: Any = 0
    for _ in range(levels):
        inner = [inner]
    return inner


async def test_hostile_messages_through_the_real_server_are_refused_and_others_keep_being_answered(
    sidecar: Running, full: bool,
) -> None:
    per_world = 300 if full else 66
    draw = RandomDraw(random.Random(2024))
    bystander = build("world-bystander", "foundry-core", 9, fights=2, rounds=3)
    by = await open_link(sidecar.url, auth_for(bystander.world, bystander.ruleset))
    await by.welcome
    answered: list[float] = []

    async def keep_playing() -> None:
        for i, (event, data) in enumerate(bystander.messages):
            start = time.monotonic()
            ack = await asyncio.wait_for(await by.emit(event, data), 5)
            answered.append(time.monotonic() - start)
            assert ack == bystander.acks[i]
            await asyncio.sleep(0.01)

    playing = asyncio.ensure_future(keep_playing())
    links = []
    try:
        for base in [b for b in bases() if b.world.ruleset in ("balanced-d20", "storyteller")]:
            link = await open_link(sidecar.url, auth_for(base.world.world, base.world.ruleset))
            links.append(link)
            await link.welcome
            for event, data in base.history:  # bring the server to the base world
                assert (await (await link.emit(event, data)))["seq"] == data["seq"]
            local = base.world
            for i in range(per_world):
                case = make_case(draw, CATEGORIES[i % len(CATEGORIES)], [base])
                payload = renumbered(case, local.last_seq + 1)
                expected = process(local, case.event, payload, rulesets=RULESETS)
                ack = await asyncio.wait_for(await link.emit(case.event, payload), 10)
                assert _verdict(ack) == _verdict(expected.ack), (case.category, ack, expected.ack)
                assert ack["ok"] is False and ack["error"]["code"] == case.code
                assert ack["error"].get("path") == case.path, (case.category, ack)
                local = expected.world
                fuzzcount.COUNTS[f"server {case.category}"] += 1
            wire = [  # what only a socket.io client can send: each gets a refusal, none a hang
                (("hook",), "/seq"), (("hook", [1, 2]), "/seq"), (("intent", "seq"), "/seq"),
                (("hook", ({"seq": 1}, {"seq": 2})), ""), (("explode", {"seq": 1}), ""),
                (("hook", {**base.templates[0][1], "seq": local.last_seq + 1,
                           "options": {"blob": b"\x00\xff"}}), "/options/blob"),
                (("hook", {**base.templates[0][1], "seq": local.last_seq + 2,
                           "options": {"d": deep_list(200)}}), "/options/d" + "/0" * 31),
            ]
            for args, path in wire:
                ack = await link.sio.call(*args, timeout=10)
                assert ack["ok"] is False and ack["error"]["code"] == "invalid_message", (args[0], ack)
                assert ack["error"]["path"] == path, ack
                fuzzcount.COUNTS["server wire-only"] += 1
            local = replace(local, last_seq=local.last_seq + 2)
            dup = await (await link.emit("hook", {**base.templates[0][1], "seq": local.last_seq}))
            assert dup["duplicate"] is True
            assert await read_state(link.ask, local.last_seq, base.world.combats) == state_of(base.world)
        await asyncio.wait_for(playing, 60)
    finally:
        playing.cancel()
        for link in [by, *links]:
            await link.close()
    assert len(answered) == len(bystander.messages) and max(answered) < 5
    # after a restart the refusals are still refusals: the same plans and prompts come back
    await sidecar.restart()
    for base in [b for b in bases() if b.world.ruleset in ("balanced-d20", "storyteller")]:
        link = await open_link(sidecar.url, auth_for(base.world.world, base.world.ruleset))
        try:
            welcome = await link.welcome
            assert await read_state(link.ask, welcome["last_seq"], base.world.combats) == state_of(base.world)
        finally:
            await link.close()
