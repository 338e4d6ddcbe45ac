// Playing a combat at the fake table against the real sidecar, with the checks every step needs.
import assert from "node:assert/strict";
import { until, GM, ALICE, BOB, newWorld, bootTable } from "./table.js";

/** A table connected to the sidecar with a combat of the party (the boss hidden). */
export async function setupCombat(sidecar, ruleset, worldId, worldOptions = {}) {
  const world = newWorld({ id: worldId, ...worldOptions });
  const table = bootTable(world, { url: sidecar.url, token: sidecar.token, ruleset, record: true });
  const gm = table.clients[GM];
  await until(() => gm.module.state.sidecar?.status === "connected", { what: "the GM to connect" });
  const combat = await world.createCombat(gm, {});
  await combat.createEmbeddedDocuments("Combatant", [...world.tokens.values()].map((t) => ({ actorId: t.actorId, tokenId: t._id, sceneId: "scene00000000001", hidden: t.name === "Hidden Boss" })));
  await settle(table);
  return { world, table, gm, combatId: combat.id };
}

/** End the current turn from the client of whoever owns the current combatant (GM for NPCs). */
export async function endTurn(table, combatId) {
  const gmCombat = table.clients[GM].game.combats.get(combatId);
  const actor = table.world.actors.get(gmCombat.combatant?.actorId);
  const owner = [ALICE, BOB].find((id) => actor?.ownership?.[id] >= 3) ?? GM;
  await table.clients[owner].game.combats.get(combatId).nextTurn();
  await settle(table);
  return owner;
}

/** A combatant id by actor name. */
export function idOf(table, combatId, name) {
  return table.clients[GM].game.combats.get(combatId).combatants.find((c) => c.name === name).id;
}

/** Wait until the GM's link is idle: outbox empty, nothing in flight, no plan being written. */
export async function settle(table, { timeout = 10000 } = {}) {
  const gm = table.clients[GM];
  let quiet = 0, lastLog = -1;
  await until(() => {
    const s = gm.module.state.sidecar;
    const idle = s && s.status === "connected" && s.outbox.size === 0 && !s.client?.pumping && gm.module.state.applier.running.size === 0;
    if (idle && table.world.log.length === lastLog) quiet += 1; else quiet = 0;
    lastLog = table.world.log.length;
    return quiet >= 5;
  }, { timeout, what: "the table to settle" });
}

/** The plan the GM applied last for a combat. */
export function lastPlan(table, combatId) {
  return table.clients[GM].module.state.applier.last.get(combatId);
}

/** Every client's order and current combatant equal the sidecar's plan. */
export function assertClientsFollowPlan(table, combatId) {
  const plan = lastPlan(table, combatId);
  assert.ok(plan, "a plan was applied");
  const order = plan.order.map((e) => e.combatant_id);
  for (const [id, client] of Object.entries(table.clients)) {
    const combat = client.game.combats.get(combatId);
    assert.deepEqual(combat.turns.map((c) => c.id), order, `client ${id}: turn order`);
    if (plan.round > 0) {
      assert.equal(combat.round, plan.round, `client ${id}: round`);
      assert.equal(combat.combatant?.id ?? null, plan.current, `client ${id}: current combatant`);
    }
    for (const entry of plan.order) {
      const state = combat.combatants.get(entry.combatant_id).flags["initiative-sidecar"]?.state;
      // a plain state (acts full, nothing else) is not written where none was: no flag means full
      assert.equal(state?.acts ?? "full", entry.acts, `client ${id}: flags of ${entry.combatant_id}`);
      assert.equal(combat.combatants.get(entry.combatant_id).initiative, entry.initiative, `client ${id}: initiative of ${entry.combatant_id}`);
    }
  }
  return plan;
}

/** Own writes per applied plan so far. */
export function writesPerPlan(table) {
  const own = table.world.log.filter((e) => e.own).length;
  const applier = table.clients[GM].module.state.applier;
  return { own, writes: applier.writes };
}
