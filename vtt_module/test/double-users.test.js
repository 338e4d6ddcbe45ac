// Users created and deleted mid-session in the double (fake-foundry/README.md lists the sources).
import { test } from "node:test";
import assert from "node:assert/strict";
import { makeTable, GM, ALICE } from "./fake-foundry/index.js";

test("createUser: the user is in every client's game.users when createUser fires there, with the operation and the creating GM's id", () => {
  const t = makeTable({ boot: true });
  const seen = [];
  for (const c of t.world.clients) {
    c.Hooks.on("createUser", (user, options, userId) => seen.push({ on: c.userId, user: user.id, isGM: user.isGM, inCollection: c.game.users.has(user.id), action: options.action, userId }));
  }
  const u = t.world.createUser({ name: "Assistant", role: 3 });
  assert.equal(seen.length, t.world.clients.length, "on every client");
  for (const s of seen) assert.deepEqual({ user: s.user, isGM: s.isGM, inCollection: s.inCollection, action: s.action, userId: s.userId }, { user: u._id, isGM: true, inCollection: true, action: "create", userId: GM });
  assert.equal(t.alice.game.users.get(u._id).active, false, "a new user is not logged in");
});

test("deleteUser: the user is gone from every client's game.users when deleteUser fires there with the deleted document", () => {
  const t = makeTable({ boot: true });
  const u = t.world.createUser({ name: "Assistant", role: 3 });
  const seen = [];
  for (const c of t.world.clients) {
    c.Hooks.on("deleteUser", (user, options, userId) => seen.push({ user: user.id, isGM: user.isGM, inCollection: c.game.users.has(user.id), action: options.action, userId }));
  }
  t.world.deleteUser(u._id);
  assert.equal(seen.length, t.world.clients.length);
  for (const s of seen) assert.deepEqual(s, { user: u._id, isGM: true, inCollection: false, action: "delete", userId: GM });
  assert.equal(t.gm.game.users.get(u._id), undefined);
});

test("a client connecting mid-combat (a reload) has the world's combats in the system's order", async () => {
  const t = makeTable({ boot: true, system: "dnd5e" });
  const combat = await t.world.createCombat(t.gm, {});
  await combat.createEmbeddedDocuments("Combatant", [...t.world.tokens.values()].map((tk) => ({ actorId: tk.actorId, tokenId: tk._id })));
  const late = t.world.connect(ALICE);
  assert.deepEqual(late.game.combats.get(combat.id).turns.map((c) => c.id), t.gm.game.combats.get(combat.id).turns.map((c) => c.id));
});
