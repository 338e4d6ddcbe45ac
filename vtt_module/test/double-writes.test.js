// The double's writes behave as Foundry's (fake-foundry/README.md lists the sources):
// only the difference travels, a no-op fires nothing, deletion syntax by generation, an
// unknown embedded id creates (parent update) or fails (embedded update), each client keeps
// its own copy.
import { test } from "node:test";
import assert from "node:assert/strict";
import { makeTable, addCombat, eachGeneration, GM, ALICE, BOB } from "./fake-foundry/index.js";

const ARIA = "tokAria000000001", TOLM = "tokTolm000000001";
const byToken = (combat, tokenId) => combat.combatants.find((c) => c.tokenId === tokenId);

function listen(clients, hooks) {
  const seen = [];
  for (const c of clients) for (const h of hooks) c.Hooks.on(h, (doc, changed) => seen.push({ user: c.userId, hook: h, changed: structuredClone(changed) }));
  return seen;
}

eachGeneration(test, "an update sends only the changed keys, nested ones too, to every client's hook", async (generation) => {
  const t = makeTable({ generation });
  const combat = await addCombat(t, { [ARIA]: 12 });
  const aria = byToken(combat, ARIA);
  await aria.update({ flags: { x: { a: 1, b: 2 } } });
  const seen = listen(t.clients, ["updateCombatant"]);
  await aria.update({ initiative: 12, hidden: false, flags: { x: { a: 1, b: 3 } } });
  assert.equal(seen.length, 3, "one hook per client");
  for (const s of seen) {
    assert.deepEqual(Object.keys(s.changed).sort(), ["_id", "_stats", "flags"], `${s.user}: unchanged keys dropped`);
    assert.deepEqual(s.changed.flags, { x: { b: 3 } }, `${s.user}: only the changed nested key`);
  }
});

eachGeneration(test, "a no-op update is not written and fires no hook on any client", async (generation) => {
  const t = makeTable({ generation });
  const combat = await addCombat(t, { [ARIA]: 12 });
  const seen = listen(t.clients, ["updateCombatant", "updateCombat"]);
  const before = t.world.updates;
  const preHooks = [];
  t.gm.Hooks.on("preUpdateCombatant", () => preHooks.push(1));
  await byToken(combat, ARIA).update({ initiative: 12 });
  await combat.update({ round: 0, flags: {} });
  await combat.updateEmbeddedDocuments("Combatant", [{ _id: byToken(combat, ARIA).id, initiative: 12 }]);
  assert.deepEqual(seen, []);
  assert.equal(t.world.updates, before, "nothing written");
  assert.equal(preHooks.length, 2, "the pre-hook still runs on the initiating client (the diff is taken after it)");
});

eachGeneration(test, "a reroll with the same total reaches no one; a flag with the same value neither", async (generation) => {
  const t = makeTable({ generation, system: "core-test" });
  const combat = await addCombat(t);
  const alice = t.alice.game.combats.get(combat.id);
  t.world.dice.script(15);
  await alice.rollInitiative([byToken(alice, ARIA).id]);
  const seen = listen(t.clients, ["updateCombatant"]);
  t.world.dice.script(15);
  await alice.rollInitiative([byToken(alice, ARIA).id]);
  assert.deepEqual(seen, [], "same total: no updateCombatant anywhere");
  assert.equal(t.world.chat.filter((m) => m.flags.core?.initiativeRoll).length, 2, "but a second chat card");
  await byToken(alice, ARIA).setFlag("mod", "mark", "r1");
  seen.length = 0;
  await byToken(alice, ARIA).setFlag("mod", "mark", "r1");
  assert.deepEqual(seen, []);
});

eachGeneration(test, "resetAll writes with diff: false, so its hook fires even without a change", async (generation) => {
  const t = makeTable({ generation });
  const combat = await addCombat(t);
  const seen = listen([t.gm], ["updateCombat"]);
  await combat.resetAll();
  assert.equal(seen.length, 1);
  assert.equal(seen[0].changed.combatants.length, combat.combatants.size);
});

eachGeneration(test, "combat.update({combatants}) merges rows by _id; an unknown _id creates a combatant and fires updateCombat only", async (generation) => {
  const t = makeTable({ generation });
  const combat = await addCombat(t, { [ARIA]: 12 });
  const seen = listen(t.clients, ["updateCombat", "updateCombatant", "createCombatant"]);
  const aria = byToken(combat, ARIA);
  await combat.update({ combatants: [{ _id: aria.id, initiative: 14 }, { _id: "ghost00000000001", initiative: 3, actorId: "actGob0000000001" }] });
  assert.deepEqual([...new Set(seen.map((s) => s.hook))], ["updateCombat"]);
  for (const c of t.clients) {
    const d = c.game.combats.get(combat.id);
    assert.equal(d.combatants.get(aria.id).initiative, 14, `${c.userId}: merged`);
    assert.ok(d.combatants.get("ghost00000000001"), `${c.userId}: the ghost exists`);
    assert.ok(d.turns.some((x) => x.id === "ghost00000000001"), `${c.userId}: turns refreshed ("combatants" in changed)`);
  }
  assert.equal(t.world.log.at(-1).created[0], "ghost00000000001");
});

eachGeneration(test, "updateEmbeddedDocuments with an unknown _id fails and changes nothing", async (generation) => {
  const t = makeTable({ generation });
  const combat = await addCombat(t, { [ARIA]: 12 });
  const before = t.world.updates;
  await assert.rejects(combat.updateEmbeddedDocuments("Combatant", [{ _id: byToken(combat, ARIA).id, initiative: 1 }, { _id: "ghost00000000001", initiative: 3 }]),
    /ghost00000000001\] does not exist in the EmbeddedCollection/);
  assert.equal(t.world.updates, before);
  assert.equal(byToken(combat, ARIA).initiative, 12);
  await assert.rejects(combat.deleteEmbeddedDocuments("Combatant", ["ghost00000000001"]), /does not exist/);
});

test("v13: -=key deletes a key, without a deprecation; there is no _del", async () => {
  const t = makeTable({ generation: 13 });
  const combat = await addCombat(t);
  const aria = byToken(combat, ARIA);
  await aria.update({ flags: { mod: { a: 1, b: 2 } } });
  await aria.update({ "flags.mod.-=a": null });
  assert.deepEqual(byToken(t.bob.game.combats.get(combat.id), ARIA).flags.mod, { b: 2 });
  assert.deepEqual(t.world.deprecations, []);
  assert.equal(t.gm.env._del, undefined);
  assert.equal(t.gm.env.foundry.data.operators, undefined);
});

test("v14: _del (ForcedDeletion) deletes a key on every client; -=key still works but is recorded as deprecated", async () => {
  const t = makeTable({ generation: 14 });
  const combat = await addCombat(t);
  const aria = byToken(combat, ARIA);
  const { _del } = t.gm.env;
  assert.ok(_del instanceof t.gm.env.foundry.data.operators.ForcedDeletion);
  await aria.update({ flags: { mod: { a: 1, b: 2, c: 3 } } });
  await aria.update({ "flags.mod.a": _del });
  assert.deepEqual(t.world.deprecations, []);
  for (const c of t.clients) assert.deepEqual(byToken(c.game.combats.get(combat.id), ARIA).flags.mod, { b: 2, c: 3 }, c.userId);
  await aria.update({ "flags.mod.-=b": null });
  assert.deepEqual(byToken(t.alice.game.combats.get(combat.id), ARIA).flags.mod, { c: 3 });
  assert.equal(t.world.deprecations.length, 1);
  assert.match(t.world.deprecations[0].message, /"-=" deletion syntax is deprecated/);
  assert.deepEqual([t.world.deprecations[0].since, t.world.deprecations[0].until], [14, 16]);
});

eachGeneration(test, "a GM and two players each keep their own copy, and a player may write only what Foundry lets it", async (generation) => {
  const t = makeTable({ generation });
  const combat = await addCombat(t, { [ARIA]: 10, [TOLM]: 11 });
  const views = t.clients.map((c) => c.game.combats.get(combat.id));
  assert.notEqual(views[0], views[1], "separate documents");
  await byToken(views[1], ARIA).update({ initiative: 17 });
  for (const v of views) assert.equal(byToken(v, ARIA).initiative, 17);
  await assert.rejects(byToken(views[1], TOLM).update({ initiative: 30 }), /may not update combatant/, "Alice does not own Tolm");
  await assert.rejects(byToken(views[2], TOLM).update({ name: "x" }), /may not update combatant keys name/);
  await assert.rejects(views[2].update({ active: false }), /may not update combat keys active/);
  assert.deepEqual(t.clients.map((c) => c.userId), [GM, ALICE, BOB]);
});

eachGeneration(test, "changes reach the other clients as diffs merged into their own copies, not as whole documents", async (generation) => {
  const t = makeTable({ generation });
  const combat = await addCombat(t, { [ARIA]: 10 });
  const bobAria = byToken(t.bob.game.combats.get(combat.id), ARIA);
  bobAria._source.flags.localOnly = true; // something only Bob's copy has
  await byToken(t.alice.game.combats.get(combat.id), ARIA).update({ initiative: 11 });
  assert.equal(bobAria.initiative, 11, "the change arrived");
  assert.equal(bobAria._source.flags.localOnly, true, "and was merged, not a replacement of Bob's copy");
  assert.equal(byToken(t.bob.game.combats.get(combat.id), ARIA), bobAria, "the same Combatant object");
});

test("client-scope settings are bounded like localStorage: a write past the quota throws and stores nothing", async () => {
  const t = makeTable({ storageQuota: 2000 });
  const { settings } = t.gm.game;
  settings.register("mod", "outbox", { scope: "client", default: [] });
  await settings.set("mod", "outbox", ["x".repeat(400)]);
  await assert.rejects(settings.set("mod", "outbox", ["x".repeat(1200)]), (e) => e.name === "QuotaExceededError");
  assert.equal(settings.get("mod", "outbox")[0].length, 400, "the old value stays");
});

eachGeneration(test, "settings by scope: world shared (GM writes), user per user (its own clients), client per browser", async (generation) => {
  const t = makeTable({ generation });
  for (const c of t.clients) {
    c.game.settings.register("mod", "w", { scope: "world", default: 0 });
    c.game.settings.register("mod", "u", { scope: "user", default: 0 });
    c.game.settings.register("mod", "c", { scope: "client", default: 0 });
  }
  await t.gm.game.settings.set("mod", "w", 1);
  await assert.rejects(t.alice.game.settings.set("mod", "w", 2), /only a GM/);
  await t.alice.game.settings.set("mod", "u", 3);
  await t.alice.game.settings.set("mod", "c", 4);
  assert.deepEqual(t.clients.map((c) => ["w", "u", "c"].map((k) => c.game.settings.get("mod", k))), [[1, 0, 0], [1, 3, 4], [1, 0, 0]]);
});

eachGeneration(test, "world and user settings are a server round trip: get answers the old value until the write comes back; client scope at once", async (generation) => {
  const answers = []; // the server answers each write when the test says, not after a time a loaded machine may outlast
  const t = makeTable({ generation, settingLatency: () => new Promise((r) => answers.push(r)) });
  const answer = async () => { while (!answers.length) await new Promise((r) => setImmediate(r)); answers.shift()(); };
  const changes = [];
  for (const c of t.clients) {
    c.game.settings.register("mod", "w", { scope: "world", default: {}, onChange: (v) => changes.push([c.userId, v]) });
    c.game.settings.register("mod", "u", { scope: "user", default: 0 });
    c.game.settings.register("mod", "c", { scope: "client", default: 0 });
  }
  const { settings } = t.gm.game;
  const value = { a: 1 };
  const first = settings.set("mod", "w", value);
  value.b = 2; // serialized at the call: a later change of the object is not sent
  const second = settings.set("mod", "w", { ...settings.get("mod", "w"), c: 3 }); // read before the first came back
  assert.deepEqual(settings.get("mod", "w"), {}, "the writer's own client still reads the old value");
  assert.deepEqual(changes, [], "no onChange before the server answers");
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(settings.get("mod", "w"), {}, "a tick later still the old value: the latency is not over");
  await answer();
  assert.deepEqual(await first, { a: 1, b: 2 }, "set resolves with the value given");
  assert.deepEqual(t.alice.game.settings.get("mod", "w"), { a: 1 }, "the first write, everywhere, once it came back");
  await answer();
  await second;
  assert.deepEqual(settings.get("mod", "w"), { c: 3 }, "the second write, built on the old value, drops the first");
  assert.equal(changes.length, 2 * t.clients.length, "onChange on every client for each write");
  const user = t.alice.game.settings.set("mod", "u", 5);
  assert.equal(t.alice.game.settings.get("mod", "u"), 0, "a user setting is a Setting document too");
  await answer();
  await user;
  assert.equal(t.alice.game.settings.get("mod", "u"), 5);
  const client = t.alice.game.settings.set("mod", "c", 6);
  assert.equal(t.alice.game.settings.get("mod", "c"), 6, "a client setting is in localStorage at once");
  await client;
});

eachGeneration(test, "without a latency a world setting still comes back a tick later", async (generation) => {
  const t = makeTable({ generation });
  for (const c of t.clients) c.game.settings.register("mod", "w", { scope: "world", default: 0 });
  const pending = t.gm.game.settings.set("mod", "w", 1);
  assert.equal(t.gm.game.settings.get("mod", "w"), 0);
  await pending;
  assert.equal(t.gm.game.settings.get("mod", "w"), 1);
});
