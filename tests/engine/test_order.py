"""Initiative numbers: Foundry's sort of the plan's numbers reproduces the plan's order."""

from __future__ import annotations

import math
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.engine.order import by_id, encode_initiatives, place
from tests.foundry import foundry_sort
from tests.support.examples import examples


def test_single_scores_are_shown_as_whole_numbers() -> None:
    values = encode_initiatives(["a", "b"], {"a": 13, "b": 8})
    assert values == {"a": 13.0, "b": 8.0}


def test_ties_are_broken_even_where_foundrys_id_order_agrees() -> None:
    # dnd5e sorts exact ties by name, pf2e by its own priority: only distinct values are safe
    assert encode_initiatives(["a", "c"], {"a": 10, "c": 10}) == {"a": 10.01, "c": 10.0}


def test_ties_against_id_order_get_fractions_in_the_same_floor() -> None:
    values = encode_initiatives(["c", "a"], {"c": 10, "a": 10})
    assert values == {"c": 10.01, "a": 10.0}
    assert foundry_sort(values) == ["c", "a"]


def test_entry_placed_below_a_lower_score_goes_just_below_its_predecessor() -> None:
    # a dashed cleric (13) waiting for the turn in progress at 10 to end; x keeps its 10
    values = encode_initiatives(["x", "cleric", "y"], {"x": 10, "cleric": 13, "y": 9})
    assert foundry_sort(values) == ["x", "cleric", "y"]
    assert values == {"x": 10.0, "cleric": 9.99, "y": 9.0}


def test_a_score_with_the_systems_decimals_keeps_them() -> None:
    # dnd5e's initiativeDexTiebreaker: d20 + mod + Dex/100
    values = encode_initiatives(["rogue", "orc"], {"rogue": 24.18, "orc": 16.22})
    assert values == {"rogue": 24.18, "orc": 16.22}


def test_a_tie_at_a_decimal_score_is_broken_below_its_own_decimals() -> None:
    values = encode_initiatives(["a", "b", "c"], {"a": 24.18, "b": 24.18, "c": 24.17})
    assert values == {"a": 24.181, "b": 24.18, "c": 24.17}


def test_a_tie_foundry_stores_in_its_own_order_stays_as_stored() -> None:
    stored = {"a": 12.0, "b": 12.0}
    values = encode_initiatives(["a", "b", "c"], {"a": 12, "b": 12, "c": 5}, stored=stored)
    assert values == {"a": 12.0, "b": 12.0, "c": 5.0}


def test_a_stored_tie_against_the_plans_order_is_broken() -> None:
    stored = {"a": 12.0, "b": 12.0}
    values = encode_initiatives(["b", "a"], {"a": 12, "b": 12}, stored=stored)
    assert values == {"b": 12.01, "a": 12.0}


def test_a_new_score_joining_a_stored_tie_breaks_it() -> None:
    stored = {"a": 12.0, "b": 12.0}
    values = encode_initiatives(["a", "b", "c"], {"a": 12, "b": 12, "c": 12}, stored=stored)
    assert len(set(values.values())) == 3 and foundry_sort(values) == ["a", "b", "c"]


def test_values_a_float_apart_still_get_room_for_an_entry_placed_between() -> None:
    # -3 + 0.28 is -2.7199999999999998, the next float above -2.72: no decimal step fits
    scores = {"a": -3 + 0.28, "b": 5.0, "c": -2.72}
    values = encode_initiatives(["a", "b", "c"], scores)
    assert foundry_sort(values) == ["a", "b", "c"] and len(set(values.values())) == 3


def test_spreading_below_leaves_room_for_a_close_next_value() -> None:
    values = encode_initiatives(["a", "b", "c", "d"], {"a": 5, "b": 5, "c": 9, "d": 4.99})
    assert values == {"a": 5.001, "b": 5.0, "c": 4.999, "d": 4.99}


def test_negative_scores_keep_their_floor() -> None:
    values = encode_initiatives(["a", "b", "c"], {"a": 2, "b": -1, "c": -2})
    assert [math.floor(values[k] or 0) for k in "abc"] == [2, -1, -2]


def test_unrolled_combatants_come_last_with_null() -> None:
    values = encode_initiatives(["a", "b", "z"], {"a": 3, "b": None, "z": None})
    assert values["b"] is None and values["z"] is None


def test_hints_are_used_when_they_keep_the_order() -> None:
    values = encode_initiatives(["fly", "john"], {"fly": 2, "john": 2}, {"fly": 0.13, "john": 0.05})
    assert values == {"fly": 2.13, "john": 2.05}


def test_hints_that_break_the_order_are_replaced() -> None:
    values = encode_initiatives(["b", "a"], {"b": 2, "a": 2}, {"b": 0.05, "a": 0.13})
    assert foundry_sort(values) == ["b", "a"]
    assert values == {"b": 2.05, "a": 2.049}  # the whole part is still the successes


def test_place_after_before_and_at_the_end() -> None:
    assert place(("a", "b", "c", "d"), "a", ("after", "c")) == ("b", "c", "a", "d")
    assert place(("a", "b", "c", "d"), "d", ("before", "b")) == ("a", "d", "b", "c")
    assert place(("a", "b", "c", "d"), "b", None) == ("a", "c", "d", "b")


ids = st.text(alphabet="abcdefghij", min_size=1, max_size=3)
#: whole scores, and scores with dnd5e's two tie-breaker decimals (d20 + mod + Dex/100)
scores_st = st.one_of(st.integers(-5, 30).map(float),
                      st.tuples(st.integers(-5, 30), st.integers(1, 30)).map(lambda t: t[0] + t[1] / 100))


def dnd5e_sort(values: dict[str, float | None], names: dict[str, str]) -> list[str]:
    """dnd5e's ``Combat5e._sortCombatants`` (4.3.0+): initiative descending, an exact tie
    (nulls included) by name, then by id (research section 9; written from that fact)."""

    def key(cid: str) -> tuple[float, str, str]:
        value = values[cid]
        return (-(value if value is not None else -math.inf), names[cid], cid)

    return sorted(values, key=key)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.tuples(ids, st.one_of(st.none(), scores_st)), min_size=1, max_size=25,
                unique_by=lambda t: t[0]),
       st.randoms(use_true_random=False))
def test_any_order_with_rolled_first_reproduces_under_core_and_dnd5e_sorts(
    entries: list[tuple[str, float | None]], rnd: random.Random,
) -> None:
    rolled = [cid for cid, s in entries if s is not None]
    unrolled = sorted(cid for cid, s in entries if s is None)
    order = rolled + unrolled  # any order of the rolled ones: rules place freely
    scores = {cid: s for cid, s in entries}
    values = encode_initiatives(order, scores)
    assert foundry_sort(values) == order
    rolled_values = [values[cid] for cid in rolled]
    assert len(set(rolled_values)) == len(rolled)  # no exact tie between rolled combatants
    names = {cid: rnd.choice(["Goblin", "Aria", ""]) for cid in order}
    assert dnd5e_sort(values, names)[: len(rolled)] == rolled
    wanted = math.inf
    for cid in rolled:  # its own score (a tie nudges it up), unless placed below a lower one
        own, value = scores[cid], values[cid]
        assert own is not None and value is not None
        if own <= wanted:
            assert own <= value < own + 0.25  # at most 24 ties above it, 0.01 apart
        else:
            assert value < own and value < wanted + 0.25  # placed below a lower score
        wanted = min(own, wanted)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(scores_st, min_size=1, max_size=25, unique=True))
def test_distinct_scores_in_sorted_order_keep_their_exact_values(scores: list[float]) -> None:
    order = [f"c{i:02d}" for i in range(len(scores))]
    by_id = dict(zip(order, sorted(scores, reverse=True)))
    assert encode_initiatives(order, dict(by_id)) == by_id


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.tuples(ids, st.one_of(st.none(), scores_st)), min_size=1, max_size=25,
                unique_by=lambda t: t[0]))
def test_values_adopted_in_foundrys_own_order_are_written_back_as_stored(
    entries: list[tuple[str, float | None]],
) -> None:
    # first contact under foundry-core: the order is core's sort of the stored values
    values = {cid: v for cid, v in entries}
    order = foundry_sort(values)
    stored = {cid: v for cid, v in values.items() if v is not None}
    assert encode_initiatives(order, values, stored=stored) == values


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.tuples(ids, scores_st, st.one_of(st.none(), st.integers(0, 99)), st.booleans()),
                min_size=1, max_size=15, unique_by=lambda t: t[0]),
       st.randoms(use_true_random=False))
def test_any_order_with_hints_and_stored_values_reproduces_and_ties_only_where_foundry_has_them(
    entries: list[tuple[str, float, int | None, bool]], rnd: random.Random,
) -> None:
    order = [cid for cid, *_ in entries]
    rnd.shuffle(order)
    scores: dict[str, float | None] = {cid: s for cid, s, _, _ in entries}
    hints = {cid: h / 100 for cid, _, h, _ in entries if h is not None}
    stored = {cid: s for cid, s, _, kept in entries if kept}
    values = encode_initiatives(order, scores, hints, stored)
    assert foundry_sort(values) == order
    for a, b in zip(order, order[1:]):
        assert values[a] != values[b] or (a in stored and b in stored and a < b)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.tuples(ids, st.one_of(st.none(), scores_st, st.integers(-5, 30))), min_size=0,
                max_size=12, unique_by=lambda t: t[0]),
       st.booleans())
def test_the_descending_shortcut_gives_what_the_runs_give(
    entries: list[tuple[str, float | None]], sort_them: bool,
) -> None:
    """encode_initiatives' shortcut for scores already strictly descending (the common plan)
    against the general computation, on orders sorted or not, with ties and unrolled ones."""
    if sort_them:
        entries = sorted(entries, key=lambda e: -(e[1] or 0))
    # any order of the rolled ones, the unrolled last (as encode_initiatives requires)
    order = [cid for cid, s in entries if s is not None] + [cid for cid, s in entries if s is None]
    scores = dict(entries)
    values = encode_initiatives(order, scores)
    # a value stored for no combatant of the order changes nothing but skips the shortcut
    general = encode_initiatives(order, scores, stored={"not an id": 0.0})
    assert values == general
    assert [type(v) for v in values.values()] == [type(v) for v in general.values()]


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.text(min_size=0, max_size=6), max_size=12))
def test_by_id_ranks_ids_as_their_string_order_higher_first(given_ids: list[str]) -> None:
    """The rulings' "Foundry's own order (`_id`)": a larger key goes first, so the keys sorted
    descending give the ids ascending, an id before those it prefixes ("a" before "ab")."""
    assert sorted(given_ids, key=by_id, reverse=True) == sorted(given_ids)
    assert sorted(given_ids, key=lambda i: tuple(-k for k in by_id(i))) == sorted(given_ids)
    assert (by_id("a") > by_id("ab")) and (by_id("ab") > by_id("b"))
