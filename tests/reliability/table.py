"""Long, seeded game sessions for the reliability tests, built like a table plays them.

A :class:`Table` plays the session on the one test table (``tests/support/table.py``: Foundry's
combats and pointer, the module applying each plan and steering "next turn"), a random but
seeded mix of joins, rolls, leaves, holds and turns. The answers come from the same pipeline
the server runs (:func:`adapter.pipeline.process`), in memory, so the session is realistic
and its uninterrupted outcome is known: :class:`Reference` keeps, for every ``seq``, the ack
and the world after it.

Only hooks and the intents whose shape is stable are used: ``initiative.set`` (the GM),
``hold``/``act`` (storyteller, dice-pool) and the clever-reroll flow (balanced-d20).
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from adapter.engine import World
from adapter.pipeline import duplicate_ack, process
from adapter.rulesets import RULESETS as BUILT_IN
from tests.foundry import combatant, d10_roll, d20_roll, pool_roll
from tests.support.table import GM, Message
from tests.support.table import Table as OneTable
from tests.support.table import session_data as one_session

RULESETS = ("foundry-core", "balanced-d20", "dice-pool", "storyteller")


def session_data(world: str, ruleset: str) -> dict[str, Any]:
    return one_session(world, ruleset)


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
    """The module at one table: the one test table (``tests/support/table.py``) for the world,
    one Foundry combat per fight, and the reference run kept as it goes."""

    def __init__(self, world: str, ruleset: str, rng: random.Random) -> None:
        self.rng = rng
        self.ruleset = ruleset
        self.table = OneTable(ruleset, world=world, through=partial(process, check_outbound=False, rulesets=BUILT_IN))
        self.table.refusals = "ack"
        self.ref = Reference(world, ruleset, worlds=[self.table.world])
        self.made = 0
        self.prompts: dict[str, dict[str, Any]] = {}

    # ---------------------------------------------------------------- sending

    def send(self, fight: Fight, message: Message) -> dict[str, Any]:
        return self.recorded(self.on(fight).send(message))

    def recorded(self, ack: dict[str, Any]) -> dict[str, Any]:
        """The reference keeps the message the one table just sent, its ack and the world."""
        line = self.table.sent[-1]
        self.ref.messages.append((line["event"], line["data"]))
        self.ref.acks.append(ack)
        self.ref.worlds.append(self.table.world)
        for prompt in ack.get("prompts", []):
            self.prompts[prompt["prompt_id"]] = prompt
        return ack

    def on(self, fight: Fight) -> OneTable:
        self.table.switch(fight.id)
        return self.table

    def hook(self, fight: Fight, name: str, **extra: Any) -> dict[str, Any]:
        return self.send(fight, self.on(fight).hook_message(name, **extra))

    def intent(self, fight: Fight, kind: str, who: str | None, user: str, args: dict[str, Any]) -> dict[str, Any]:
        return self.send(fight, self.on(fight).intent_message(kind, who, args, user=user))

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
        return combatant(cid, f"Fighter {n}", owners=() if npc else (owner,), npc=npc,
                         hidden=npc and self.rng.random() < 0.3, stats=stats,
                         actor="act" + cid[3:], token="tok" + cid[3:])

    def roll_for(self, fight: Fight, cid: str, reroll_of: str | None = None) -> dict[str, Any]:
        stats = fight.combatant(cid)["stats"]
        if self.ruleset == "dice-pool":
            size = stats["reaction"] + stats["wits"] - stats.get("size", 0)
            roll = pool_roll([self.rng.randint(1, 6) for _ in range(size)])
        elif self.ruleset == "storyteller":
            roll = d10_roll(self.rng.randint(1, 10), stats["initiative_mod"])
        else:
            roll = d20_roll(self.rng.randint(1, 20), stats.get("dex", 0))
        ack = self.send(fight, self.on(fight).roll_message(roll, cid=cid, reroll_of=reroll_of))
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
        self.recorded(self.on(fight).start())
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
            self.recorded(self.on(fight).leave(gone["_id"]))
            return
        if roll < 0.34 and fight.people:
            target = self.rng.choice(fight.people)["_id"]
            self.intent(fight, "initiative.set", target, GM, {"value": self.rng.randint(-2, 25)})
            return
        self.recorded(self.on(fight).next_turn())


class Fight:
    """One Foundry combat as the module sees it (the one table's), by its number."""

    def __init__(self, table: Table, number: int) -> None:
        self.number = number
        self.id = f"combat{table.ref.world[-3:]}{number:07d}"
        table.table.switch(self.id)
        self.foundry = table.table.at

    @property
    def people(self) -> list[dict[str, Any]]:
        return self.foundry.roster

    @property
    def round(self) -> int:
        return self.foundry.round

    @property
    def current(self) -> str | None:
        """Whose turn the plan says it is (the one the module offers "hold" to)."""
        plan = self.foundry.plan
        return str(plan["current"]) if plan is not None and plan["current"] is not None else None

    def combatant(self, cid: str) -> dict[str, Any]:
        return self.foundry.person(cid)

    def owner_of(self, cid: str) -> str:
        owners = self.combatant(cid)["owners"] if cid in self.foundry.ids() else []
        return str(owners[0]) if owners else GM

    def waiting(self) -> list[str]:
        plan = self.foundry.plan
        if plan is None:
            return []
        return [e["combatant_id"] for e in plan["order"]
                if e["acts"] == "held" and e["combatant_id"] in self.foundry.ids()]


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
