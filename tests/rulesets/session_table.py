"""A randomized session's table for any ruleset, over the one test table
(``tests/support/table.py``) and the sidecar's real store.

Every message goes through :meth:`adapter.service.Worlds.handle` (``pipeline.process``:
schema, engine, ack; then SQLite), as the server sends it; Foundry's part and the module's
(the roster, the plan written into it, "next turn" steered as the module steers it) are the
one table's. Observations the properties need are kept as it goes: the plans emitted, who
was current at each "next turn", what excused a missed turn.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from adapter.engine import World
from adapter.pipeline import Result
from adapter.replay import Replay, replay_lines
from adapter.rulesets import RULESETS
from adapter.service import Worlds
from adapter.store import Store
from adapter.store.snapshots import Codec
from tests.foundry import combatant, d10_roll, d20_roll, dnd5e_d20, pool_roll
from tests.support.table import GM, Fight, foundry_order
from tests.support.table import Table as OneTable

#: reads the snapshots of every built-in ruleset's worlds
CODEC = Codec(RULESETS.values())

__all__ = ["COMBAT", "GM", "PLAYERS", "ROLLS", "Table", "foundry_order"]

WORLD = "propWorld0000001"
COMBAT = "propCombat000001"
PLAYERS = ("playerOne0000001", "playerTwo0000001")

#: Foundry's roll for each ruleset: natural die (or the dice), modifier
ROLLS: dict[str, Callable[[Any, int], dict[str, Any]]] = {
    "foundry-core": lambda die, mod: d20_roll(die, mod),
    "balanced-d20": lambda die, mod: dnd5e_d20(die, mod),
    "storyteller": lambda die, mod: d10_roll(die, mod),
    "dice-pool": lambda dice, _mod: pool_roll(list(dice)),
}


class Table:
    """The one table (:attr:`table`) with the store behind it and the session's observations."""

    def __init__(self, ruleset: str, settings: dict[str, Any] | None = None, *,
                 snapshot_every: int = 1000) -> None:
        self.ruleset = ruleset
        self.store = Store(":memory:", codec=CODEC)
        self.worlds = Worlds(self.store, snapshot_every=snapshot_every, rulesets=RULESETS)
        self.table = OneTable(ruleset, settings, world=WORLD, combat_id=COMBAT, through=self._handle)
        self.table.refusals = "ack"
        self.worlds.connect(self.table.session)
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
        #: the plan's (round, current) after the last accepted message

    def _handle(self, world: World, event: str, payload: Any) -> Result:
        return self.worlds.handle(WORLD, event, payload)

    # ------------------------------------------------------------ the world

    @property
    def fight(self) -> Fight:
        return self.table.at

    @property
    def world(self) -> World:
        return self.table.world

    @property
    def seq(self) -> int:
        return self.table.seq

    @property
    def time(self) -> float:
        return self.table.time

    @time.setter
    def time(self, value: float) -> None:
        self.table.time = value

    @property
    def round(self) -> int:
        return self.fight.round

    @property
    def pointer(self) -> str | None:
        return self.fight.pointer

    @property
    def roster(self) -> list[dict[str, Any]]:
        return self.fight.roster

    @property
    def groups(self) -> list[dict[str, Any]]:
        return self.fight.groups

    @property
    def plan(self) -> dict[str, Any] | None:
        return self.fight.plan

    def ids(self) -> list[str]:
        return self.fight.ids()

    def person(self, cid: str) -> dict[str, Any]:
        return self.fight.person(cid)

    # ------------------------------------------------------------ sending

    def sent(self, ack: dict[str, Any], *, turn_press: bool = False) -> dict[str, Any]:
        """After a message: count a refusal, or note what the accepted one emitted."""
        if not ack["ok"]:
            self.refusals[ack["error"]["code"]] += 1
            return ack
        for name, emitted in self.table.emits:
            if name == "plan":
                self.plans.append(emitted)
        for notice in ack["notices"]:
            if notice["kind"] == "readied.declared":
                self.readied_ids.append(notice["readied_id"])
        self.observe(turn_press)
        return ack

    def hook(self, name: str, roll: dict[str, Any] | None = None, *, user: str = GM) -> dict[str, Any]:
        return self.sent(self.table.hook(name, roll, user=user))

    def intent(self, kind: str, args: dict[str, Any], *, user: str = GM, cid: str | None = None,
               in_combat: bool = True) -> dict[str, Any]:
        return self.sent(self.table.ask(kind, cid, args, user=user, in_combat=in_combat))

    # ------------------------------------------------------------ Foundry's part

    def add(self, cid: str, name: str, stats: dict[str, Any], *, owner: str | None,
            group: str | None = None) -> dict[str, Any]:
        self.joined.append(cid)
        person = combatant(cid, name, owners=(owner,) if owner else (), npc=owner is None,
                           stats=stats, group=group)
        return self.resequence(self.sent(self.table.join(person)), cid)

    def group(self, gid: str) -> None:
        self.table.add_group(gid)

    def roll(self, target: str, roll: dict[str, Any], *, group: bool = False, user: str = GM,
             reroll_of: str | None = None) -> dict[str, Any]:
        message = self.table.roll_message(roll, group_id=target if group else None,
                                          cid=None if group else target, reroll_of=reroll_of, user=user)
        ack = self.sent(self.table.send(message))
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
        ack = self.sent(self.table.leave(cid))
        return self.resequence(ack, *[c for c in self.ids() if group and self.person(c)["group"] == group])

    def start(self) -> dict[str, Any]:
        return self.sent(self.table.start(), turn_press=True)

    def next_turn(self) -> dict[str, Any]:
        """The GM's "next turn" (the one table's, steered as the module steers it)."""
        plan = self.plan
        assert plan is not None and self.round > 0
        if plan["current"] is not None:
            self.taken[(self.round, plan["current"])] += 1
        return self.sent(self.table.next_turn(), turn_press=True)

    def observe(self, turn_press: bool) -> None:
        """After an accepted message (the module wrote the plan): note the excuses."""
        plan = self.plan
        if plan is None:
            return
        for e in plan["order"]:
            if e["acts"] in self.table.skipped:
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
        moved below it has another turn: the rescored one, or one it jumped over (the module
        leaves Foundry's pointer where it is when the plan names no current, and "next turn"
        goes on from there). Foundry's behaviour, so nobody's fault."""
        if self.ruleset != "foundry-core" or self.round == 0:
            return
        for other in self.ids():
            self.excused.add((self.round, other))
            self.repeats.add((self.round, other))

    # ------------------------------------------------------------ the stored log

    def stored_lines(self) -> list[str]:
        """The world's stored log, as ``initiative-sidecar export`` writes it."""
        from adapter.replay import dumps

        return [dumps({"event": e.kind, "data": e.data}) + "\n" for e in self.store.history(WORLD)]

    def replayed_plans(self) -> list[dict[str, Any]]:
        return [out["data"] for out in replay_lines(self.stored_lines(), Replay(rulesets=RULESETS))
                if out["type"] == "emit" and out["event"] == "plan"]

    def restored(self) -> World | None:
        """The world as a restart rebuilds it from the store (snapshot, then the log)."""
        again = Worlds(self.store, rulesets=RULESETS)
        again.load()
        return again.states.get(WORLD)
