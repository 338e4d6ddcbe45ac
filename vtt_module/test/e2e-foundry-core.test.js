// End to end: the real sidecar, the real module on a GM and two player clients, ruleset
// foundry-core: create, roll all, start, a player ends its turn, next turn through two rounds;
// then kill the sidecar mid-combat and restart it on the same database.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { newWorld, bootTable, GM, ALICE, BOB, until } from "./helpers/table.js";
import { SidecarProcess } from "./helpers/sidecar.js";
import { settle, assertClientsFollowPlan, lastPlan } from "./helpers/play.js";

let sidecar;
before(async () => { sidecar = await new SidecarProcess().start(); });
after(async () => { await sidecar?.stop(); });

let worlds = 0;
async function setup(ruleset = "foundry-core") {
  const world = newWorld({ id: `core-world-${++worlds}` });
  const table = bootTable(world, { url: sidecar.url, token: sidecar.token, ruleset, record: true });
  const gm = table.clients[GM];
  await until(() => gm.module.state.sidecar?.status === "connected", { what: "the GM to connect" });
  const combat = await world.createCombat(gm, {});
  await combat.createEmbeddedDocuments("Combatant", [...world.tokens.values()].map((t) => ({ actorId: t.actorId, tokenId: t._id, sceneId: "scene00000000001", hidden: t.name === "Hidden Boss" })));
  await settle(table);
  return { world, table, gm, combatId: combat.id };
}

/** End the current turn from the client of whoever owns the current combatant (GM for NPCs). */
async function endTurn(table, combatId) {
  const gmCombat = table.clients[GM].game.combats.get(combatId);
  const owner = [ALICE, BOB].find((id) => gmCombat.combatant?.actor?.ownership?.[id] >= 3 || table.world.actors.get(gmCombat.combatant?.actorId)?.ownership?.[id] >= 3) ?? GM;
  await table.clients[owner].game.combats.get(combatId).nextTurn();
  await settle(table);
  return owner;
}

test("foundry-core: a whole combat over two rounds follows the sidecar's plan on every client", async () => {
  const { world, table, gm, combatId } = await setup();
  world.dice.script(14, 9, 17, 5);
  await table.clients[ALICE].game.combats.get(combatId).rollAll();
  await table.clients[BOB].game.combats.get(combatId).rollAll();
  await gm.game.combats.get(combatId).rollAll();
  await settle(table);
  assertClientsFollowPlan(table, combatId);
  await gm.game.combats.get(combatId).startCombat();
  await settle(table);
  let plan = assertClientsFollowPlan(table, combatId);
  assert.equal(plan.round, 1);
  const enders = new Set();
  for (let step = 0; step < 8; step++) {
    enders.add(await endTurn(table, combatId));
    plan = assertClientsFollowPlan(table, combatId);
  }
  assert.equal(plan.round, 3, "two full rounds passed");
  assert.ok(enders.has(ALICE) && enders.has(BOB), "players pressed end turn themselves");
  // one document update per plan that changed anything
  const applier = gm.module.state.applier;
  assert.ok(applier.writes <= plan.revision, `${applier.writes} writes for ${plan.revision} plans`);
  const ownWrites = world.log.filter((e) => e.own);
  assert.equal(ownWrites.length, applier.writes, "each plan written in one update");
  console.log(`document updates per plan: {"foundry-core":{"plans":${plan.revision},"updates":${applier.writes}}}`);
  // the recording, which the sidecar keeps: session line without the token, then every message once
  await gm.api.download();
  const lines = gm.downloads.at(-1).data.trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(lines[0].event, "session");
  assert.equal(lines[0].data.token, undefined);
  assert.deepEqual(lines.slice(1).map((l) => l.data.seq), table.sent.filter((m) => m.event !== "export").map((m) => m.data.seq));
  gm.module.state.sidecar.stop();
});

test("foundry-core: the sidecar killed mid-combat restarts on its database and nothing is lost", async () => {
  const { world, table, gm, combatId } = await setup();
  await table.clients[ALICE].game.combats.get(combatId).rollAll();
  await table.clients[BOB].game.combats.get(combatId).rollAll();
  await gm.game.combats.get(combatId).rollAll();
  await gm.game.combats.get(combatId).startCombat();
  await settle(table);
  await endTurn(table, combatId);
  const before = assertClientsFollowPlan(table, combatId);
  const seqBefore = gm.module.state.sidecar.outbox.state.seq;

  await sidecar.stop();
  // play on while it is down: Foundry's own tracker keeps working, the outbox fills up
  await gm.game.combats.get(combatId).nextTurn();
  const s = gm.module.state.sidecar;
  await until(() => s.outbox.size >= 1, { what: "messages waiting in the outbox" }); // not a guessed sleep
  await sidecar.start();
  await settle(table, { timeout: 20000 });
  const plan = assertClientsFollowPlan(table, combatId);
  assert.ok(plan.revision > before.revision, "the sidecar planned the turn made while it was down");
  assert.equal(s.outbox.size, 0);
  assert.ok(s.outbox.state.acked > seqBefore, "the resent messages were acked");
  const seqs = table.sent.map((m) => m.data.seq);
  assert.deepEqual([...new Set(seqs)], [...new Set(seqs)].sort((a, b) => a - b), "seq strictly increasing");
  assert.ok(!gm.notifications.some((n) => n.message.includes("lost its history")));
  await endTurn(table, combatId);
  assertClientsFollowPlan(table, combatId);
  s.stop();
});

test("foundry-core: a sidecar restarted on a new database gets the state again and its plans are followed", async () => {
  const { table, gm, combatId } = await setup();
  await table.clients[ALICE].game.combats.get(combatId).rollAll();
  await table.clients[BOB].game.combats.get(combatId).rollAll();
  await gm.game.combats.get(combatId).rollAll();
  await gm.game.combats.get(combatId).startCombat();
  await settle(table);
  await endTurn(table, combatId);
  await endTurn(table, combatId);
  const before = assertClientsFollowPlan(table, combatId);

  await sidecar.stop();
  sidecar.db = `${sidecar.db}.new`; // the GM lost (or replaced) the database
  await sidecar.start();
  await until(() => gm.notifications.some((n) => n.message.includes("lost its history")),
    { what: "the GM to be told the sidecar lost its history", timeout: 20000 });
  await settle(table, { timeout: 20000 });
  const s = gm.module.state.sidecar;
  // the new sidecar numbers plans from 1 again: they must not be taken for stale ones
  await endTurn(table, combatId);
  const plan = assertClientsFollowPlan(table, combatId);
  assert.ok(plan.revision < before.revision, `a fresh revision count (${plan.revision} < ${before.revision})`);
  assert.equal(gm.module.state.applier.appliedRevision(combatId), plan.revision, "the new plan was applied");
  s.stop();
});
