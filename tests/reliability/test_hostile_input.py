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

from collections.abc import Sequence
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings

from adapter import protocol
from adapter.pipeline import process
from tests.reliability import fuzzcount
from tests.reliability.mutations import CATEGORIES, Case, bases, make_case


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
    result = process(world, case.event, case.payload)
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
