"""Long, seeded game sessions for the reliability tests, built like a table plays them.

A :class:`Table` is the module at one Foundry table: it keeps Foundry's combats and pointer,
numbers what it sends, and follows each plan it gets back (the pointer moves to the plan's
``current``; the GM's "next turn" moves along the plan's order, skipping the turns the module
skips; past the last one the round changes). The answers come from the same pipeline the
server runs (:func:`adapter.pipeline.process`), in memory, so the session is realistic and
its uninterrupted outcome is known: :class:`Reference` keeps, for every ``seq``, the ack and
the world after it.

Only hooks and the intents whose shape is stable are used: ``initiative.set`` (the GM),
``hold``/``act`` (storyteller, dice-pool) and the clever-reroll flow (balanced-d20).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from adapter.engine import World
from adapter.pipeline import duplicate_ack, open_session, process
from tests.foundry import STATS, d10_roll, d20_roll

GM = "gmUser0000000001"
RULESETS = ("foundry-core", "balanced-d20", "dice-pool", "storyteller")
SKIPPED = frozenset({"none", "defend_only", "held"})


def session_data(world: str, ruleset: str) -> dict[str, Any]:
    return {"world": world, "ruleset": ruleset, "settings": {}, "gm_users": [GM], "protocol": 1,
            "module_version": "0.1.0", "foundry_version": "13.350", "system": "dnd5e"}


def pool_roll(dice: list[int]) -> dict[str, Any]:
    """``Roll#toJSON()`` of ``{n}d6cs>=4df=1`` showing ``dice`` (dice-pool, DP-1/DP-3)."""
    results = []
    for face in dice:
        if face == 1:
            results.append({"result": 1, "active": True, "count": -1, "failure": True})
        else:
            results.append({"result": face, "active": True, "success": face >= 4,
                            "count": 1 if face >= 4 else 0})
    return {"class": "Roll", "options": {}, "dice": [], "formula": f"{len(dice)}d6cs>=4df=1",
            "terms": [{"class": "Die", "options": {}, "evaluated": True, "number": len(dice),
                       "faces": 6, "modifiers": ["cs>=4", "df=1"], "results": results}],
            "total": sum(r["count"] for r in results), "evaluated": True}


@dataclass
class Reference:
    """An uninterrupted run of one world: the messages, and the ack and world after each."""

    world: str
    ruleset: str
    messages: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    acks: list[dict[str, Any]] = field(default_factory=list)
    worlds: list[World] = field(default_factory=list)  # worlds[i] = after seq i (0: the session)

    def state_at(self, seq: int) -> dict[str, Any]:
        """What a duplicate ack for ``seq`` carries once the world is at ``last_seq``."""
        return state_of(self.worlds[len(self.worlds) - 1 if seq < 0 else seq])

    @property
    def final(self) -> dict[str, Any]:
        return state_of(self.worlds[-1])

    def refused(self) -> int:
        return sum(1 for ack in self.acks if not ack["ok"])


def state_of(world: World) -> dict[str, Any]:
    """Every plan and every pending prompt of a world, as :func:`read_state` reads them."""
    acks = [duplicate_ack(world, max(world.last_seq, 1), probe(world.last_seq, cid)) for cid in world.combats]
    return merged(acks)


def probe(seq: int, combat_id: str) -> dict[str, Any]:
    """A duplicate of ``seq`` naming one combat: its ack carries that combat's plan and prompts."""
    return {"seq": max(seq, 1), "user": GM, "world_time": 0, "hook": "updateCombat", "combat": {"_id": combat_id}}


def merged(acks: list[dict[str, Any]]) -> dict[str, Any]:
    plans = {p["combat_id"]: p for a in acks for p in a["plans"]}
    prompts = {p["prompt_id"]: p for a in acks for p in a["prompts"]}
    return {"plans": [plans[k] for k in sorted(plans)], "prompts": [prompts[k] for k in sorted(prompts)]}


async def read_state(ask: Callable[[str, dict[str, Any]], Awaitable[Any]], seq: int,
                     combat_ids: Iterable[str]) -> dict[str, Any]:
    """Every plan and pending prompt of the combats named, read over the wire with one
    duplicate per combat (a duplicate ack carries the combat its message names)."""
    acks = []
    for cid in combat_ids:
        ack = await ask("hook", probe(seq, cid))
        assert ack["duplicate"] is True, ack
        acks.append(ack)
    return merged(acks)


def combats_of(world: World) -> list[dict[str, Any]]:
    return [{"combat_id": c.id, "revision": c.revision} for c in world.combats.values()]


class Table:
    def __init__(self, world: str, ruleset: str, rng: random.Random) -> None:
        self.rng = rng
        self.ruleset = ruleset
        self.state = open_session(None, session_data(world, ruleset))
        self.ref = Reference(world, ruleset, worlds=[self.state])
        self.time = 0.0
        self.made = 0
        self.prompts: dict[str, dict[str, Any]] = {}

    # ---------------------------------------------------------------- sending

    def send(self, event: str, data: dict[str, Any]) -> dict[str, Any]:
        data = {"seq": len(self.ref.messages) + 1, **copy.deepcopy(data)}
        result = process(self.state, event, data, check_outbound=False)
        assert result.record, result.ack
        self.state = result.world
        self.ref.messages.append((event, data))
        self.ref.acks.append(result.ack)
        self.ref.worlds.append(self.state)
        for prompt in result.ack.get("prompts", []):
            self.prompts[prompt["prompt_id"]] = prompt
        return result.ack

    def hook(self, fight: Fight, name: str, **extra: Any) -> dict[str, Any]:
        ack = self.send("hook", {"user": GM, "world_time": self.time, "hook": name,
                                 "combat": fight.snapshot(), "current": fight.pointer(), **extra})
        fight.follow(ack)
        return ack

    def intent(self, fight: Fight, kind: str, who: str | None, user: str, args: dict[str, Any]) -> dict[str, Any]:
        data: dict[str, Any] = {"user": user, "world_time": self.time, "kind": kind,
                                "combat_id": fight.id, "args": args}
        if who is not None:
            data["combatant_id"] = who
        ack = self.send("intent", data)
        fight.follow(ack)
        return ack

    # ---------------------------------------------------------------- combatants

    def new_combatant(self, fight: Fight) -> dict[str, Any]:
        self.made += 1
        n = self.made
        cid = f"c{fight.number:03d}x{n:011d}"[:16]
        npc = self.rng.random() < 0.3
        owner = f"player{(n % 4) + 1:010d}"
        stats: dict[str, Any]
        if self.ruleset == "balanced-d20":
            stats = {"dex": self.rng.randint(-1, 5), "int": self.rng.randint(-1, 4),
                     "proficient": ["insight"] if n % 3 == 0 else []}
        elif self.ruleset == "dice-pool":
            stats = {"reaction": self.rng.randint(1, 5), "wits": self.rng.randint(1, 5), "size": 0}
        elif self.ruleset == "storyteller":
            stats = {"initiative_mod": self.rng.randint(1, 8), "speed": 9}
        else:
            stats = {"dex": self.rng.randint(0, 4)}
        return {
            "_id": cid, "type": "base", "system": {}, "actorId": "act" + cid[3:],
            "tokenId": "tok" + cid[3:], "sceneId": "Xo4bT8sKq1VnZ6cP", "img": None,
            "initiative": None, "hidden": npc and self.rng.random() < 0.3, "defeated": False,
            "group": None, "flags": {}, "_stats": dict(STATS), "name": f"Fighter {n}",
            "owners": [] if npc else [owner], "is_npc": npc, "is_defeated": False, "stats": stats,
        }

    def roll_for(self, fight: Fight, cid: str, reroll_of: str | None = None) -> dict[str, Any]:
        c = fight.combatant(cid)
        stats = c["stats"]
        if self.ruleset == "dice-pool":
            size = stats["reaction"] + stats["wits"] - stats.get("size", 0)
            roll = pool_roll([self.rng.randint(1, 6) for _ in range(size)])
        elif self.ruleset == "storyteller":
            roll = d10_roll(self.rng.randint(1, 10), stats["initiative_mod"])
        else:
            roll = d20_roll(self.rng.randint(1, 20), stats.get("dex", 0))
        body: dict[str, Any] = {"combatant_id": cid, "roll": roll}
        if reroll_of is not None:
            body["reroll_of"] = reroll_of
        ack = self.hook(fight, "initiativeRoll", roll=body)
        if self.ruleset == "balanced-d20":
            self.answer_rerolls(fight, ack)
        return ack

    def answer_rerolls(self, fight: Fight, ack: dict[str, Any]) -> None:
        """BI-2: the owner (or the GM for an NPC) decides, the GM approves, the die is rerolled."""
        for prompt in ack.get("prompts", []):
            who = prompt["combatant_id"]
            if prompt["kind"] == "reroll":
                user = GM if prompt["to"] == "gm" else prompt["to"][0]
                accept = self.rng.random() < 0.7
                nxt = self.intent(fight, "reroll.decide", who, user,
                                  {"prompt_id": prompt["prompt_id"], "accept": accept})
                self.answer_rerolls(fight, nxt)
            elif prompt["kind"] == "reroll.approval":
                nxt = self.intent(fight, "reroll.approve", who, GM,
                                  {"prompt_id": prompt["prompt_id"], "approve": self.rng.random() < 0.8})
                self.answer_rerolls(fight, nxt)
            elif prompt["kind"] == "reroll.roll" and self.rng.random() < 0.85:
                self.roll_for(fight, who, reroll_of=prompt["data"]["reroll_of"])

    # ---------------------------------------------------------------- a whole fight

    def play_fight(self, number: int, rounds: int) -> Fight:
        fight = Fight(self, number)
        for _ in range(self.rng.randint(3, 6)):
            fight.people.append(self.new_combatant(fight))
        self.hook(fight, "createCombat")
        for c in list(fight.people):
            self.roll_for(fight, c["_id"])
        if self.rng.random() < 0.5:
            target = self.rng.choice(fight.people)["_id"]
            self.intent(fight, "initiative.set", target, GM, {"value": self.rng.randint(-2, 25)})
        fight.round = 1
        fight.current = fight.next_round_first()
        self.hook(fight, "combatStart", options={"direction": 1})
        while fight.round <= rounds:
            self.play_turn(fight)
        return fight

    def play_turn(self, fight: Fight) -> None:
        roll = self.rng.random()
        cur = fight.current
        holds = self.ruleset in ("storyteller", "dice-pool")
        if holds and cur is not None and roll < 0.12:
            owner = fight.owner_of(cur)
            self.intent(fight, "hold", cur, owner, {})
            return
        if holds and roll < 0.22:
            waiting = fight.waiting()
            if waiting:
                who = self.rng.choice(waiting)
                self.intent(fight, "act", who, fight.owner_of(who), {"now": True})
                return
        if roll < 0.27 and len(fight.people) < 8:
            fight.people.append(self.new_combatant(fight))
            self.hook(fight, "createCombatant")
            self.roll_for(fight, fight.people[-1]["_id"])
            return
        if roll < 0.31 and len(fight.people) > 3:
            gone = self.rng.choice([c for c in fight.people if c["_id"] != cur])
            fight.people.remove(gone)
            self.hook(fight, "deleteCombatant", changed={"_id": gone["_id"]})
            return
        if roll < 0.34 and fight.people:
            target = self.rng.choice(fight.people)["_id"]
            self.intent(fight, "initiative.set", target, GM, {"value": self.rng.randint(-2, 25)})
            return
        nxt = fight.next_turn()
        if nxt is None:
            fight.round += 1
            self.time += 6
            fight.current = fight.next_round_first()
            self.hook(fight, "combatRound", options={"direction": 1, "worldTime": {"delta": 6}})
        else:
            fight.current = nxt
            name = "combatTurn" if self.rng.random() < 0.5 else "updateCombat"
            self.hook(fight, name, changed={"turn": fight.turn_index()}, options={"direction": 1})


class Fight:
    """One Foundry combat as the module sees it: roster, round, pointer, the last plan."""

    def __init__(self, table: Table, number: int) -> None:
        self.table = table
        self.number = number
        self.id = f"combat{table.ref.world[-3:]}{number:07d}"
        self.people: list[dict[str, Any]] = []
        self.round = 0
        self.current: str | None = None
        self.plan: dict[str, Any] | None = None

    def combatant(self, cid: str) -> dict[str, Any]:
        return next(c for c in self.people if c["_id"] == cid)

    def owner_of(self, cid: str) -> str:
        owners = self.combatant(cid)["owners"] if any(c["_id"] == cid for c in self.people) else []
        return owners[0] if owners else GM

    def snapshot(self) -> dict[str, Any]:
        return {"_id": self.id, "type": "base", "system": {}, "scene": "Xo4bT8sKq1VnZ6cP",
                "groups": [], "combatants": self.people, "active": True, "round": self.round,
                "turn": self.turn_index(), "sort": 0, "flags": {}, "_stats": dict(STATS)}

    def turn_index(self) -> int | None:
        order = [e["combatant_id"] for e in (self.plan or {}).get("order", [])]
        return order.index(self.current) if self.current in order else None

    def pointer(self) -> dict[str, Any]:
        return {"round": self.round, "turn": self.turn_index(), "combatantId": self.current,
                "tokenId": None}

    def follow(self, ack: dict[str, Any]) -> None:
        """The module writes the plan's numbers and moves Foundry's pointer to its current."""
        for plan in ack.get("plans", []):
            if plan["combat_id"] != self.id:
                continue
            self.plan = plan
            values = {e["combatant_id"]: e["initiative"] for e in plan["order"]}
            for c in self.people:
                c["initiative"] = values.get(c["_id"], c["initiative"])
            if self.round > 0:
                self.current = plan["current"]

    def next_turn(self) -> str | None:
        if self.plan is None:
            return None
        order = self.plan["order"]
        ids = [e["combatant_id"] for e in order]
        start = ids.index(self.current) + 1 if self.current in ids else len(ids)
        for entry in order[start:]:
            if entry["acts"] not in SKIPPED:
                return str(entry["combatant_id"])
        return None

    def next_round_first(self) -> str | None:
        if self.plan is None:
            return self.people[0]["_id"] if self.people else None
        upcoming = self.plan.get("next_round")
        if upcoming and upcoming.get("current"):
            return str(upcoming["current"])
        order = self.plan["order"]
        return str(order[0]["combatant_id"]) if order else None

    def waiting(self) -> list[str]:
        if self.plan is None:
            return []
        return [e["combatant_id"] for e in self.plan["order"]
                if e["acts"] == "held" and any(c["_id"] == e["combatant_id"] for c in self.people)]


def build(world: str, ruleset: str, seed: int, *, fights: int, rounds: int = 4, keep: int = 2) -> Reference:
    """A seeded session of ``fights`` combats; all but the last ``keep`` end with deleteCombat."""
    table = Table(world, ruleset, random.Random(f"{seed}:{ruleset}"))
    played = [table.play_fight(n, rounds) for n in range(1, fights + 1)]
    for fight in played[: max(0, len(played) - keep)]:
        table.hook(fight, "deleteCombat")
    return table.ref


def build_all(seed: int, *, fights: int = 6, rounds: int = 4) -> dict[str, Reference]:
    """One world per ruleset: ``world-<ruleset>``."""
    return {rs: build(f"world-{rs}", rs, seed, fights=fights, rounds=rounds) for rs in RULESETS}
