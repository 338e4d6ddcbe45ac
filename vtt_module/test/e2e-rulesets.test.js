// End to end, one whole combat per house ruleset against the real sidecar: prompts answered
// by a player and the GM, players ending their own turns, two rounds, every client following
// the plan after every step, every message valid (checked as sent), one update per plan.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { GM, ALICE, BOB, until } from "./helpers/table.js";
import { SidecarProcess } from "./helpers/sidecar.js";
import { settle, assertClientsFollowPlan, setupCombat, endTurn, idOf, lastPlan } from "./helpers/play.js";

let sidecar;
before(async () => { sidecar = await new SidecarProcess().start(); });
after(async () => { await sidecar?.stop(); });

const entry = (table, combatId, name) => lastPlan(table, combatId).order.find((e) => e.combatant_id === idOf(table, combatId, name));
const report = {};
after(() => { console.log(`document updates per plan: ${JSON.stringify(report)}`); });

function countWrites(table, ruleset, combatId) {
  const applier = table.clients[GM].module.state.applier;
  const own = table.world.log.filter((e) => e.own).length;
  assert.equal(own, applier.writes, "every write of the applier is marked as its own");
  report[ruleset] = { plans: lastPlan(table, combatId).revision, updates: applier.writes, perPlan: +(applier.writes / lastPlan(table, combatId).revision).toFixed(2) };
  // a plan writes at most its combatants (one updateEmbeddedDocuments) and its combat (the flag,
  // the pointer, or a round begun by a rule): Foundry's own contracts, one per document kind
  assert.ok(applier.writes <= 2 * lastPlan(table, combatId).revision);
}

async function twoRounds(table, combatId) {
  const enders = new Set();
  const start = lastPlan(table, combatId).round;
  while (lastPlan(table, combatId).round < start + 2) {
    enders.add(await endTurn(table, combatId));
    assertClientsFollowPlan(table, combatId);
  }
  return enders;
}

test("balanced-d20: ready to strike, a clever reroll accepted by the player and approved by the GM, a dash, two rounds", async () => {
  const { world, table, gm, combatId } = await setupCombat(sidecar, "balanced-d20", "bd-world");
  const alice = table.clients[ALICE], bob = table.clients[BOB];
  for (const c of [gm, alice, bob]) c.respond = () => true;
  const tolm = [...world.tokens.values()].find((t) => t.name === "Brother Tolm");
  const goblin = [...world.tokens.values()].find((t) => t.name === "Goblin");
  // BI-3 outside combat: Bob declares from his client, the GM confirms the 6 seconds
  let r = await bob.api.readyStart({ id: tolm._id, actor: bob.game.actors.get(tolm.actorId) }, { watching: [goblin._id], sees: true, weapon_ready: true });
  assert.equal(r.ok, true, JSON.stringify(r));
  const readyStart = table.sent.find((m) => m.data.kind === "ready.start");
  assert.equal(readyStart.data.user, BOB, "the sender id from Foundry's socket is the intent's user");
  r = await gm.api.readyConfirm(tolm.actorId);
  assert.equal(r.ok, true);
  // BI-2: Aria (Int +4) rolls a natural 3 → offer to Alice → approval by the GM → Alice rolls
  world.dice.script(3, 8);
  await alice.game.combats.get(combatId).rollAll();
  await settle(table);
  await until(() => table.sent.some((m) => m.data.roll?.reroll_of), { what: "the reroll" });
  await settle(table);
  assert.deepEqual(alice.dialogs.map((d) => d.kind), ["confirm"], "Alice was offered the reroll");
  assert.deepEqual(gm.dialogs.map((d) => d.kind), ["confirm"], "the GM approved it");
  const decide = table.sent.find((m) => m.data.kind === "reroll.decide");
  assert.equal(decide.data.user, ALICE);
  assert.equal(table.sent.find((m) => m.data.kind === "reroll.approve").data.user, GM);
  assert.equal(entry(table, combatId, "Aria").initiative, 11, "the reroll (8 + 3) stands");
  assert.ok(!entry(table, combatId, "Aria").tags.includes("reroll_pending"));
  world.dice.script(15);
  await bob.game.combats.get(combatId).rollAll();
  world.dice.script(12, 8);
  await gm.game.combats.get(combatId).rollAll();
  await settle(table);
  await gm.game.combats.get(combatId).startCombat();
  await settle(table);
  let plan = assertClientsFollowPlan(table, combatId);
  assert.equal(plan.current, idOf(table, combatId, "Brother Tolm"));
  assert.equal(entry(table, combatId, "Brother Tolm").reaction.available, true, "ready with 16 ≥ 10: reaction before the first turn");
  assert.equal(entry(table, combatId, "Goblin").reaction.available, false);
  // BI-4: the GM dashes the hidden boss +6 (9 → 15... placed after the turn in progress)
  const gmCombat = gm.game.combats.get(combatId);
  r = await gm.api.perform("dash", gmCombat, gmCombat.combatants.get(idOf(table, combatId, "Hidden Boss")), { amount: 6 });
  assert.equal(r.ok, true);
  await settle(table);
  plan = assertClientsFollowPlan(table, combatId);
  assert.equal(entry(table, combatId, "Hidden Boss").acts, "movement_or_action");
  assert.ok(entry(table, combatId, "Hidden Boss").tags.includes("dashed"));
  assert.equal(plan.order[1].combatant_id, idOf(table, combatId, "Hidden Boss"), "the dashed turn comes right after the current one");
  const dashLine = world.chat.find((m) => m.content.includes("dashes"));
  assert.deepEqual(dashLine.whisper, [GM], "a hidden combatant's ruling is whispered to the GM");
  // a player may not dash someone else's combatant
  r = await alice.api.request({ kind: "dash", combat_id: combatId, combatant_id: idOf(table, combatId, "Goblin"), args: { amount: 2 } });
  assert.equal(r.ok, false);
  const enders = await twoRounds(table, combatId);
  assert.ok(enders.has(ALICE) && enders.has(BOB));
  assert.equal(entry(table, combatId, "Hidden Boss").acts, "full", "the dash lasted one round");
  countWrites(table, "balanced-d20", combatId);
  gm.module.state.sidecar.stop();
});

test("balanced-d20: a reload with messages unsent, and a take-over, resend the snapshot only: a dash stands, no score moves, no prompt comes", async () => {
  const { table, gm, combatId } = await setupCombat(sidecar, "balanced-d20", "bd-resync-world");
  for (const c of Object.values(table.clients)) c.respond = () => true;
  table.world.dice.script(15);
  await table.clients[ALICE].game.combats.get(combatId).rollAll();
  table.world.dice.script(14);
  await table.clients[BOB].game.combats.get(combatId).rollAll();
  table.world.dice.script(12);
  await gm.game.combats.get(combatId).rollNPC();
  await gm.game.combats.get(combatId).setInitiative(idOf(table, combatId, "Hidden Boss"), 11); // the GM's value: no roll behind it
  await settle(table);
  await gm.game.combats.get(combatId).startCombat();
  await settle(table);
  const gmCombat = gm.game.combats.get(combatId);
  const r = await gm.api.perform("dash", gmCombat, gmCombat.combatants.get(idOf(table, combatId, "Hidden Boss")), { amount: 6 });
  assert.equal(r.ok, true, JSON.stringify(r));
  await settle(table);
  const seen = () => ({ order: lastPlan(table, combatId).order.map((e) => [e.combatant_id, e.initiative, e.acts, e.tags]),
    dialogs: Object.values(table.clients).map((c) => c.dialogs.length) });
  const before = seen();
  assert.ok(entry(table, combatId, "Hidden Boss").tags.includes("dashed"));
  const link = gm.module.state.sidecar;
  const resent = async (what, step) => {
    const sent = table.sent.length;
    step();
    await until(() => link.status === "connected", { what });
    await settle(table);
    assert.ok(table.sent.slice(sent).some((m) => m.data.hook === "createCombat" && m.data.combat._id === combatId), `${what}: the snapshot was sent`);
    assert.deepEqual(table.sent.slice(sent).filter((m) => m.data.hook === "initiativeRoll" || m.data.kind === "initiative.set"), [], `${what}: no roll or value resent`);
    assert.deepEqual(seen(), before, `${what}: scores, dash and prompts unchanged`);
  };
  await resent("a reload with messages unsent", () => { link.outbox.resync = true; link.restart(); });
  await resent("a take-over", () => { link.stop(); link.status = "superseded"; link.takeOver(); });
  link.stop();
});

test("dice-pool: pools rolled from the stats, a critical failure skips turns, a hold and an act after", async () => {
  const { world, table, gm, combatId } = await setupCombat(sidecar, "dice-pool", "dp-world");
  const alice = table.clients[ALICE], bob = table.clients[BOB];
  // Aria: reaction 3 + wits 2 = 5 dice → 4,4,6,2,1 = 2 successes
  world.dice.script(4, 4, 6, 2, 1);
  await alice.game.combats.get(combatId).rollAll();
  // Tolm: 2 + 3 = 5 dice → 3,2,3,1,1 = −2, a critical failure (DP-E2 Baker)
  world.dice.script(3, 2, 3, 1, 1);
  await bob.game.combats.get(combatId).rollAll();
  // Goblin: 2 + 1 − 1 = 2 dice → 5,5; Boss: 3 + 3 = 6 dice → 6,2,2,2,2,2
  world.dice.script(5, 5, 6, 2, 2, 2, 2, 2);
  await gm.game.combats.get(combatId).rollAll();
  await settle(table);
  const rolls = table.sent.filter((m) => m.data.hook === "initiativeRoll");
  assert.deepEqual(rolls.map((m) => m.data.roll.roll.formula), ["5d6cs>=4df=1", "5d6cs>=4df=1", "2d6cs>=4df=1", "6d6cs>=4df=1"]);
  assert.equal(entry(table, combatId, "Brother Tolm").acts, "none");
  assert.equal(entry(table, combatId, "Brother Tolm").detail.turns_lost, 2);
  await gm.game.combats.get(combatId).startCombat();
  await settle(table);
  let plan = assertClientsFollowPlan(table, combatId);
  const order = plan.order.map((e) => e.combatant_id);
  assert.equal(order.at(-1), idOf(table, combatId, "Brother Tolm"));
  // DP-5: the goblin (current or next) holds, then acts after Aria
  const goblin = idOf(table, combatId, "Goblin");
  while (lastPlan(table, combatId).current !== goblin) await endTurn(table, combatId);
  const gmCombat = gm.game.combats.get(combatId);
  let r = await gm.api.perform("hold", gmCombat, gmCombat.combatants.get(goblin), {});
  assert.equal(r.ok, true, JSON.stringify(r));
  await settle(table);
  plan = assertClientsFollowPlan(table, combatId);
  assert.equal(entry(table, combatId, "Goblin").acts, "held");
  assert.notEqual(plan.current, goblin, "the pointer moved on past the holder");
  // the skipped turns: Tolm's turn never comes up while it hesitates
  const seen = [];
  const startRound = plan.round;
  while (lastPlan(table, combatId).round < startRound + 2) {
    seen.push(gm.game.combats.get(combatId).combatant.id);
    await endTurn(table, combatId);
    assertClientsFollowPlan(table, combatId);
  }
  assert.ok(!seen.slice(0, 3).includes(idOf(table, combatId, "Brother Tolm")) || entry(table, combatId, "Brother Tolm").acts !== "none");
  countWrites(table, "dice-pool", combatId);
  gm.module.state.sidecar.stop();
});

test("storyteller: hold, act after (ST-1), give up the round (ST-4), a player's end turn, two rounds", async () => {
  const { world, table, gm, combatId } = await setupCombat(sidecar, "storyteller", "st-world");
  const alice = table.clients[ALICE], bob = table.clients[BOB];
  world.dice.script(10);          // Aria 1d20+3 = 13
  await alice.game.combats.get(combatId).rollAll();
  world.dice.script(5);           // Tolm 5 + 1 = 6
  await bob.game.combats.get(combatId).rollAll();
  world.dice.script(6, 2);        // Goblin 8, Boss 3
  await gm.game.combats.get(combatId).rollAll();
  await gm.game.combats.get(combatId).startCombat();
  await settle(table);
  let plan = assertClientsFollowPlan(table, combatId);
  const aria = idOf(table, combatId, "Aria"), tolm = idOf(table, combatId, "Brother Tolm");
  assert.equal(plan.current, aria);
  // ST-1: Aria holds on her turn (from Alice's client), then acts right after Tolm
  const aCombat = alice.game.combats.get(combatId);
  let r = await alice.api.perform("hold", aCombat, aCombat.combatants.get(aria), {});
  assert.equal(r.ok, true, JSON.stringify(r));
  await settle(table);
  plan = assertClientsFollowPlan(table, combatId);
  assert.equal(entry(table, combatId, "Aria").acts, "held");
  assert.notEqual(plan.current, aria);
  while (lastPlan(table, combatId).current !== tolm) await endTurn(table, combatId);
  r = await alice.api.perform("act.after", aCombat, aCombat.combatants.get(aria), { anchor: tolm });
  assert.equal(r.ok, true, JSON.stringify(r));
  assert.equal(table.sent.at(-1).data.user, ALICE);
  await settle(table);
  await endTurn(table, combatId); // Bob ends Tolm's turn: Aria steps in after him
  plan = assertClientsFollowPlan(table, combatId);
  assert.equal(plan.current, aria, "the holder acts right after Tolm");
  assert.ok(entry(table, combatId, "Aria").initiative < entry(table, combatId, "Brother Tolm").initiative);
  // ST-4: Bob gives up Tolm's next action to act in the round after
  const bCombat = bob.game.combats.get(combatId);
  const enders = await twoRounds(table, combatId);
  assert.ok(enders.has(ALICE) && enders.has(BOB));
  r = await bob.api.perform("hold.next_round", bCombat, bCombat.combatants.get(tolm), {});
  assert.equal(r.ok, true, JSON.stringify(r));
  await settle(table);
  assertClientsFollowPlan(table, combatId);
  countWrites(table, "storyteller", combatId);
  gm.module.state.sidecar.stop();
});
