// A prompt dismissed (X or Escape) or lost with a reload is shown again when the sidecar
// repeats it (a duplicate ack carries its combat's pending prompts), so a reroll offer can
// still be answered instead of leaving the combatant reroll_pending for good.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { GM, ALICE, until, bootClient } from "./helpers/table.js";
import { SidecarProcess } from "./helpers/sidecar.js";
import { settle, setupCombat, idOf, lastPlan } from "./helpers/play.js";

let sidecar;
before(async () => { sidecar = await new SidecarProcess().start(); });
after(async () => { await sidecar?.stop(); });

const aria = (table, combatId) => lastPlan(table, combatId).order.find((e) => e.combatant_id === idOf(table, combatId, "Aria"));

/**
 * The sidecar repeats the combat's pending prompts: the GM's client sends again a message it
 * already stored (as after an ack lost on the way), which is acked `duplicate: true` with them.
 */
async function sidecarRepeats(table, combatId) {
  const stored = table.sent.findLast((m) => (m.data.combat?._id ?? m.data.combat_id) === combatId);
  const s = table.clients[GM].module.state.sidecar;
  s.outbox.state.pending.unshift(structuredClone({ event: stored.event, data: stored.data }));
  await s.client.pump();
  await settle(table);
}

/** Alice's Aria rolls a natural 3 (Int +4): a BI-2 reroll offer goes to Alice. */
async function offerToAlice(worldId) {
  const { world, table, gm, combatId } = await setupCombat(sidecar, "balanced-d20", worldId);
  world.dice.script(3);
  await table.clients[ALICE].game.combats.get(combatId).rollAll();
  await settle(table);
  await until(() => table.clients[ALICE].dialogs.length === 1, { what: "the offer on Alice's client" });
  return { world, table, gm, combatId };
}

test("a reroll offer the player closed, and the GM's approval the GM closed, come back when the sidecar repeats them and can be answered", async () => {
  const { world, table, gm, combatId } = await offerToAlice("dismiss-world");
  let alice = table.clients[ALICE];
  alice.respond = () => null; // the offer's dialog closed with its X: nothing is sent
  await until(() => alice.dialogs.length === 1);
  await settle(table);
  assert.ok(!table.sent.some((m) => m.data.kind === "reroll.decide"), "a closed dialog answers nothing");
  assert.ok(aria(table, combatId).tags.includes("reroll_pending"));
  alice.respond = () => true;
  await sidecarRepeats(table, combatId);
  await until(() => table.sent.some((m) => m.data.kind === "reroll.decide"), { what: "Alice's answer to the offer shown again" });
  assert.equal(alice.dialogs.length, 2, "the offer was shown again");
  // the approval goes to the GM, who closes it too
  gm.respond = () => null;
  await until(() => gm.dialogs.length === 1, { what: "the approval on the GM's client" });
  await settle(table);
  assert.ok(!table.sent.some((m) => m.data.kind === "reroll.approve"));
  gm.respond = () => true;
  world.dice.script(8);
  await sidecarRepeats(table, combatId);
  await until(() => table.sent.some((m) => m.data.roll?.reroll_of), { what: "the approval, then Alice's reroll" });
  await settle(table);
  assert.equal(gm.dialogs.length, 2, "the approval was shown again");
  assert.ok(!aria(table, combatId).tags.includes("reroll_pending"), "the reroll settled it");
  assert.equal(aria(table, combatId).initiative, 11, "the reroll (8 + Dex 3) stands");
});

test("a player who reloads during a reroll offer is shown it again when the sidecar repeats it", async () => {
  const { world, table, combatId } = await offerToAlice("reload-world");
  // Alice reloads with the dialog open: her page is gone, her answer never came
  world.disconnect(table.clients[ALICE]);
  const alice = bootClient(world, ALICE, { storage: table.clients[ALICE].storage, sent: table.sent, auths: table.auths });
  table.clients[ALICE] = alice;
  alice.respond = () => true;
  await sidecarRepeats(table, combatId);
  await until(() => table.sent.some((m) => m.data.kind === "reroll.decide" && m.data.user === ALICE), { what: "the reloaded Alice's answer" });
  assert.equal(alice.dialogs.length, 1);
});

test("an answer that never reached the sidecar (it was away) leaves the prompt to be shown again", async () => {
  const { newWorld, bootTable } = await import("./helpers/table.js");
  const world = newWorld({ id: "away-world" });
  const table = bootTable(world, { users: [GM, ALICE], token: "t0ken" }); // the sidecar's port is closed: the GM's link never connects
  const gm = table.clients[GM], alice = table.clients[ALICE];
  alice.respond = () => true;
  const prompt = { prompt_id: "prompt-9.1", kind: "reroll", combat_id: "cmb0000000000001", combatant_id: "cbt0000000000001", to: [ALICE], rule: "BI-2", data: { natural: 3, int: 4, total: 5, formula: "1d20 + 2" } };
  gm.module.state.sidecar.handlers.onPrompt(prompt);
  await until(() => alice.notifications.some((n) => /not connected/.test(n.message)), { what: "Alice told the sidecar is away" });
  gm.module.state.sidecar.handlers.onPrompt(prompt); // the sidecar repeats it once it is back
  await until(() => alice.dialogs.length === 2, { what: "the offer shown again" });
});
