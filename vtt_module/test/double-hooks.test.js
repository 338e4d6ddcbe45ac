// Hooks and messages in the double: `call` stops at false, `callAll` does not, handlers are
// not awaited; turn hooks on the initiating client only, post hooks on all; the module
// socket (fake-foundry/README.md lists the sources).
import { test } from "node:test";
import assert from "node:assert/strict";
import { makeTable, addCombat, eachGeneration, Hooks, GM, ALICE, BOB } from "./fake-foundry/index.js";

const ARIA = "tokAria000000001", TOLM = "tokTolm000000001";

test("Hooks: call stops at the first false, callAll runs all, once runs once, a promise is not awaited, errors are caught", async () => {
  const h = new Hooks();
  const ran = [];
  h.on("x", () => { ran.push(1); return false; });
  h.on("x", () => { ran.push(2); });
  assert.equal(h.call("x"), false);
  assert.deepEqual(ran, [1]);
  assert.equal(h.callAll("x"), true);
  assert.deepEqual(ran, [1, 1, 2]);
  h.once("y", () => ran.push("once"));
  h.callAll("y"); h.callAll("y");
  assert.equal(ran.filter((r) => r === "once").length, 1);
  let settled = false;
  h.on("z", async () => { await new Promise((r) => setTimeout(r, 5)); settled = true; });
  h.callAll("z");
  assert.equal(settled, false, "not awaited");
  const id = h.on("boom", () => { throw new Error("bad handler"); });
  const orig = console.error; console.error = () => {};
  try { h.callAll("boom"); } finally { console.error = orig; }
  assert.equal(h.errors.at(-1).error.message, "bad handler");
  h.off("boom", id);
  assert.equal(h.events.get("boom").length, 0);
});

eachGeneration(test, "turn hooks and pre-hooks run on the initiating client only; post hooks and combatTurnChange on every client", async (generation) => {
  const t = makeTable({ generation });
  const combat = await addCombat(t, { [ARIA]: 12, [TOLM]: 9 });
  const seen = [];
  for (const c of t.clients) for (const h of ["combatStart", "combatTurn", "combatRound", "preUpdateCombat", "updateCombat", "combatTurnChange"]) c.Hooks.on(h, () => seen.push(`${c.userId}:${h}`));
  await t.bob.game.combats.get(combat.id).startCombat();
  assert.deepEqual(seen.filter((s) => !s.endsWith("updateCombat") && !s.endsWith("TurnChange")), [`${BOB}:combatStart`, `${BOB}:preUpdateCombat`]);
  seen.length = 0;
  await t.alice.game.combats.get(combat.id).nextTurn();
  assert.deepEqual(seen, [`${ALICE}:combatTurn`, `${ALICE}:preUpdateCombat`, // the active GM: updateCombat, then (after the turn events) combatTurnChange; every other client:
  // combatTurnChange first, from Combat#_onUpdate (issue 25 correction 4, turn-events.js)
  `${GM}:updateCombat`, `${GM}:combatTurnChange`, ...[ALICE, BOB].flatMap((u) => [`${u}:combatTurnChange`, `${u}:updateCombat`])]);
  const opts = [];
  t.gm.Hooks.on("combatRound", (_c, data, o) => opts.push([data, o]));
  for (let i = 0; i < 10 && !opts.length; i++) await combat.nextTurn();
  assert.deepEqual(opts[0][0], { round: 2, turn: 0 }, "past the last turn: the next round");
  assert.equal(opts[0][1].direction, 1);
  assert.ok("delta" in opts[0][1].worldTime, "updateOptions carry {direction, worldTime: {delta}}");
});

eachGeneration(test, "a pre-hook returning false cancels the write; a pre-hook may mutate the change before the diff", async (generation) => {
  const t = makeTable({ generation });
  const combat = await addCombat(t, { [ARIA]: 12 });
  const aria = combat.combatants.find((c) => c.tokenId === ARIA);
  const id = t.gm.Hooks.on("preUpdateCombatant", () => false);
  await aria.update({ initiative: 3 });
  assert.equal(aria.initiative, 12);
  t.gm.Hooks.off("preUpdateCombatant", id);
  t.gm.Hooks.on("preUpdateCombatant", (_doc, changed) => { changed.initiative = 20; });
  await aria.update({ initiative: 3 });
  assert.equal(t.bob.game.combats.get(combat.id).combatants.get(aria.id).initiative, 20);
});

eachGeneration(test, "the module socket goes to every other client, or to recipients (the sender if listed), with the sender's id", async (generation) => {
  const t = makeTable({ generation });
  const got = [];
  for (const c of t.clients) c.game.socket.on("module.x", (data, sender) => got.push([c.userId, data.n, sender]));
  t.alice.game.socket.emit("module.x", { n: 1 });
  t.alice.game.socket.emit("module.x", { n: 2 }, { recipients: [ALICE, GM] });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(got.sort(), [[BOB, 1, ALICE], [GM, 1, ALICE], [GM, 2, ALICE], [ALICE, 2, ALICE]].sort());
});

test("setRole: updateUser fires on every client with the diff and who changed it; isGM follows the role", () => {
  const t = makeTable({ boot: true });
  const seen = [];
  for (const c of t.world.clients) c.Hooks.on("updateUser", (user, changed, options, userId) => seen.push({ on: c.userId, user: user.id, changed, action: options.action, userId }));
  assert.equal(t.alice.game.users.get(ALICE).isGM, false);
  t.world.setRole(ALICE, 3);
  assert.equal(seen.length, t.world.clients.length);
  for (const s of seen) assert.deepEqual({ user: s.user, changed: s.changed, action: s.action, userId: s.userId }, { user: ALICE, changed: { role: 3, _id: ALICE }, action: "update", userId: GM });
  assert.equal(t.gm.game.users.get(ALICE).isGM, true);
  assert.equal(t.gm.game.users.get(ALICE).role, 3);
});
