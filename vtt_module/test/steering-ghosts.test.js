// Turn steering writes the new round's initiatives into the GM's own step (preUpdateCombat).
// A combatant another client deletes while that step is in flight is recreated by the step's
// row [F13 EmbeddedCollectionField: a row naming a missing combatant creates it; the double
// does the same, double-writes "unknown rows"]; the module deletes it again at once.
import { test } from "node:test";
import assert from "node:assert/strict";
import { bootTable, newWorld, GM } from "./helpers/table.js";

const M = "initiative-sidecar";

async function startedCombat(world, gm) {
  const combat = await world.createCombat(gm, {});
  await combat.createEmbeddedDocuments("Combatant", [...world.tokens.values()].map((t) => ({ actorId: t.actorId, tokenId: t._id })));
  const ids = combat.turns.map((c) => c.id);
  await combat.updateEmbeddedDocuments("Combatant", ids.map((id, i) => ({ _id: id, initiative: 20 - i })));
  await combat.startCombat();
  return combat;
}

/** The plan flag a sidecar would have written: round 2 reverses the order. */
function nextRoundFlag(combat) {
  const order = combat.turns.map((c, i) => ({ combatant_id: c.id, initiative: 5 + i }));
  return { [`flags.${M}.plan`]: { revision: 1, round: 1, current: combat.turns[0].id, next_round: { round: 2, current: order.at(-1).combatant_id, order } } };
}

for (const deleteMeanwhile of [true, false]) {
  test(`a combatant deleted while the GM's new-round step is in flight ${deleteMeanwhile ? "is not recreated" : "(control: nobody deletes) stays"}`, async () => {
    const world = newWorld();
    const t = bootTable(world);
    const gm = t.clients[GM];
    const combat = await startedCombat(world, gm);
    await combat.update(nextRoundFlag(combat));
    const victim = combat.turns[1].id;
    let deletion = null;
    gm.Hooks.on("preUpdateCombat", (_doc, changed) => {
      if (deleteMeanwhile && changed.round === 2 && !deletion) {
        assert.ok(changed.combatants?.some((r) => r._id === victim), "the step carries the victim's new initiative");
        // the server deletes it before the step lands (a deletion from any GM's client)
        deletion = world.deleteCombatants(gm, combat.id, [victim]);
      }
    });
    await combat.nextRound();
    await deletion;
    for (let i = 0; i < 5; i++) await world.tick();
    const master = world.combats.get(combat.id);
    assert.equal(master.round, 2);
    assert.equal(master.combatants.some((c) => c._id === victim), !deleteMeanwhile,
      deleteMeanwhile ? "the recreated ghost was deleted again" : "nothing deleted without a deletion");
    assert.equal(master.combatants.length, deleteMeanwhile ? 3 : 4);
  });
}

test("only the step's own update (its new round) closes its watch; another write of ours does not, and a step that never returns is dropped", async () => {
  const { PlanApplier } = await import("../scripts/applier.js");
  const deleted = [];
  const combatants = new Map([["a", {}], ["b", {}]]);
  const combat = { id: "cmb", combatants, async deleteEmbeddedDocuments(_t, ids) { deleted.push(...ids); for (const id of ids) combatants.delete(id); } };
  const applier = new PlanApplier({ game: { combats: new Map([["cmb", combat]]) } });
  applier.watchStep("cmb", ["a", "b"], 2);
  applier.deleted({ id: "b", parent: { id: "cmb" } });
  await applier.stepDone("cmb", { turn: 1, combatants: [] }); // a plan write of ours lands first
  assert.deepEqual(deleted, [], "not the step");
  await applier.stepDone("cmb", { round: 2, turn: 0 }); // the step: it recreated b
  assert.deepEqual(deleted, ["b"]);
  applier.watchStep("cmb", ["a"], 3);
  applier.dropStaleSteps(performance.now() + 61000);
  assert.equal([...applier.inflight].filter((w) => w.step).length, 0, "a step that never came back is dropped");
});
