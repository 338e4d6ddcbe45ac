// The fake Foundry behaves as the research notes say, and the module without a sidecar.
import { test } from "node:test";
import assert from "node:assert/strict";
import { newWorld, bootTable, GM, ALICE, BOB, until } from "./helpers/table.js";
import { freePort } from "./helpers/sidecar.js";

async function combatOf(world, gm) {
  const combat = await world.createCombat(gm, {});
  await combat.createEmbeddedDocuments("Combatant", [...world.tokens.values()].map((t) => ({ actorId: t.actorId, tokenId: t._id })));
  return combat;
}

test("pre-update and turn hooks fire on the initiating client only, post-update hooks on all", async () => {
  const world = newWorld({ id: "fake-1" });
  const gm = world.connect(GM), alice = world.connect(ALICE);
  const seen = [];
  for (const [name, c] of [["gm", gm], ["alice", alice]]) {
    for (const hook of ["preUpdateCombat", "combatTurn", "combatStart", "updateCombat", "combatTurnChange"]) c.Hooks.on(hook, () => seen.push(`${name}:${hook}`));
  }
  const combat = await combatOf(world, gm);
  world.dice.script(10, 12, 14, 16);
  await combat.rollAll();
  await combat.startCombat();
  seen.length = 0;
  await alice.game.combats.get(combat.id).nextTurn();
  assert.deepEqual(seen, ["alice:combatTurn", "alice:preUpdateCombat", "gm:updateCombat", "gm:combatTurnChange", "alice:combatTurnChange", "alice:updateCombat"]);
});

test("Foundry's sort and options.combatTurn keep the current combatant when initiatives change", async () => {
  const world = newWorld({ id: "fake-2" });
  const gm = world.connect(GM);
  const combat = await combatOf(world, gm);
  world.dice.script(10, 12, 14, 16);
  await combat.rollAll();
  await combat.startCombat();
  const current = combat.combatant.id;
  const before = world.updates;
  await combat.setInitiative(combat.turns.at(-1).id, 40);
  assert.equal(combat.combatant.id, current);
  assert.equal(world.updates, before + 1);
  assert.deepEqual(combat.turns.map((c) => c.initiative), [...combat.turns.map((c) => c.initiative)].sort((a, b) => b - a));
});

test("the module socket stamps the sender id; players may not write others' combatants", async () => {
  const world = newWorld({ id: "fake-3" });
  const gm = world.connect(GM), alice = world.connect(ALICE);
  const got = [];
  gm.game.socket.on("module.initiative-sidecar", (data, sender) => got.push([data, sender]));
  alice.game.socket.emit("module.initiative-sidecar", { user: "forged" }, { recipients: [GM] });
  await until(() => got.length);
  assert.equal(got[0][1], ALICE);
  const combat = await combatOf(world, gm);
  const goblin = alice.game.combats.get(combat.id).combatants.find((c) => c.name === "Goblin");
  await assert.rejects(goblin.update({ initiative: 30 }));
});

test("without the sidecar the GM is told once, Foundry's tracker keeps working, and nothing is lost", async () => {
  const world = newWorld({ id: "fake-4" });
  const port = await freePort();
  const table = bootTable(world, { url: `http://127.0.0.1:${port}`, token: "t0ken" });
  const gm = table.clients[GM];
  await until(() => gm.notifications.length, { what: "a notification" });
  await new Promise((r) => setTimeout(r, 1500)); // several reconnect attempts
  assert.equal(gm.notifications.filter((n) => n.message.includes(`127.0.0.1:${port}`)).length, 1, "told once, naming the URL");
  assert.ok(!gm.notifications.some((n) => n.message.includes("t0ken")), "the token is never shown");
  assert.equal(table.clients[ALICE].notifications.length, 0, "players are not bothered");
  const combat = await combatOf(world, gm);
  world.dice.script(10, 12, 14, 16);
  await combat.rollAll();
  await combat.startCombat();
  await table.clients[BOB].game.combats.get(combat.id).nextTurn();
  assert.equal(combat.turn, 1, "Foundry's own turn order still works");
  assert.ok(gm.module.state.sidecar.outbox.size >= 6, "messages wait in the outbox");
  assert.deepEqual(gm.storage.get("initiative-sidecar.unsent"), { [world.id]: true }, "the browser keeps only that this world has messages unsent, never the messages");
  assert.equal(table.clients[ALICE].module.state.sidecar, null, "only the active GM forwards");
  gm.module.state.sidecar.stop();
});

test("a player's action without a GM online is refused with a notice", async () => {
  const world = newWorld({ id: "fake-5" });
  const table = bootTable(world, { users: [ALICE] });
  world.users.find((u) => u._id === GM).active = false;
  const r = await table.clients[ALICE].api.request({ kind: "hold", combat_id: "c", combatant_id: "x", args: {} });
  assert.equal(r.ok, false);
  assert.equal(table.clients[ALICE].notifications.length, 1);
});
