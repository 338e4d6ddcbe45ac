"""Initiative numbers: Foundry's sort of the plan's numbers reproduces the plan's order."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.engine.order import encode_initiatives, foundry_sort, place_after, place_before


def test_single_scores_are_shown_as_whole_numbers() -> None:
    values = encode_initiatives(["a", "b"], {"a": 13, "b": 8})
    assert values == {"a": 13.0, "b": 8.0}


def test_ties_that_foundrys_id_order_already_breaks_stay_whole() -> None:
    assert encode_initiatives(["a", "c"], {"a": 10, "c": 10}) == {"a": 10.0, "c": 10.0}


def test_ties_against_id_order_get_fractions_in_the_same_floor() -> None:
    values = encode_initiatives(["c", "a"], {"c": 10, "a": 10})
    assert values == {"c": 10.01, "a": 10.0}
    assert foundry_sort(values) == ["c", "a"]


def test_entry_placed_below_a_lower_score_takes_its_predecessors_floor() -> None:
    # a dashed cleric (13) waiting for the turn in progress at 10 to end
    values = encode_initiatives(["x", "cleric", "y"], {"x": 10, "cleric": 13, "y": 9})
    assert foundry_sort(values) == ["x", "cleric", "y"]
    assert math.floor(values["cleric"]) == 10 and values["x"] > values["cleric"]


def test_negative_scores_keep_their_floor() -> None:
    values = encode_initiatives(["a", "b", "c"], {"a": 2, "b": -1, "c": -2})
    assert [math.floor(values[k]) for k in "abc"] == [2, -1, -2]


def test_unrolled_combatants_come_last_with_null() -> None:
    values = encode_initiatives(["a", "b", "z"], {"a": 3, "b": None, "z": None})
    assert values["b"] is None and values["z"] is None


def test_hints_are_used_when_they_keep_the_order() -> None:
    values = encode_initiatives(["fly", "john"], {"fly": 2, "john": 2}, {"fly": 0.13, "john": 0.05})
    assert values == {"fly": 2.13, "john": 2.05}


def test_hints_that_break_the_order_are_replaced() -> None:
    values = encode_initiatives(["b", "a"], {"b": 2, "a": 2}, {"b": 0.05, "a": 0.13})
    assert foundry_sort(values) == ["b", "a"]


def test_place_after_and_before() -> None:
    assert place_after(("a", "b", "c", "d"), "a", "c") == ("b", "c", "a", "d")
    assert place_before(("a", "b", "c", "d"), "d", "b") == ("a", "d", "b", "c")


ids = st.text(alphabet="abcdefghij", min_size=1, max_size=3)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(ids, st.one_of(st.none(), st.integers(-5, 30))), min_size=1, max_size=25, unique_by=lambda t: t[0]))
def test_any_order_with_rolled_first_reproduces_under_foundrys_sort(entries: list[tuple[str, int | None]]) -> None:
    rolled = [cid for cid, s in entries if s is not None]
    unrolled = sorted(cid for cid, s in entries if s is None)
    order = rolled + unrolled  # any order of the rolled ones: rules place freely
    scores = {cid: s for cid, s in entries}
    values = encode_initiatives(order, scores)
    assert foundry_sort(values) == order
    previous = math.inf
    for cid in rolled:  # the floor is the score unless placed below a lower score
        floor = math.floor(values[cid])  # type: ignore[arg-type]
        assert floor == min(scores[cid], previous)  # type: ignore[type-var]
        previous = floor
