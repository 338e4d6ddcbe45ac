"""Randomized combats under `balanced-d20`, legal and illegal intents mixed, through the same
pipeline the server uses (schemas in and out), checking after every message:

- the plan's order (and the next round's) reproduces under Foundry's own sort;
- no combatant is offered a clever reroll once it has made or declined one, nor granted a
  second (BI-2: only a reroll made, or a decline, uses up the "once");
- a dashed combatant has no reaction until its first turn after the dashed one (BI-4);
- a refused message changes nothing but ``last_seq`` (the one test table checks it);
- the engine never fails (no ``internal_error``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter.engine import World
from adapter.rulesets.balanced_d20.state import fighter
from tests.foundry import combatant, foundry_sort
from tests.rulesets.balanced_d20.bd_table import COMBAT, GM, d20
from tests.support.examples import examples
from tests.support.table import Table

PLAYERS = ("playerOne0000001", "playerTwo0000001")
USERS = (GM, *PLAYERS)
SKILLS = ("insight", "sleight_of_hand", "perception")
IDS = ("cmbAlpha00000001", "cmbBravo00000001", "cmbCharlie000001", "cmbDelta00000001",
       "cmbEcho000000001")


@st.composite
def rosters(draw: st.DrawFn) -> list[dict[str, Any]]:
    n = draw(st.integers(2, 5))
    roster = []
    for cid in IDS[:n]:
        npc = draw(st.booleans())
        owners = () if npc else (draw(st.sampled_from(PLAYERS)),)
        roster.append(combatant(
            cid, cid[3:].rstrip("0"), owners=owners, npc=npc, actor="act" + cid[3:], token="tok" + cid[3:],
            stats={"dex": draw(st.integers(-6, 4)), "int": draw(st.integers(-1, 9)),
                   "proficient": draw(st.lists(st.sampled_from(SKILLS), unique=True))}))
    return roster


class Run:
    """The one test table (``tests/support/table.py``) with the run's bookkeeping."""

    def __init__(self, roster: list[dict[str, Any]], auto: bool) -> None:
        self.table = Table("balanced-d20", {"auto_approve_rerolls": auto}, world="prop", combat_id=COMBAT)
        self.table.refusals = "ack"  # the table checks a refusal changed nothing but last_seq
        self.table.at.roster.extend(roster)
        #: combatants offered a reroll after they had made or declined one
        self.offered_again: list[str] = []
        #: who made or declined a reroll; the combatant each reroll offer was for
        self.used: set[str] = set()
        self.offer_of: dict[str, str] = {}
        self.rerolled: Counter[str] = Counter()
        self.prompt_ids: list[str] = []
        self.readied_ids: list[str] = []
        #: combatant -> the last round it dashed for (no reaction until a turn after it)
        self.blocked: dict[str, int] = {}

    @property
    def world(self) -> World:
        return self.table.world

    @property
    def roster(self) -> list[dict[str, Any]]:
        return self.table.at.roster

    @property
    def round(self) -> int:
        return self.table.at.round

    @property
    def pointer(self) -> str | None:
        return self.table.at.pointer

    @property
    def plan(self) -> dict[str, Any] | None:
        return self.table.at.plan

    # ------------------------------------------------------------ messages

    def sent(self, ack: dict[str, Any]) -> dict[str, Any]:
        if ack["ok"]:
            self.observe(self.table.sent[-1]["data"], ack)
        self.check()
        return ack

    def hook(self, name: str, roll: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.sent(self.table.hook(name, roll))

    def intent(self, kind: str, user: str, cid: str | None, args: dict[str, Any],
               combat: bool = True) -> dict[str, Any]:
        return self.sent(self.table.ask(kind, cid, args, user=user, in_combat=combat))

    def start(self) -> None:
        self.sent(self.table.start())

    def next_turn(self) -> None:
        if self.plan is None or self.round == 0:
            return
        self.sent(self.table.next_turn())

    # ------------------------------------------------------------ bookkeeping and checks

    def observe(self, payload: dict[str, Any], ack: dict[str, Any]) -> None:
        for prompt in ack["prompts"]:
            self.prompt_ids.append(prompt["prompt_id"])
            if prompt["kind"] == "reroll":
                if prompt["combatant_id"] in self.used:
                    self.offered_again.append(prompt["combatant_id"])
                self.offer_of[prompt["prompt_id"]] = prompt["combatant_id"]
        args = payload.get("args") or {}
        if payload.get("kind") == "reroll.decide" and args.get("accept") is False:
            self.used.add(self.offer_of[args["prompt_id"]])
        for notice in ack["notices"]:
            if notice["kind"] == "readied.declared":
                self.readied_ids.append(notice["readied_id"])
            if notice["kind"] == "dash":
                cid = notice["combatant_id"]
                self.blocked[cid] = max(self.blocked.get(cid, 0), notice["round"])
        roll = payload.get("roll")
        if roll is not None and roll.get("reroll_of"):
            self.rerolled[roll["combatant_id"]] += 1
            self.used.add(roll["combatant_id"])
        plan = self.plan
        if (plan is not None and plan["current"] in self.blocked
                and plan["round"] > self.blocked[plan["current"]]):
            del self.blocked[plan["current"]]

    def check(self) -> None:
        assert not self.offered_again, self.offered_again
        assert all(n <= 1 for n in self.rerolled.values()), self.rerolled
        plan = self.plan
        if plan is None:
            return
        order = [e["combatant_id"] for e in plan["order"]]
        assert foundry_sort({e["combatant_id"]: e["initiative"] for e in plan["order"]}) == order
        upcoming = plan["next_round"]
        if upcoming is not None:
            up = [e["combatant_id"] for e in upcoming["order"]]
            assert foundry_sort({e["combatant_id"]: e["initiative"] for e in upcoming["order"]}) == up
        for entry in plan["order"]:
            if entry["combatant_id"] in self.blocked:
                assert entry["reaction"] == {"available": False, "reason": "dashed"}, entry


ACTIONS = ("roll", "start", "start", "next", "next", "next", "dash", "dash", "decide", "decide",
           "approve", "approve", "reroll", "reroll", "reaction", "declare", "declare", "trigger",
           "trigger", "opposed", "opposed", "set", "ready")


def pick_prompt(run: Run, data: st.DataObject, kind: str) -> tuple[str, str | None]:
    """Mostly a pending prompt of ``kind`` (legal), sometimes any id seen (often illegal)."""
    pending = [p for p in run.world.prompts.values() if p.kind == kind]
    if pending and data.draw(st.integers(0, 4)) > 0:
        chosen = data.draw(st.sampled_from(pending))
        return chosen.prompt_id, chosen.combatant_id
    return data.draw(st.sampled_from(run.prompt_ids or ["prompt-0.1"])), None


def step(run: Run, data: st.DataObject) -> None:
    action = data.draw(st.sampled_from(ACTIONS))
    ids = [c["_id"] for c in run.roster]
    cid = data.draw(st.sampled_from(ids))
    owners = next(c["owners"] for c in run.roster if c["_id"] == cid)
    rightful = data.draw(st.integers(0, 3)) > 0  # mostly the user the rules expect
    gm_only = action in ("approve", "opposed", "set", "ready")
    user = (GM if gm_only or not owners else owners[0]) if rightful else data.draw(st.sampled_from(USERS))
    if action == "roll":
        run.hook("initiativeRoll", {"combatant_id": cid, "roll": d20(
            data.draw(st.integers(1, 20)), data.draw(st.integers(-2, 6)))})
    elif action == "reroll":
        asked, who = pick_prompt(run, data, "reroll.roll")
        prompt = run.world.prompts.get(asked)
        offer = prompt.data.get("reroll_of", asked) if prompt is not None else asked
        run.hook("initiativeRoll", {"combatant_id": who or cid, "reroll_of": offer,
                                    "roll": d20(data.draw(st.integers(1, 20)), 2)})
    elif action == "start" and run.round == 0:
        run.start()
    elif action == "next":
        run.next_turn()
    elif action == "dash":
        run.intent("dash", user, cid, {"amount": data.draw(st.integers(-1, 10))})
    elif action == "decide":
        prompt_id, _ = pick_prompt(run, data, "reroll")
        run.intent("reroll.decide", user, None, {"prompt_id": prompt_id,
                                                 "accept": data.draw(st.booleans())})
    elif action == "approve":
        prompt_id, _ = pick_prompt(run, data, "reroll.approval")
        run.intent("reroll.approve", user, None, {"prompt_id": prompt_id,
                                                  "approve": data.draw(st.booleans())})
    elif action == "reaction":
        run.intent("reaction.use", user, cid, {})
    elif action == "declare":
        args: dict[str, Any] = {"mode": data.draw(st.sampled_from(["standard", "preemptive"])), "trigger": "t",
                "action": "a", "target_id": data.draw(st.sampled_from(ids))}
        run.intent("readied.declare", user, run.pointer or cid, args)
    elif action == "trigger":
        held = [(r.readied_id, c.id) for c in run.world.combats[COMBAT].combatants.values()
                if (r := fighter(c).readied) is not None]
        if held and rightful:
            readied, cid = data.draw(st.sampled_from(held))
        else:
            readied = data.draw(st.sampled_from(run.readied_ids or ["readied-0.1"]))
        run.intent("readied.trigger", user, cid, {"readied_id": readied})
    elif action == "opposed":
        prompt_id, _ = pick_prompt(run, data, "opposed_check")
        run.intent("opposed.result", user, None, {"prompt_id": prompt_id,
                                                  "actor_total": data.draw(st.integers(0, 25)),
                                                  "target_total": data.draw(st.integers(0, 25))})
    elif action == "set":
        run.intent("initiative.set", user, cid, {"value": data.draw(st.integers(-3, 25))})
    elif action == "ready":
        kind = data.draw(st.sampled_from(["ready.start", "ready.confirm", "ready.break"]))
        args = {"actor_id": "act" + cid[3:]}
        if kind == "ready.start":
            args.update(token_id="tok" + cid[3:], owners=owners,
                        watching=["tok" + i[3:] for i in data.draw(st.lists(st.sampled_from(ids)))],
                        sees=rightful, weapon_ready=True)
        elif kind == "ready.break":
            args["reason"] = "moves"
        run.intent(kind, user, None, args, combat=False)


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(roster=rosters(), auto=st.booleans(), data=st.data())
def test_random_combats_keep_the_invariants(roster: list[dict[str, Any]], auto: bool,
                                            data: st.DataObject) -> None:
    run = Run(roster, auto)
    run.hook("createCombat")
    # everyone rolls before the combat can start: an unrolled combatant whose turn is in
    # progress keeps its place, which no initiative number can show (null sorts last)
    for cid in [c["_id"] for c in roster]:
        run.hook("initiativeRoll", {"combatant_id": cid, "roll": d20(
            data.draw(st.integers(1, 20)), data.draw(st.integers(-1, 5)))})
    for _ in range(data.draw(st.integers(20, 60))):
        step(run, data)
