"""A Foundry table for any ruleset, played through the sidecar's real path and store.

Every message goes through :meth:`adapter.service.Worlds.handle` (``pipeline.process``:
schema, engine, ack; then SQLite), as the server sends it. The table plays Foundry and the
module: it keeps the combat's roster and pointer, writes each plan's initiative numbers into
the roster (as the module does), and presses "next turn" the way Foundry does, skipping the
turns the module skips. Payloads come from the shared builders (``tests/foundry.py``, the
dice-pool and balanced-d20 tables). Observations the properties need are kept as it goes:
the plans emitted, who was current at each "next turn", what excused a missed turn.
"""

from __future__ import annotations

import pickle
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from adapter.engine import World
from adapter.engine.ruleset import SKIPPED_ACTS
from adapter.replay import replay_lines
from adapter.service import Worlds
from adapter.store import Store
from tests.foundry import combat, combatant, current, d10_roll, d20_roll
from tests.rulesets.balanced_d20.bd_table import d20
from tests.rulesets.dice_pool.dp_table import pool_roll

WORLD = "propWorld0000001"
COMBAT = "propCombat000001"
GM = "gmUser0000000001"
PLAYERS = ("playerOne0000001", "playerTwo0000001")

#: Foundry's roll for each ruleset: natural die (or the dice), modifier
ROLLS: dict[str, Callable[[Any, int], dict[str, Any]]] = {
    "foundry-core": lambda die, mod: d20_roll(die, mod),
    "balanced-d20": lambda die, mod: d20(die, mod),
    "storyteller": lambda die, mod: d10_roll(die, mod),
    "dice-pool": lambda dice, _mod: pool_roll(list(dice)),
}


def foundry_order(roster: list[dict[str, Any]]) -> list[str]:
    """Foundry v13 ``Combat#_sortCombatants``, written from the research notes (section 3), not
    from the engine: initiative descending, a non-numeric or null one as -Infinity, ties by
    ``_id`` (``a.id > b.id ? 1 : -1``)."""
    from functools import cmp_to_key

    def value(c: dict[str, Any]) -> float:
        v = c.get("initiative")
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else float("-inf")

    def compare(a: dict[str, Any], b: dict[str, Any]) -> int:
        ia, ib = value(a), value(b)
        if ia != ib:
            return -1 if ib < ia else 1
        return 1 if a["_id"] > b["_id"] else -1

    return [c["_id"] for c in sorted(roster, key=cmp_to_key(compare))]


class Table:
    def __init__(self, ruleset: str, settings: dict[str, Any] | None = None, *,
                 snapshot_every: int = 1000) -> None:
        self.ruleset = ruleset
        self.store = Store(":memory:")
        self.worlds = Worlds(self.store, snapshot_every=snapshot_every)
        self.auth = {"world": WORLD, "ruleset": ruleset, "settings": settings or {},
                     "gm_users": [GM], "protocol": 1, "module_version": "0.1.0",
                     "foundry_version": "13.350", "system": "dnd5e"}
        self.worlds.connect(self.auth)
        self.seq = 0
        self.time = 0.0
        self.round = 0
        self.pointer: str | None = None
        self.roster: list[dict[str, Any]] = []
        self.groups: list[dict[str, Any]] = []
        #: every combatant id ever added (a removed one never comes back)
        self.joined: list[str] = []
        #: every plan emitted, in order (what replay must give again)
        self.plans: list[dict[str, Any]] = []
        #: (round, combatant) -> how many times it was current when "next turn" was pressed
        self.taken: Counter[tuple[int, str]] = Counter()
        #: (round, combatant) whose missed turn something explains (see :meth:`excuse`)
        self.excused: set[tuple[int, str]] = set()
        #: (round, combatant) whose second turn something explains
        self.repeats: set[tuple[int, str]] = set()
        #: the next round as previewed since the last message that was not a "next turn"
        self.preview: dict[str, Any] | None = None
        #: (round, combatant) whose place something but a plain step-in may have changed
        #: that round: a new score, a roster change in its group, a temporary place (DP-5)
        self.resequenced: set[tuple[int, str]] = set()
        #: round starts checked against that preview
        self.previews_checked = 0
        self.sequences_checked = 0
        self.previewed_from = 0
        self.readied_ids: list[str] = []
        self.refusals: Counter[str] = Counter()

    # ------------------------------------------------------------ the world

    @property
    def world(self) -> World:
        state = self.worlds.state(WORLD)
        assert state is not None
        return state

    @property
    def plan(self) -> dict[str, Any] | None:
        c = self.world.combats.get(COMBAT)
        if c is None or c.last_plan is None:
            return None
        return {"combat_id": c.id, "revision": c.revision, **c.last_plan}

    def ids(self) -> list[str]:
        return [c["_id"] for c in self.roster]

    def person(self, cid: str) -> dict[str, Any]:
        return next(c for c in self.roster if c["_id"] == cid)

    # ------------------------------------------------------------ sending

    def send(self, event: str, body: dict[str, Any], *, turn_press: bool = False) -> dict[str, Any]:
        """One message through the service. A refused one must change nothing but ``last_seq``."""
        self.seq += 1
        payload = {"seq": self.seq, "world_time": self.time, **body}
        before = pickle.dumps(self.world)
        result = self.worlds.handle(WORLD, event, payload)
        ack = result.ack
        if not ack["ok"]:
            assert ack["error"]["code"] != "internal_error", ack["error"]
            assert result.world == replace(pickle.loads(before), last_seq=self.seq), ack["error"]
            assert not result.emits
            self.refusals[ack["error"]["code"]] += 1
            return ack
        for name, emitted in result.emits:
            if name == "plan":
                self.plans.append(emitted)
        for notice in ack["notices"]:
            if notice["kind"] == "readied.declared":
                self.readied_ids.append(notice["readied_id"])
        self.observe(turn_press)
        return ack

    def hook(self, name: str, roll: dict[str, Any] | None = None, *, user: str = GM,
             turn_press: bool = False) -> dict[str, Any]:
        snapshot = combat(COMBAT, self.roster, self.round)
        snapshot["groups"] = self.groups
        body: dict[str, Any] = {"user": user, "hook": name, "combat": snapshot,
                                "current": current(self.round, self.pointer)}
        if roll is not None:
            body["roll"] = roll
        return self.send("hook", body, turn_press=turn_press)

    def intent(self, kind: str, args: dict[str, Any], *, user: str = GM, cid: str | None = None,
               in_combat: bool = True) -> dict[str, Any]:
        body: dict[str, Any] = {"user": user, "kind": kind, "args": args}
        if in_combat:
            body["combat_id"] = COMBAT
        if cid is not None:
            body["combatant_id"] = cid
        return self.send("intent", body)

    # ------------------------------------------------------------ Foundry's part

    def add(self, cid: str, name: str, stats: dict[str, Any], *, owner: str | None,
            group: str | None = None) -> dict[str, Any]:
        self.joined.append(cid)
        self.roster.append(combatant(cid, name, owners=(owner,) if owner else (), npc=owner is None,
                                     stats=stats, group=group))
        return self.resequence(self.hook("createCombatant" if self.world.combats else "createCombat"), cid)

    def group(self, gid: str) -> None:
        self.groups.append({"_id": gid, "type": "base", "system": {}, "name": gid, "img": None,
                            "initiative": None, "ownership": {"default": 0}, "flags": {}})

    def roll(self, target: str, roll: dict[str, Any], *, group: bool = False, user: str = GM,
             reroll_of: str | None = None) -> dict[str, Any]:
        data: dict[str, Any] = {"group_id" if group else "combatant_id": target, "roll": roll}
        if reroll_of is not None:
            data["reroll_of"] = reroll_of
        ack = self.hook("initiativeRoll", data, user=user)
        rolled = [c for c in self.ids() if self.person(c)["group"] == target] if group else [target]
        self.resequence(ack, *rolled)
        if ack["ok"]:
            for cid in rolled:
                self.rescored(cid)
        return ack

    def set_initiative(self, cid: str, value: float, *, user: str = GM) -> dict[str, Any]:
        ack = self.resequence(self.intent("initiative.set", {"value": value}, user=user, cid=cid), cid)
        if ack["ok"]:
            self.rescored(cid)
        return ack

    def defeat(self, cid: str, defeated: bool) -> dict[str, Any]:
        person = self.person(cid)
        person["defeated"] = person["is_defeated"] = defeated
        return self.hook("updateCombatant")

    def remove(self, cid: str) -> dict[str, Any]:
        group = self.person(cid)["group"]
        self.roster = [c for c in self.roster if c["_id"] != cid]
        ack = self.hook("deleteCombatant")
        return self.resequence(ack, *[c for c in self.ids() if group and self.person(c)["group"] == group])

    def start(self) -> dict[str, Any]:
        plan = self.plan
        self.round = 1
        self.pointer = plan["next_round"]["current"] if plan and plan["next_round"] else None
        return self.hook("combatStart", turn_press=True)

    def next_turn(self) -> dict[str, Any]:
        """Foundry's "next turn": the next combatant the module does not skip, or a new round."""
        plan = self.plan
        assert plan is not None and self.round > 0
        if plan["current"] is not None:
            self.taken[(self.round, plan["current"])] += 1
        order = [e["combatant_id"] for e in plan["order"]]
        after = order[order.index(self.pointer) + 1:] if self.pointer in order else []
        acting = [e["combatant_id"] for e in plan["order"]
                  if e["combatant_id"] in after and e["acts"] not in SKIPPED_ACTS]
        if acting and plan["current"] is not None:
            self.pointer = acting[0]
            return self.hook("combatTurn", turn_press=True)
        self.round += 1
        self.time += 6
        self.pointer = plan["next_round"]["current"] if plan["next_round"] else None
        return self.hook("combatRound", turn_press=True)

    def observe(self, turn_press: bool) -> None:
        """After an accepted message: the module writes the plan; note the excuses."""
        plan = self.plan
        if plan is None:
            return
        self.pointer = plan["current"]
        written = {e["combatant_id"]: e["initiative"] for e in plan["order"]}
        for person in self.roster:
            person["initiative"] = written.get(person["_id"])
        for e in plan["order"]:
            if e["acts"] in SKIPPED_ACTS:
                self.excused.add((plan["round"], e["combatant_id"]))
        if turn_press and self.preview is not None and plan["round"] == self.preview["round"]:
            # nothing but "next turn" since the preview: the round is what it said
            got = {"round": plan["round"], "current": plan["current"],
                   "order": [{k: e[k] for k in ("combatant_id", "initiative", "acts")}
                             for e in plan["order"]]}
            assert got == self.preview, (self.preview, got)
            self.previews_checked += 1
        if not turn_press or plan["round"] != self.previewed_from:
            self.preview = plan["next_round"]
            self.previewed_from = plan["round"]

    def resequence(self, ack: dict[str, Any], *cids: str) -> dict[str, Any]:
        """An accepted message that may move these combatants at the next round start (and
        every member of their groups: a group sorts by its smallest member id, DP-6)."""
        if ack["ok"]:
            groups = {self.person(c)["group"] for c in cids if c in self.ids()} - {None}
            moved = set(cids) | {c for c in self.ids() if self.person(c)["group"] in groups}
            self.resequenced.update((self.round, c) for c in moved)
        return ack

    def excuse(self, cid: str) -> None:
        """Something took this round's turn away from ``cid``."""
        self.excused.add((self.round, cid))

    def rescored(self, cid: str) -> None:
        """``foundry-core`` re-sorts a new score mid-round as Foundry does, which keeps the
        pointer on the current combatant: the turns it jumps over are lost, and a combatant
        moved below it has another turn. Foundry's behaviour, so nobody's fault."""
        if self.ruleset != "foundry-core" or self.round == 0:
            return
        for other in self.ids():
            self.excused.add((self.round, other))
        self.repeats.add((self.round, cid))

    # ------------------------------------------------------------ the stored log

    def stored_lines(self) -> list[str]:
        """The world's stored log, as ``initiative-sidecar export`` writes it."""
        from adapter.replay import dumps

        return [dumps({"event": e.kind, "data": e.data}) + "\n" for e in self.store.history(WORLD)]

    def replayed_plans(self) -> list[dict[str, Any]]:
        return [out["data"] for out in replay_lines(self.stored_lines())
                if out["type"] == "emit" and out["event"] == "plan"]

    def restored(self) -> World | None:
        """The world as a restart rebuilds it from the store (snapshot, then the log)."""
        again = Worlds(self.store)
        again.load()
        return again.state(WORLD)
