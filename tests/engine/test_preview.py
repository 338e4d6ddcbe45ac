"""The next round's preview: reused while the round goes the way the preview played it,
computed afresh when anything it reads changed, never stale (adapter/engine/preview.py).

The engine computes a reused preview once; these tests prove it right. :func:`fresh_beside`
records, beside every preview the engine reuses, the one :func:`preview._compute` gives
afresh from the same context and combat, and the property drives random fights (turns,
jumps, going back, defeats, scores, joins, leaves, the rulesets' own intents) under every
ruleset, and every golden recording, asserting the two are equal. The tests here also show
that the reuse happens and that the comparison catches a cache that ignores something the
preview depends on.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from operator import attrgetter
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from adapter.engine import Hook, Intent, World, preview
from adapter.errors import SidecarError
from adapter.replay import Replay, replay_lines
from adapter.rulesets import RULESETS
from tests.decoded import apply
from tests.decoded import hook as hook_message
from tests.decoded import intent as intent_message
from tests.foundry import combat, combatant, current
from tests.support.examples import examples

IDS = ["cmbA000000000000", "cmbB000000000000", "cmbC000000000000", "cmbD000000000000",
       "cmbE000000000000"]
STATS = {"dex": 2, "reaction": 2, "wits": 2, "size": 0, "pool_modifier": 0, "initiative_mod": 1}
RULESET_IDS = ("foundry-core", "balanced-d20", "dice-pool", "storyteller")


RECORDINGS = sorted(
    p for p in (Path(__file__).parent.parent / "recordings").rglob("*.jsonl")
    if not p.name.endswith(".golden.jsonl")
)

#: a preview the engine reused, and the one computed afresh from the same context and combat
Pair = tuple[dict[str, Any], dict[str, Any]]


@contextmanager
def fresh_beside() -> Iterator[list[Pair]]:
    """Every preview the engine reuses while in the ``with``, beside the one computed afresh
    (:func:`preview._compute` on the context and combat the reuse was asked for: it runs in
    preview mode, which gives the context back as it was)."""
    pairs: list[Pair] = []
    reuse, compute = preview._reuse, preview._compute

    def checked(*args: Any) -> preview.Cache | None:
        kept = reuse(*args)
        if kept is not None:
            pairs.append((kept.view, compute(*args[:-1]).view))
        return kept

    with mock.patch.object(preview, "_reuse", checked):
        yield pairs


def stale(pairs: list[Pair]) -> list[Pair]:
    return [(kept, fresh) for kept, fresh in pairs if kept != fresh]


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
            self.world = replace(self.world, last_seq=message.seq)
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
    monkeypatch.setattr(preview, "_state", attrgetter(*kept))


def test_the_comparison_catches_a_cache_that_ignores_what_the_preview_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same defeat with a cache key that leaves the combatants out: the preview reused is
    stale, and the comparison the property makes says so."""
    leave_out_of_the_key(monkeypatch, "combatants")
    fight = Fight("foundry-core")
    fight.next_turn()
    fight.next_turn()
    fight.people[0]["is_defeated"] = True
    with fresh_beside() as pairs:
        fight.hook("updateCombatant", fight.plan["current"])
    assert len(pairs) == 1 and stale(pairs) == pairs
    assert pairs[0][0]["current"] == IDS[0] and pairs[0][1]["current"] == IDS[1]


def test_the_comparison_catches_a_stale_preview_along_the_trail_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One hook moves the turn on and defeats the combatant the next round starts with: with
    the combatants left out of the key, the trail's turn matches, and the comparison says so."""
    leave_out_of_the_key(monkeypatch, "combatants")
    fight = Fight("foundry-core")
    fight.next_turn()
    fight.people[0]["is_defeated"] = True
    with fresh_beside() as pairs:
        fight.to(1, IDS[1])
    assert len(pairs) == 1 and stale(pairs) == pairs


STEPS = st.sampled_from(
    ["next"] * 8 + ["jump", "back", "previous_round", "reset", "next_round", "defeat",
                    "score", "join", "leave", "repeat", "hold", "act", "dash", "reaction"]
)


@pytest.mark.parametrize("ruleset", RULESET_IDS)
@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(STEPS, min_size=5, max_size=40), data=st.data())
def test_random_fights_reuse_only_the_preview_computed_afresh(
    ruleset: str, steps: list[str], data: st.DataObject,
) -> None:
    """Random fights: every preview reused equals the one computed afresh, and the plan shows
    the preview the combat carries. Each fight begins with two turns moving on, so every
    example reuses a preview at least once."""
    fight = Fight(ruleset)
    with fresh_beside() as pairs:
        for step in ["next", "next", "next", *steps]:
            play(fight, step, data)
            c = fight.world.combats.get("c1")
            if c is not None and c.order:
                assert c.preview_cache is not None
                assert fight.plan["next_round"] == c.preview_cache.view
    assert pairs
    assert stale(pairs) == []


@pytest.mark.parametrize("recording", RECORDINGS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_golden_recording_reuses_only_the_preview_computed_afresh(recording: Path) -> None:
    with fresh_beside() as pairs:
        outputs = list(replay_lines(recording.read_text(encoding="utf-8").splitlines(), Replay(rulesets=RULESETS)))
    assert outputs
    assert stale(pairs) == []


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
    elif step in ("hold", "act", "dash", "reaction") and ids:
        who = data.draw(st.sampled_from([fight.plan.get("current") or ids[0], *ids]))
        if step == "hold":
            fight.intent("hold", who, {"next_round": data.draw(st.booleans())})
        elif step == "act":
            fight.intent("act", who, data.draw(st.sampled_from(
                [{"now": True}, {"after": data.draw(st.sampled_from(ids))},
                 {"before": data.draw(st.sampled_from(ids))}])))
        elif step == "dash":
            fight.intent("dash", who, {"amount": data.draw(st.integers(1, 10))})
        else:
            fight.intent("reaction.use", who, {})
