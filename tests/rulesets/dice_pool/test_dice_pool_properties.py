"""Properties: the recount is Foundry's ``cs>=N df=1``, and Foundry's sort shows the order."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.rulesets.dice_pool.pool import DiceSettings, pool_dice, success_count
from tests.decoded import as_roll
from tests.foundry import foundry_sort
from tests.rulesets.dice_pool.dp_table import Table
from tests.support.examples import examples

FAST = settings(max_examples=examples(200), deadline=None)


# ---------------------------------------------------------------- a model of Foundry's dice


def foundry_evaluate(dice: list[int], modifiers: list[str]) -> list[dict[str, Any]]:
    """Foundry v13's Die modifiers as the research notes describe them (section 4), applied
    in written order: ``cs>=N`` marks every result ``success`` with ``count`` 1/0; ``df=N``
    turns every result equal to N into a failure worth −1 (``success`` removed)."""
    results: list[dict[str, Any]] = [{"result": d, "active": True} for d in dice]
    for modifier in modifiers:
        if modifier.startswith("cs>="):
            target = int(modifier[4:])
            for r in results:
                r["success"] = r["result"] >= target
                r["count"] = 1 if r["success"] else 0
        elif modifier.startswith("df="):
            target = int(modifier[3:])
            for r in results:
                if r["result"] == target:
                    r.pop("success", None)
                    r.update(failure=True, count=-1)
        else:  # pragma: no cover - the model knows only what the ruleset rolls
            raise AssertionError(modifier)
    return results


def foundry_total(results: list[dict[str, Any]]) -> int:
    """Die total = sum over active results of ``count`` (else the face)."""
    return sum(r.get("count", r["result"]) for r in results if r.get("active", True))


def foundry_roll(dice: list[int], s: DiceSettings) -> dict[str, Any]:
    modifiers = [f"cs>={s.success_at}"] + (["df=1"] if s.ones_cancel else [])
    results = foundry_evaluate(dice, modifiers)
    term = {"class": "Die", "options": {}, "evaluated": True, "number": len(dice),
            "faces": s.die_faces, "modifiers": modifiers, "results": results}
    return {"class": "Roll", "options": {}, "dice": [], "formula": s.formula(len(dice)),
            "terms": [term], "total": foundry_total(results), "evaluated": True}


@st.composite
def settings_and_dice(draw: st.DrawFn) -> tuple[DiceSettings, list[int]]:
    faces = draw(st.sampled_from([6, 6, 6, 8, 10, 12]))
    s = DiceSettings(
        die_faces=faces,
        success_at=draw(st.integers(2, faces)) if faces != 6 else draw(st.sampled_from([4, 4, 5])),
        ones_cancel=draw(st.booleans()),
    )
    return s, draw(st.lists(st.integers(1, faces), max_size=30))


@FAST
@given(settings_and_dice())
def test_the_recount_equals_foundrys_cs_df_total(case: tuple[DiceSettings, list[int]]) -> None:
    s, dice = case
    roll = foundry_roll(dice, s)
    count = success_count(pool_dice(as_roll(roll), len(dice), s, "X"), s)
    assert count.net == roll["total"]
    results = roll["terms"][0]["results"]
    flagged = not any(r.get("success") for r in results) and any(r["result"] == 1 for r in results)
    assert count.critical == flagged


# ---------------------------------------------------------------- the order under Foundry's sort

PERSON = st.fixed_dictionaries(
    {
        "reaction": st.integers(0, 5),
        "wits": st.integers(0, 5),
        "size": st.integers(-9, 3),
        "pool_modifier": st.integers(-3, 3),
    }
)


@FAST
@given(st.data())
def test_foundrys_sort_of_the_plan_reproduces_the_order(data: st.DataObject) -> None:
    people = data.draw(st.lists(PERSON, min_size=1, max_size=7))
    ids = data.draw(
        st.lists(st.text("abcXYZ019", min_size=3, max_size=3), min_size=len(people),
                 max_size=len(people), unique=True)
    )
    grouping = data.draw(st.lists(st.sampled_from([None, "G1", "G2"]), min_size=len(people),
                                  max_size=len(people)))
    t = Table()
    t.create()
    for gid in sorted({g for g in grouping if g}):
        t.group(f"grp{gid}", gid)
    for cid, stats, grp in zip(ids, people, grouping):
        t.add(f"cmb{cid}", cid, stats, group=f"grp{grp}" if grp else None)
    pools = {e["combatant_id"]: e["detail"]["pool"] for e in t.plan["order"]}
    for gid in sorted({g for g in grouping if g}):
        member = f"cmb{ids[grouping.index(gid)]}"
        t.hook("initiativeRoll", {"group_id": f"grp{gid}",
                                  "roll": foundry_roll(dice(data, pools[member]), DiceSettings())})
    for cid, grp in zip(ids, grouping):
        if grp is None:
            roll = foundry_roll(dice(data, pools[f"cmb{cid}"]), DiceSettings())
            t.hook("initiativeRoll", {"combatant_id": f"cmb{cid}", "roll": roll})
    check(t, stable=True)
    t.start()
    joiners, stable = data.draw(st.integers(0, 3)), True
    for _ in range(data.draw(st.integers(0, 8))):
        if joiners and data.draw(st.booleans()):
            joiners, stable = joiners - 1, False
            join(t, data, grouping)
        else:
            t.next_turn()
        check(t, stable)


def join(t: Table, data: st.DataObject, grouping: list[str | None]) -> None:
    """A combatant joins mid-fight: into a group that rolled (sharing its roll), or alone,
    rolling at once."""
    cid = f"cmb{data.draw(st.text('abcXYZ019', min_size=4, max_size=4))}"
    if any(c["_id"] == cid for c in t.combatants):
        return
    gid = data.draw(st.sampled_from(grouping))
    t.add(cid, cid, data.draw(PERSON), group=f"grp{gid}" if gid else None)
    if gid is None:
        pool = t.entry(cid)["detail"]["pool"]
        t.hook("initiativeRoll", {"combatant_id": cid,
                                  "roll": foundry_roll(dice(data, pool), DiceSettings())})


def dice(data: st.DataObject, n: int) -> list[int]:
    return data.draw(st.lists(st.integers(1, 6), min_size=n, max_size=n))


def check(t: Table, stable: bool) -> None:
    """Foundry's sort shows the order; a round starts in DP-2 order with groups together;
    with nobody joining (``stable``), the next round has this round's order (DP-5)."""
    plan = t.plan
    details = {e["combatant_id"]: e["detail"] for e in plan["order"]}
    values = {e["combatant_id"]: e["initiative"] for e in plan["order"]}
    order = [e["combatant_id"] for e in plan["order"]]
    assert foundry_sort(values) == order
    for c, v in values.items():  # the floor is the net successes, unless placed below it
        assert v is not None and details[c].get("score", v // 1) == details[c]["successes"]
    if stable:  # a member joining after its group's turn acts alone for the rest of the round
        together(order, details)
    upcoming = plan["next_round"]
    if upcoming is None:
        return
    # DP-2 at every round start: net successes, then base; DP-5: no reroll, same numbers
    fresh = [e["combatant_id"] for e in upcoming["order"]]
    keys = [(details[c]["successes"], details[c]["base"]) for c in fresh]
    assert keys == sorted(keys, reverse=True)
    together(fresh, details)
    up_values = {e["combatant_id"]: e["initiative"] for e in upcoming["order"]}
    assert foundry_sort(up_values) == fresh
    if stable:
        assert fresh == order


def together(order: list[str], details: dict[str, dict[str, Any]]) -> None:
    """DP-6: the members of a group are next to each other."""
    for group in {d.get("group") for d in details.values()} - {None}:
        at = [i for i, c in enumerate(order) if details[c].get("group") == group]
        assert at == list(range(at[0], at[0] + len(at)))
