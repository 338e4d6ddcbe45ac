"""The next round's preview: reused while the round goes the way the preview played it,
computed afresh when anything it reads changed, never stale (adapter/engine/preview.py).

The test suite sets ``preview.CHECK`` (tests/conftest.py): every preview the engine reuses is
compared with one computed afresh, in every test. The tests here show the reuse happens,
that the check catches a cache that ignores something the preview depends on, and drive
random fights under every ruleset with the check on.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter.engine import Hook, Intent, World, preview
from adapter.errors import SidecarError
from tests.decoded import apply
from tests.decoded import hook as hook_message
from tests.decoded import intent as intent_message
from tests.foundry import combat, combatant, current

IDS = ["cmbA000000000000", "cmbB000000000000", "cmbC000000000000", "cmbD000000000000",
       "cmbE000000000000"]
STATS = {"dex": 2, "reaction": 2, "wits": 2, "size": 0, "pool_modifier": 0, "initiative_mod": 1}
RULESETS = ("foundry-core", "balanced-d20", "dice-pool", "storyteller")


class Fight:
    """One combat driven by hooks as Foundry sends them, and GM intents."""

    def __init__(self, ruleset: str, ids: list[str] = IDS[:4]) -> None:
        self.people = [combatant(cid, cid[3], stats=dict(STATS)) for cid in ids]
        self.world = World(world="w", ruleset=ruleset, gm_users=frozenset({"gm"}))
        self.round = 0
        self.plan: dict[str, Any] = {}
        self.hook("createCombat", None)
        for score, cid in zip((18, 15, 12, 9, 6), ids):
            self.intent("initiative.set", cid, {"value": score})

    def data(self) -> dict[str, Any]:
        return {**combat("c1", self.people), "round": self.round}

    def send(self, message: Hook | Intent) -> bool:
        try:
            out = apply(self.world, message)
        except SidecarError:
            self.world = World(**{**self.world.__dict__, "last_seq": message.seq})
            return False
        self.world = out.world
        if out.plans:
            self.plan = out.plans[-1]
        return True

    def hook(self, name: str, who: str | None) -> bool:
        seq = self.world.last_seq + 1
        return self.send(hook_message(seq, "gm", seq, name, self.data(), current(self.round, who)))

    def intent(self, kind: str, cid: str, args: dict[str, Any]) -> bool:
        seq = self.world.last_seq + 1
        return self.send(intent_message(seq, "gm", seq, kind, "c1", cid, args))

    def to(self, round_: int, who: str | None) -> None:
        self.round = round_
        self.hook("updateCombat", who)

    def next_turn(self) -> None:
        """The module's "next turn": the combatant after the current one, or the next round."""
        order = [e["combatant_id"] for e in self.plan["order"]]
        now = self.plan["current"]
        later = order[order.index(now) + 1:] if now in order else []
        if self.round == 0 or not later:
            self.to(self.round + 1, None)
        else:
            self.to(self.round, later[0])


def test_a_turn_moving_on_reuses_the_preview_without_playing_the_round(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(preview, "CHECK", False)
    fight = Fight("foundry-core")
    fight.next_turn()  # round 1 begins: the preview is computed
    computed: list[int] = []
    real = preview._compute

    def counted(*args: Any) -> preview.Cache:
        computed.append(1)
        return real(*args)

    monkeypatch.setattr(preview, "_compute", counted)
    shown = fight.plan["next_round"]
    for _ in range(3):
        fight.next_turn()
        assert fight.plan["next_round"] == shown
    assert computed == []
    fight.next_turn()  # round 2: computed once
    assert fight.plan["round"] == 2 and computed == [1]


def test_a_change_the_preview_reads_computes_it_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    fight = Fight("foundry-core")
    fight.next_turn()
    fight.next_turn()
    assert fight.plan["next_round"]["current"] == IDS[0]
    fight.people[0]["is_defeated"] = True  # A (its turn over) will not act next round
    fight.hook("updateCombatant", fight.plan["current"])
    assert fight.plan["next_round"]["current"] == IDS[1]
    assert fight.plan["next_round"]["order"][0]["acts"] == "none"


def leave_out_of_the_key(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """A broken cache key: the preview's state without one field of the combat."""
    kept = tuple(n for n in preview._STATE if n != name)
    monkeypatch.setattr(preview, "_STATE", kept)
    monkeypatch.setattr(preview, "_STATE_OF", attrgetter(*kept))


def test_the_check_catches_a_cache_that_ignores_what_the_preview_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same defeat with a cache key that leaves the combatants out: the reused preview
    is stale, and the check (on in every test) says so."""
    leave_out_of_the_key(monkeypatch, "combatants")
    fight = Fight("foundry-core")
    fight.next_turn()
    fight.next_turn()
    fight.people[0]["is_defeated"] = True
    with pytest.raises(AssertionError, match="stale next-round preview"):
        apply(fight.world, hook_message(fight.world.last_seq + 1, "gm", 0, "updateCombatant",
                                        fight.data(), current(fight.round, fight.plan["current"])))


def test_the_check_catches_a_stale_preview_along_the_trail_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """One hook moves the turn on and defeats the combatant the next round starts with: with
    the combatants left out of the key, the trail's turn matches, and the check says so."""
    leave_out_of_the_key(monkeypatch, "combatants")
    fight = Fight("foundry-core")
    fight.next_turn()
    fight.people[0]["is_defeated"] = True
    with pytest.raises(AssertionError, match="stale next-round preview"):
        apply(fight.world, hook_message(fight.world.last_seq + 1, "gm", 0, "updateCombat",
                                        {**fight.data(), "round": 1}, current(1, IDS[1])))


STEPS = st.sampled_from(
    ["next"] * 8 + ["jump", "back", "previous_round", "reset", "next_round", "defeat",
                    "score", "join", "leave", "repeat"]
)


@pytest.mark.parametrize("ruleset", RULESETS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_fights_never_show_a_stale_preview(ruleset: str, data: st.DataObject) -> None:
    """Random fights with the check on: every reused preview equals a fresh one (a stale one
    raises AssertionError out of ``apply``)."""
    fight = Fight(ruleset)
    for step in data.draw(st.lists(STEPS, min_size=5, max_size=40)):
        play(fight, step, data)
        c = fight.world.combats.get("c1")
        if c is not None and c.order:  # the plan shows the preview the combat carries
            assert fight.plan["next_round"] == c.preview_cache.view


def play(fight: Fight, step: str, data: st.DataObject) -> None:
    ids = [p["_id"] for p in fight.people]
    if step == "next" and fight.plan:
        fight.next_turn()
    elif step == "jump" and ids:
        fight.to(max(fight.round, 1), data.draw(st.sampled_from(ids)))
    elif step == "back" and fight.plan.get("current") in ids:
        order = [e["combatant_id"] for e in fight.plan["order"]]
        at = order.index(fight.plan["current"])
        fight.to(fight.round, order[max(0, at - 1)])
    elif step == "previous_round" and fight.round > 1:
        fight.to(fight.round - 1, data.draw(st.sampled_from([None, *ids])))
    elif step == "reset":
        fight.to(0, None)
    elif step == "next_round":
        fight.to(fight.round + 1, None)
    elif step == "defeat" and ids:
        person = data.draw(st.sampled_from(fight.people))
        person["is_defeated"] = not person["is_defeated"]
        fight.hook("updateCombatant", fight.plan.get("current"))
    elif step == "score" and ids:
        fight.intent("initiative.set", data.draw(st.sampled_from(ids)),
                     {"value": data.draw(st.integers(1, 25))})
    elif step == "join" and len(ids) < len(IDS):
        cid = next(i for i in IDS if i not in ids)
        fight.people.append(combatant(cid, cid[3], stats=dict(STATS)))
        fight.hook("createCombatant", fight.plan.get("current"))
    elif step == "leave" and len(ids) > 1:
        gone = data.draw(st.sampled_from(ids))
        fight.people = [p for p in fight.people if p["_id"] != gone]
        fight.hook("deleteCombatant", fight.plan.get("current"))
    elif step == "repeat":
        fight.hook("updateCombat", fight.plan.get("current"))
