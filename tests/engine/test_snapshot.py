"""Reading a snapshot: a hook repeating what the combat holds changes nothing, seen at a glance;
any change the engine reads is still read: the glance and the full read agree, for any
sequence of snapshots (a property test, not a check switched on in every test)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.engine.model import Combat
from adapter.engine.snapshot import _read, read_snapshot
from tests.foundry import combat, combatant, group
from tests.support.examples import examples


def fighters() -> list[dict[str, Any]]:
    return [combatant("cbtAria000000001", "Aria", owners=["player1"]),
            combatant("cbtBrak000000002", "Brak", npc=True, group="grpWolves0000001")]


def known() -> Combat:
    data = combat("cmbSnap000000001", fighters(), groups=[group("grpWolves0000001", "Wolves")])
    read, joined, _ = read_snapshot(Combat(id="cmbSnap000000001", ruleset="foundry-core"), data)
    assert joined == ["cbtAria000000001", "cbtBrak000000002"]
    return read


def test_a_snapshot_repeating_the_combat_gives_the_same_combat_object() -> None:
    before = known()
    data = combat("cmbSnap000000001", fighters(), groups=[group("grpWolves0000001", "Wolves")])
    data["combatants"][0]["initiative"] = 17.0  # not read after first contact
    data["combatants"][1]["flags"] = {"some-module": {"x": 1}}  # not read at all
    assert read_snapshot(before, data) == (before, [], [])


def edit_name(people: list[dict[str, Any]]) -> None:
    people[0]["name"] = "Aria the Bold"


def edit_owners(people: list[dict[str, Any]]) -> None:
    people[1]["owners"] = ["player2"]


def edit_defeated(people: list[dict[str, Any]]) -> None:
    people[1]["is_defeated"] = True


def edit_stats(people: list[dict[str, Any]]) -> None:
    people[0]["stats"] = {"dex": 3}


def swap(people: list[dict[str, Any]]) -> None:
    people.reverse()


@pytest.mark.parametrize("edit", [edit_name, edit_owners, edit_defeated, edit_stats, swap])
def test_a_changed_field_or_listing_is_read(edit: Any) -> None:
    before = known()
    people = fighters()
    edit(people)
    data = combat("cmbSnap000000001", people, groups=[group("grpWolves0000001", "Wolves")])
    after, joined, left = read_snapshot(before, data)
    assert after is not before and (joined, left) == ([], [])
    assert after.roster == tuple(c["_id"] for c in people)
    assert {cid: c.name for cid, c in after.combatants.items()} == {c["_id"]: c["name"] for c in people}


def test_a_renamed_or_dropped_group_is_read() -> None:
    before = known()
    renamed = read_snapshot(before, combat("cmbSnap000000001", fighters(),
                                           groups=[group("grpWolves0000001", "Dire wolves")]))[0]
    assert renamed.groups == {"grpWolves0000001": "Dire wolves"}
    assert read_snapshot(before, combat("cmbSnap000000001", fighters()))[0].groups == {}


def test_a_combatant_leaving_or_joining_is_reported() -> None:
    before = known()
    people = fighters()
    gone = read_snapshot(before, combat("cmbSnap000000001", people[:1],
                                        groups=[group("grpWolves0000001", "Wolves")]))
    assert gone[1:] == ([], ["cbtBrak000000002"])
    people.append(combatant("cbtCyra000000003", "Cyra"))
    came = read_snapshot(before, combat("cmbSnap000000001", people,
                                        groups=[group("grpWolves0000001", "Wolves")]))
    assert came[1:] == (["cbtCyra000000003"], [])


IDS = ("cbtAria000000001", "cbtBrak000000002", "cbtCyra000000003")
#: one combatant as a hook may show it: each field the engine reads, a few values each
SHOWN = st.builds(
    lambda cid, name, owners, hidden, defeated, grp, stats, joined: {
        **combatant(cid, name, owners=owners, hidden=hidden, defeated=defeated, stats=stats, group=grp),
        **({"roundJoined": joined} if joined is not None else {})},
    st.sampled_from(IDS), st.sampled_from(["Aria", "Brak", ""]), st.sampled_from([[], ["player1"], ["player2"]]),
    st.booleans(), st.booleans(), st.sampled_from([None, "grpWolves0000001"]),
    st.sampled_from([None, {"dex": 3}, {"dex": 4}]), st.sampled_from([None, 1, 2]))
SNAPSHOTS = st.builds(
    lambda people, groups: combat("cmbSnap000000001", people, groups=groups),
    st.lists(SHOWN, max_size=3, unique_by=lambda c: c["_id"]),
    st.sampled_from([[], [group("grpWolves0000001", "Wolves")], [group("grpWolves0000001", "Dire wolves")]]))


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(SNAPSHOTS, min_size=1, max_size=6))
def test_a_snapshot_seen_at_a_glance_reads_as_the_full_read_would(hooks: list[dict[str, Any]]) -> None:
    state = Combat(id="cmbSnap000000001", ruleset="foundry-core")
    for data in hooks:
        glance, full = read_snapshot(state, data), _read(state, data)
        assert glance == full
        assert (glance[0] is state) == (full[0] is state)  # unchanged means the very same combat
        state = glance[0]
