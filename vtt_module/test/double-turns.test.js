// Turn order in the double: the system's comparator per world, `turns` cached and refreshed
// where Foundry refreshes it, combatant hooks before that refresh, `combatTurn` keeping the
// current combatant, `nextTurn` at round 0 (fake-foundry/README.md lists the sources).
import { test } from "node:test";
import assert from "node:assert/strict";
import { makeTable, addCombat, eachGeneration, coreSort, dnd5eSort, pf2eSort } from "./fake-foundry/index.js";

const ARIA = "tokAria000000001", TOLM = "tokTolm000000001", GOB_B = "tokGobA000000001", GOB_A = "tokGobB000000001", BOSS = "tokBoss000000001";
const byToken = (combat, tokenId) => combat.combatants.find((c) => c.tokenId === tokenId);
const names = (combat) => combat.turns.map((c) => c.name);
const ALL_TIED = { [ARIA]: 12, [TOLM]: 12, [GOB_B]: 12, [GOB_A]: 12, [BOSS]: 12 };

eachGeneration(test, "core sorts initiative descending, null last, ties by _id", async (generation) => {
  const t = makeTable({ generation, system: "worldbuilding" });
  const combat = await addCombat(t, { [ARIA]: 12, [TOLM]: 12, [GOB_B]: 20, [GOB_A]: 12 });
  const ids = combat.turns.map((c) => c.id);
  assert.equal(combat.turns[0].name, "Goblin B");
  assert.deepEqual(ids.slice(1, 4), [...ids.slice(1, 4)].sort(), "ties in _id order");
  assert.equal(combat.turns.at(-1).name, "Hidden Boss", "null last");
  assert.equal(coreSort({ id: "a", initiative: null }, { id: "b", initiative: null }), -1);
  assert.equal(coreSort({ id: "b", initiative: 3 }, { id: "a", initiative: 3 }), 1);
});

eachGeneration(test, "dnd5e breaks ties by base actor name (then id), then combatant name — never by _id", async (generation) => {
  const t = makeTable({ generation, system: "dnd5e" });
  const combat = await addCombat(t, ALL_TIED);
  assert.deepEqual(names(combat), ["Aria", "Brother Tolm", "Goblin A", "Goblin B", "Hidden Boss"]);
  // same tie, core would order by _id, which disagrees here
  const core = [...combat.turns].sort(coreSort).map((c) => c.name);
  assert.notDeepEqual(core, names(combat), "the fixture's ids make core's order differ");
  // both null: the same tie branch (a.initiative === b.initiative)
  const t2 = makeTable({ generation, system: "dnd5e" });
  const c2 = await addCombat(t2);
  assert.deepEqual(names(c2), ["Aria", "Brother Tolm", "Goblin A", "Goblin B", "Hidden Boss"]);
  assert.ok(dnd5eSort(byToken(combat, GOB_A), byToken(combat, GOB_B)) < 0);
});

eachGeneration(test, "pf2e breaks numeric ties by override priority, then the actor's tiebreakPriority (else 3), then id", async (generation) => {
  const t = makeTable({ generation, system: "pf2e" });
  const combat = await addCombat(t, ALL_TIED);
  const order = names(combat);
  assert.deepEqual(order.slice(0, 2).sort(), ["Goblin A", "Goblin B"], "tiebreakPriority 1 first");
  assert.deepEqual(order.slice(2, 4).sort(), ["Aria", "Brother Tolm"], "then 2");
  assert.equal(order[4], "Hidden Boss", "no initiative statistic: 3");
  const tolm = byToken(combat, TOLM);
  await tolm.update({ flags: { pf2e: { overridePriority: { 12: 0 } } } });
  assert.equal(names(combat)[0], "Brother Tolm", "an override for this initiative wins");
  assert.equal(pf2eSort({ id: "a", initiative: null, flags: {} }, { id: "b", initiative: 1, flags: {} }), Infinity, "not both numbers: core");
});

eachGeneration(test, "a world's sort can be chosen apart from its system, and every client sorts alike", async (generation) => {
  const t = makeTable({ generation, system: "dnd5e", sort: "core" });
  const combat = await addCombat(t, ALL_TIED);
  assert.deepEqual(combat.turns.map((c) => c.id), [...combat.turns].sort(coreSort).map((c) => c.id));
  for (const c of t.clients) assert.deepEqual(c.game.combats.get(combat.id).turns.map((x) => x.id), combat.turns.map((x) => x.id), c.userId);
  assert.equal(t.gm.CONFIG.Combat.documentClass.name, "Combat");
  assert.equal(makeTable({ generation, system: "pf2e" }).gm.CONFIG.Combat.documentClass.name, "EncounterPF2e");
});

eachGeneration(test, "the comparator is read from CONFIG.Combat.documentClass and passed unbound", async (generation) => {
  const t = makeTable({ generation });
  const combat = await addCombat(t, { [ARIA]: 1, [TOLM]: 2 });
  const proto = t.gm.CONFIG.Combat.documentClass.prototype;
  const thisSeen = new Set();
  const original = proto._sortCombatants;
  proto._sortCombatants = function (a, b) { thisSeen.add(this); return -original.call(undefined, a, b); };
  combat.setupTurns();
  assert.deepEqual([...thisSeen], [undefined]);
  assert.equal(combat.turns[0].name, "Hidden Boss", "reversed by the wrapper");
});

eachGeneration(test, "turns are cached: a combat flag or turn change does not re-sort; a combatants change does", async (generation) => {
  const t = makeTable({ generation });
  const combat = await addCombat(t, { [ARIA]: 10, [TOLM]: 5 });
  const turns = combat.turns;
  await combat.update({ flags: { x: 1 } });
  assert.equal(combat.turns, turns, "same array: no refresh");
  await combat.update({ combatants: [{ _id: byToken(combat, TOLM).id, initiative: 30 }] });
  assert.notEqual(combat.turns, turns);
  assert.equal(combat.turns[0].name, "Brother Tolm");
});

eachGeneration(test, "combatant hooks fire before the combat re-sorts: turns, turn and combatant are stale inside them", async (generation) => {
  const t = makeTable({ generation });
  const combat = await addCombat(t, { [ARIA]: 20, [TOLM]: 10, [GOB_A]: 5, [GOB_B]: 4, [BOSS]: 3 });
  await combat.startCombat();
  await combat.nextTurn(); // Tolm current
  const seen = [];
  for (const c of t.clients) {
    c.Hooks.on("updateCombatant", (doc) => { const d = doc.parent; seen.push({ hook: "update", first: d.turns[0].name, current: d.combatant?.name }); });
    c.Hooks.on("deleteCombatant", (doc) => { const d = doc.parent; seen.push({ hook: "delete", inTurns: d.turns.some((x) => x.id === doc.id), current: d.combatant?.name, inCollection: d.combatants.has(doc.id) }); });
    c.Hooks.on("createCombatant", (doc) => { const d = doc.parent; seen.push({ hook: "create", inTurns: d.turns.some((x) => x.id === doc.id) }); });
  }
  await byToken(combat, BOSS).update({ initiative: 50 });
  assert.deepEqual(seen.map((s) => [s.hook, s.first, s.current]), Array(3).fill(["update", "Aria", "Brother Tolm"]), "old order inside the hook");
  assert.equal(combat.turns[0].name, "Hidden Boss", "re-sorted after the hooks");
  assert.equal(combat.combatant.name, "Brother Tolm", "combatTurn kept the current combatant");
  seen.length = 0;
  await byToken(combat, TOLM).delete();
  for (const s of seen) assert.deepEqual(s, { hook: "delete", inTurns: true, current: "Brother Tolm", inCollection: false }, "the deleted combatant is still current inside deleteCombatant");
  assert.equal(seen.length, 3);
  seen.length = 0;
  await combat.createEmbeddedDocuments("Combatant", [{ actorId: "actGob0000000001", tokenId: GOB_A, initiative: 1 }]);
  assert.deepEqual(seen.map((s) => s.inTurns), [false, false, false], "not yet in turns inside createCombatant");
});

eachGeneration(test, "initiative changes keep the current combatant via options.combatTurn, without updateCombat", async (generation) => {
  const t = makeTable({ generation });
  const combat = await addCombat(t, { [ARIA]: 20, [TOLM]: 10, [GOB_A]: 5, [GOB_B]: 4, [BOSS]: 3 });
  await combat.startCombat();
  await combat.nextTurn();
  const opts = [], combatHooks = [];
  t.alice.Hooks.on("updateCombatant", (_d, _c, o) => opts.push(o));
  t.alice.Hooks.on("updateCombat", () => combatHooks.push(1));
  await byToken(combat, GOB_B).update({ initiative: 40 });
  assert.equal(opts[0].combatTurn, 2);
  assert.equal(opts[0].turnEvents, false);
  assert.deepEqual(combatHooks, []);
  for (const c of t.clients) assert.equal(c.game.combats.get(combat.id).combatant.name, "Brother Tolm", c.userId);
});

eachGeneration(test, "deleting the current combatant moves to the next survivor and fires combatTurnChange", async (generation) => {
  const t = makeTable({ generation });
  const combat = await addCombat(t, { [ARIA]: 20, [TOLM]: 10, [GOB_A]: 5, [GOB_B]: 4, [BOSS]: 3 });
  await combat.startCombat();
  await combat.nextTurn();
  const changes = [];
  t.bob.Hooks.on("combatTurnChange", (_c, prior, now) => changes.push([prior.combatantId, now.combatantId]));
  const tolm = byToken(combat, TOLM).id;
  await byToken(combat, TOLM).delete();
  for (const c of t.clients) assert.equal(c.game.combats.get(combat.id).combatant.name, "Goblin A", c.userId);
  assert.deepEqual(changes, [[tolm, byToken(combat, GOB_A).id]]);
});

eachGeneration(test, "nextTurn at round 0 goes to nextRound; skipDefeated skips forward only", async (generation) => {
  const t = makeTable({ generation });
  const combat = await addCombat(t, { [ARIA]: 20, [TOLM]: 10, [GOB_A]: 5 });
  const rounds = [];
  t.gm.Hooks.on("combatRound", (_c, data) => rounds.push({ ...data }));
  await combat.nextTurn();
  assert.deepEqual(rounds, [{ round: 1, turn: null }], "no current turn before the start: turn stays null");
  assert.equal(combat.round, 1);
  await combat.update({ turn: 0 });
  await t.gm.game.settings.set("core", "combatTrackerConfig", { resource: "", skipDefeated: true });
  await byToken(combat, TOLM).update({ defeated: true });
  await combat.nextTurn();
  assert.equal(combat.combatant.name, "Goblin A", "defeated Tolm skipped");
  await combat.previousTurn();
  assert.equal(combat.combatant.name, "Brother Tolm", "previousTurn does not skip");
});

eachGeneration(test, "pf2e's rollInitiative rolls the actor's own initiative (not the formula passed), writes flags.pf2e and then the turn", async (generation) => {
  const t = makeTable({ generation, system: "pf2e" });
  const combat = await addCombat(t, { [TOLM]: 30, [GOB_A]: 25 });
  await combat.startCombat(); // Tolm current
  const writes = [];
  t.gm.Hooks.on("updateCombatant", (_d, changed) => writes.push(["combatant", structuredClone(changed.flags?.pf2e)]));
  t.gm.Hooks.on("updateCombat", (_d, changed) => writes.push(["combat", changed.turn]));
  t.world.dice.script(28, 4);
  await combat.rollInitiative([byToken(combat, ARIA).id, byToken(combat, BOSS).id], { formula: "1d6 + 100" });
  assert.equal(byToken(combat, ARIA).initiative, 28, "1d20 + the statistic's modifier, not the formula");
  assert.deepEqual(byToken(combat, ARIA).flags.pf2e, { initiativeStatistic: "perception", overridePriority: {} });
  assert.equal(byToken(combat, BOSS).initiative, 104, "no initiative statistic: core's roll with the formula");
  assert.equal(combat.combatant.name, "Brother Tolm");
  assert.deepEqual(writes.map((w) => w[0]).slice(0, 1), ["combatant"], "initiatives first");
  await combat.setInitiative(byToken(combat, GOB_B).id, 50);
  assert.equal(byToken(combat, GOB_B).flags.pf2e.initiativeStatistic, "perception", "setInitiative goes through setMultipleInitiatives");
});
