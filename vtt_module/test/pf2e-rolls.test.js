// pf2e's own initiative roll reaches the sidecar as a roll by whoever rolled it (docs/module.md,
// "Initiative"): pf2e never calls getInitiativeRoll, so the module marks the roll from pf2e's
// initiative check card. A player's change of her own initiative that is not a roll is never
// sent as `initiative.set` (a GM's intent).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { eachGeneration } from "./fake-foundry/index.js";
import { SidecarProcess } from "./helpers/sidecar.js";
import { setupCombat, settle, idOf, lastPlan } from "./helpers/play.js";
import { ALICE, GM } from "./helpers/table.js";
import { pf2eInitiativeRoll } from "../scripts/initiative.js";
import { classifyCombatantChange } from "../scripts/forwarder.js";

let sidecar;
before(async () => { sidecar = await new SidecarProcess().start(); });
after(async () => { await sidecar?.stop(); });

/** Aria with pf2e's initiative statistic (perception, +3), so pf2e's own check rolls for her. */
const PF2E_ARIA = { attributes: { reaction: { value: 3 }, wits: { value: 2 }, init: { value: 3 }, initiative: { mod: 3, statistic: "perception" } } };

/** A pf2e table whose GM link records every refusal the sidecar answers. */
async function pf2eTable(name, generation) {
  const setup = await setupCombat(sidecar, "foundry-core", `${name}-${generation}`, { system: "pf2e", generation, extra: { aria: PF2E_ARIA } });
  const refused = [];
  const s = setup.gm.module.state.sidecar;
  const ack = s.ack.bind(s);
  s.ack = (m, a) => { if (!a.ok) refused.push(`${m.data.hook ?? m.data.kind} by ${m.data.user}: ${a.error.code}`); return ack(m, a); };
  return { ...setup, refused, aria: idOf(setup.table, setup.combatId, "Aria") };
}

/** What the GM's link sent after `from`: `hook`/`kind` and `user`. */
const sentSince = (table, from) => table.sent.slice(from).map((m) => m.data);

eachGeneration(test, "a player's pf2e initiative roll reaches the sidecar as her own roll, and the plan takes its total", { timeout: 30000 }, async (generation) => {
  const { world, table, gm, combatId, refused, aria } = await pf2eTable("pf2e-player-roll", generation);
  const from = table.sent.length;
  world.dice.script(14);
  await table.clients[ALICE].game.combats.get(combatId).rollInitiative([aria]);
  await settle(table);
  assert.deepEqual(refused, [], "nothing refused");
  const rolls = sentSince(table, from).filter((d) => d.hook === "initiativeRoll");
  assert.equal(rolls.length, 1, "one initiativeRoll");
  assert.equal(rolls[0].user, ALICE, "sent as Alice's roll");
  assert.equal(rolls[0].roll.combatant_id, aria);
  assert.equal(rolls[0].roll.roll.total, 17, "pf2e's check: 14 + 3");
  assert.equal(rolls[0].roll.roll.terms.find((t) => t.class === "Die").results[0].result, 14, "the die as rolled");
  assert.ok(!sentSince(table, from).some((d) => d.kind === "initiative.set"), "no initiative.set");
  assert.equal(gm.game.combats.get(combatId).combatants.get(aria).initiative, 17);
  assert.equal(lastPlan(table, combatId).order.find((e) => e.combatant_id === aria).initiative, 17, "the plan agrees with Foundry");
  gm.module.state.sidecar.stop();
});

eachGeneration(test, "the GM's pf2e initiative rolls are forwarded as the GM's rolls, not as hand-set values, beside core's roll for an actor without the statistic", { timeout: 30000 }, async (generation) => {
  const { world, table, gm, combatId, refused, aria } = await pf2eTable("pf2e-gm-roll", generation);
  const goblin = idOf(table, combatId, "Goblin"); // no initiative statistic: pf2e hands it to core's roll
  const from = table.sent.length;
  world.dice.script(9);
  await gm.game.combats.get(combatId).rollInitiative([aria, goblin]);
  await settle(table);
  assert.deepEqual(refused, []);
  const sent = sentSince(table, from);
  const rolls = sent.filter((d) => d.hook === "initiativeRoll");
  assert.deepEqual(rolls.map((d) => [d.user, d.roll.combatant_id]).sort(), [[GM, aria], [GM, goblin]].sort());
  assert.equal(rolls.find((d) => d.roll.combatant_id === aria).roll.roll.total, 12, "pf2e's check: 9 + 3");
  assert.equal(rolls.find((d) => d.roll.combatant_id === aria).roll.roll.class, "CheckRoll");
  assert.ok(!sent.some((d) => d.kind === "initiative.set"), "not a manual edit");
  gm.module.state.sidecar.stop();
});

eachGeneration(test, "a player's change of her own initiative without a roll is not sent as initiative.set", { timeout: 30000 }, async (generation) => {
  const { table, gm, combatId, refused, aria } = await pf2eTable("pf2e-player-set", generation);
  const from = table.sent.length;
  // pf2e's setInitiative writes without a card before it (as its hero-point reroll does:
  // GitHub foundryvtt/pf2e `src/module/system/check/check.ts` `rerollFromMessage`)
  await table.clients[ALICE].game.combats.get(combatId).setInitiative(aria, 12);
  await settle(table);
  assert.deepEqual(refused, [], "nothing refused");
  const sent = sentSince(table, from);
  assert.ok(!sent.some((d) => d.kind === "initiative.set"), "no initiative.set under a player's id");
  assert.deepEqual(sent.filter((d) => d.hook === "updateCombatant").map((d) => d.user), [ALICE], "reported as the change it is");
  assert.equal(gm.game.combats.get(combatId).combatants.get(aria).initiative, 12, "Foundry keeps the player's number");
  gm.module.state.sidecar.stop();
});

test("only a pf2e initiative check card gives a roll: its Roll, or the Roll's JSON as object or string", () => {
  const json = { class: "CheckRoll", formula: "1d20+3", terms: [], total: 17, options: { rollerId: ALICE } };
  const card = (context, rolls) => ({ flags: { core: { initiativeRoll: true }, pf2e: { context } }, rolls });
  const initiative = { type: "initiative", isReroll: false };
  for (const rolls of [[json], [JSON.stringify(json)], [{ total: 17, toJSON: () => json }]]) {
    const roll = pf2eInitiativeRoll(card(initiative, rolls));
    assert.equal(roll.total, 17);
    assert.deepEqual(roll.toJSON(), json);
  }
  assert.equal(pf2eInitiativeRoll({ flags: { core: { initiativeRoll: true } }, rolls: [json] }), null, "core's own card: marked through getInitiativeRoll");
  assert.equal(pf2eInitiativeRoll(card({ type: "perception-check" }, [json])), null, "another check");
  assert.equal(pf2eInitiativeRoll(card({ type: "initiative", isReroll: true }, [json])), null, "a reroll card comes after its write");
  assert.equal(pf2eInitiativeRoll(card(initiative, [])), null, "no roll");
  assert.equal(pf2eInitiativeRoll(card(initiative, ["{not json"])), null);
  assert.equal(pf2eInitiativeRoll(card(initiative, [{ ...json, total: null }])), null, "an unevaluated roll");
});

test("an unmarked initiative is initiative.set from a GM, the updateCombatant hook from a player", () => {
  assert.deepEqual(classifyCombatantChange({ initiative: 12 }, undefined, 12, true), { kind: "set", value: 12 });
  assert.deepEqual(classifyCombatantChange({ initiative: 12 }, undefined, 12, false), { kind: "hook", unmarked: true });
  assert.deepEqual(classifyCombatantChange({ initiative: null }, undefined, null, false), { kind: "hook" }, "a reset is a hook either way");
  const mark = { json: JSON.stringify({ total: 12, terms: [] }), nonce: "n1", reroll_of: null };
  assert.equal(classifyCombatantChange({ initiative: 12, flags: { "initiative-sidecar": { roll: { nonce: "n1" } } } }, mark, 12, false).kind, "roll", "a player's marked roll");
});
