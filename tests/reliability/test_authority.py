"""Authority through the server: only a GM approves rerolls, sets initiative by hand, resolves
opposed checks (and marks a holder target-aware); a player acts only for combatants it owns
(the ``owners`` the module sends). Each refusal is ``not_permitted`` and changes no plan and
no pending prompt; the permitted user then succeeds, so the refusal is about who asked."""

from __future__ import annotations

from typing import Any

from tests.foundry import combat, combatant, current, d20_roll, total_roll
from tests.support.sidecar import GM, Client, Running, auth, connect

P1, P2 = "playerOne0000001", "playerTwo0000002"
HERO, ROGUE, OGRE = "heroAuthority001", "rogueAuthority01", "ogreAuthority001"
FIGHT = "combatAuthority1"


class Table:
    def __init__(self, client: Client, people: list[dict[str, Any]]) -> None:
        self.client = client
        self.seq = 0
        self.fight = combat(FIGHT, people)
        self.pointer = current()

    async def hook(self, name: str, **extra: Any) -> dict[str, Any]:
        self.seq += 1
        ack = await self.client.send("hook", {"seq": self.seq, "user": GM, "world_time": 0, "hook": name,
                                              "combat": self.fight, "current": self.pointer, **extra})
        assert ack["ok"], ack
        return dict(ack)

    async def intent(self, user: str, kind: str, args: dict[str, Any], who: str | None = None) -> dict[str, Any]:
        self.seq += 1
        data = {"seq": self.seq, "user": user, "world_time": 0, "kind": kind, "combat_id": FIGHT, "args": args}
        if who is not None:
            data["combatant_id"] = who
        return dict(await self.client.send("intent", data))

    async def state(self) -> dict[str, Any]:
        dup = await self.client.send("hook", {"seq": self.seq, "user": GM, "world_time": 0,
                                              "hook": "updateCombat", "combat": self.fight, "current": self.pointer})
        assert dup["duplicate"] is True
        return {"plans": dup["plans"], "prompts": dup["prompts"]}

    async def refused(self, user: str, kind: str, args: dict[str, Any], who: str | None = None) -> None:
        before = await self.state()
        ack = await self.intent(user, kind, args, who)
        assert ack["ok"] is False and ack["error"]["code"] == "not_permitted", (kind, user, ack)
        assert await self.state() == before, f"a refused {kind} changed the game"

    async def allowed(self, user: str, kind: str, args: dict[str, Any], who: str | None = None) -> dict[str, Any]:
        ack = await self.intent(user, kind, args, who)
        assert ack["ok"] is True, (kind, user, ack)
        return ack


async def test_balanced_d20_gm_only_and_owner_only_intents_are_refused_to_others(sidecar: Running) -> None:
    client = await connect(sidecar.url, auth(world="worldAuthority", ruleset="balanced-d20"))
    await client.welcome
    t = Table(client, [
        combatant(HERO, "Hero", owners=[P1], stats={"dex": 2, "int": 3, "proficient": ["insight"]}),
        combatant(ROGUE, "Rogue", owners=[P2], stats={"dex": 3, "int": 0}),
        combatant(OGRE, "Ogre", npc=True, stats={"dex": 0, "int": -2}),
    ])
    await t.hook("createCombat")
    [offer] = (await t.hook("initiativeRoll", roll={"combatant_id": HERO, "roll": d20_roll(2, 2)}))["prompts"]
    await t.hook("initiativeRoll", roll={"combatant_id": ROGUE, "roll": d20_roll(15, 3)})
    await t.hook("initiativeRoll", roll={"combatant_id": OGRE, "roll": d20_roll(10)})

    decide = {"prompt_id": offer["prompt_id"], "accept": True}
    await t.refused(P2, "reroll.decide", decide)  # BI-2: the owner decides, not another player
    [approval] = (await t.allowed(P1, "reroll.decide", decide))["prompts"]
    assert approval["kind"] == "reroll.approval" and approval["to"] == "gm"
    approve = {"prompt_id": approval["prompt_id"], "approve": True}
    await t.refused(P1, "reroll.approve", approve)  # only a GM approves a reroll
    await t.refused(P2, "reroll.approve", approve)
    await t.allowed(GM, "reroll.approve", approve)

    await t.refused(P1, "initiative.set", {"value": 25}, HERO)  # only a GM overrides initiative
    await t.allowed(GM, "initiative.set", {"value": 25}, HERO)
    await t.refused(P2, "dash", {"amount": 2}, HERO)  # a player acts only for its own
    own = await t.intent(P2, "dash", {"amount": 2}, ROGUE)  # for its own it may (rules permitting)
    assert own["ok"] or own["error"]["code"] != "not_permitted", own
    await t.refused(P2, "reaction.use", {}, HERO)

    t.fight["round"] = 1
    t.pointer = current(1, HERO, 0)
    started = await t.hook("combatStart")
    assert started["plans"][0]["current"] == HERO
    ready = {"mode": "preemptive", "trigger": "the ogre raises its club", "action": "slip away", "target_id": OGRE}
    await t.refused(P2, "readied.declare", ready, HERO)
    declared = await t.allowed(P1, "readied.declare", ready, HERO)
    [notice] = [n for n in declared["notices"] if n["kind"] == "readied.declared"]
    trigger = {"readied_id": notice["readied_id"]}
    await t.refused(P2, "readied.trigger", trigger, HERO)
    [check] = (await t.allowed(P1, "readied.trigger", trigger, HERO))["prompts"]
    assert check["kind"] == "opposed_check" and check["to"] == "gm"
    result = {"prompt_id": check["prompt_id"], "actor_total": 15, "target_total": 9}
    await t.refused(P1, "opposed.result", result)  # only a GM resolves an opposed check
    await t.refused(P2, "opposed.result", result)
    await t.allowed(GM, "opposed.result", result)
    await client.close()


async def test_storyteller_hold_and_act_only_for_ones_own_combatant(sidecar: Running) -> None:
    client = await connect(sidecar.url, auth(world="worldAuthorityST", ruleset="storyteller"))
    await client.welcome
    t = Table(client, [
        combatant(HERO, "Mitch", owners=[P1], stats={"initiative_mod": 5}),
        combatant(ROGUE, "Larry", owners=[P2], stats={"initiative_mod": 3}),
    ])
    await t.hook("createCombat")
    await t.hook("initiativeRoll", roll={"combatant_id": HERO, "roll": total_roll(10, "1d10 + 5")})
    await t.hook("initiativeRoll", roll={"combatant_id": ROGUE, "roll": total_roll(6, "1d10 + 3")})
    t.fight["round"] = 1
    t.pointer = current(1, HERO, 0)
    await t.hook("combatStart")
    await t.refused(P2, "hold", {}, HERO)
    await t.refused(P1, "hold", {"target_aware": True}, HERO)  # ST-5: the GM says who knows
    await t.allowed(P1, "hold", {}, HERO)
    await t.refused(P2, "act", {"after": ROGUE}, HERO)
    await t.allowed(P1, "act", {"after": ROGUE}, HERO)
    await client.close()
