// End to end in worlds of each sort — core, dnd5e (ties by name) and pf2e-like (ties by
// priority) — against the real sidecar for all four rulesets, under Foundry 13 and 14: a GM
// and two players, a three-way tie in every session, and after every step the pointer on the
// plan's current combatant and the order the plan's on every client. No deprecated call.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { ALICE, BOB } from "./helpers/table.js";
import { SidecarProcess } from "./helpers/sidecar.js";
import { settle, assertClientsFollowPlan, setupCombat, endTurn, lastPlan } from "./helpers/play.js";
import { eachGeneration, assertNoDeprecations } from "./fake-foundry/index.js";

let sidecar;
before(async () => { sidecar = await new SidecarProcess().start(); });
after(async () => { await sidecar?.stop(); });

const WORLDS = [
  { sort: "core", system: "worldbuilding" },
  { sort: "dnd5e", system: "dnd5e" },
  { sort: "pf2e", system: "pf2e" }
];
// Dice per roller (Alice: Aria; Bob: Brother Tolm; the GM: Goblin, then the Hidden Boss).
// 1d20 + Dex: 10+3, 12+1, 11+2 = 13 each, a three-way tie; the boss 5+1 = 6.
const D20 = { alice: [10], bob: [12], gm: [11, 5] };
// Pools (DP-1): Aria 5 dice → 1 net, Tolm 5 → 1 net (same base 5: an exact rule tie),
// Goblin 2 → 1 net, Boss 6 → 2 net.
const POOLS = { alice: [4, 2, 2, 2, 2], bob: [5, 3, 3, 3, 3], gm: [4, 3, 4, 4, 2, 2, 2, 2] };
const RULESETS = { "foundry-core": D20, "balanced-d20": D20, "dice-pool": POOLS, "storyteller": D20 };

let n = 0;
for (const [ruleset, dice] of Object.entries(RULESETS)) {
  for (const { sort, system } of WORLDS) {
    eachGeneration(test, `${ruleset} in a ${sort}-sorted world: ties, the pointer on plan.current on every client`, { timeout: 60000 }, async (generation) => {
      const { world, table, gm, combatId } = await setupCombat(sidecar, ruleset, `w${++n}-${ruleset}-${sort}-${generation}`, { system, sort, generation });
      const alice = table.clients[ALICE], bob = table.clients[BOB];
      world.dice.script(...dice.alice);
      await alice.game.combats.get(combatId).rollAll();
      world.dice.script(...dice.bob);
      await bob.game.combats.get(combatId).rollAll();
      world.dice.script(...dice.gm);
      await gm.game.combats.get(combatId).rollAll();
      await settle(table);
      const totals = table.sent.filter((m) => m.data.hook === "initiativeRoll").map((m) => m.data.roll.roll.total);
      assert.equal(totals.length, 4, "four rolls reached the sidecar");
      assert.ok(new Set(totals).size < totals.length, `a tie among the rolls (${totals})`);
      const plan = assertClientsFollowPlan(table, combatId);
      const values = plan.order.map((e) => e.initiative).filter((v) => v !== null);
      assert.equal(new Set(values).size, values.length, `every written initiative is distinct (${values})`);
      await gm.game.combats.get(combatId).startCombat();
      await settle(table);
      assertClientsFollowPlan(table, combatId);
      const start = lastPlan(table, combatId).round;
      let steps = 0;
      while (lastPlan(table, combatId).round < start + 1 && steps++ < 12) {
        await endTurn(table, combatId);
        assertClientsFollowPlan(table, combatId);
      }
      assert.equal(lastPlan(table, combatId).round, start + 1, "a whole round played");
      assertNoDeprecations(world);
      gm.module.state.sidecar.stop();
    });
  }
}

eachGeneration(test, "a reroll with the same total and a clear-and-roll-again with the same roll each reach the sidecar as a roll", { timeout: 60000 }, async (generation) => {
  const { world, table, gm, combatId } = await setupCombat(sidecar, "foundry-core", `rerolls-${generation}`, { system: "dnd5e", sort: "dnd5e", generation });
  const alice = table.clients[ALICE];
  const aria = () => alice.game.combats.get(combatId).combatants.find((c) => c.name === "Aria");
  const rolls = () => table.sent.filter((m) => m.data.hook === "initiativeRoll" && m.data.roll.combatant_id === aria().id);
  world.dice.script(10);
  await aria().rollInitiative();
  await settle(table);
  world.dice.script(10); // the same roll again: nothing but the mark's nonce differs
  await aria().rollInitiative();
  await settle(table);
  assert.equal(rolls().length, 2, "the identical reroll reached the sidecar");
  await gm.game.combats.get(combatId).combatants.get(aria().id).update({ initiative: null });
  await settle(table);
  world.dice.script(10); // cleared, then rolled the same: the roll's JSON equals the stored one
  await aria().rollInitiative();
  await settle(table);
  assert.equal(rolls().length, 3, "the roll after a clear reached the sidecar as a roll");
  assert.ok(!table.sent.some((m) => m.data.kind === "initiative.set"), "never taken for a manual edit");
  assertNoDeprecations(world);
  gm.module.state.sidecar.stop();
});
