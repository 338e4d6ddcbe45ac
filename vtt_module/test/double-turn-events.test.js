// The double's turn contract, corrected by issue 25 (sources in fake-foundry/turn-events.js and
// the README): isDefeated from the field or the actor's defeated status (correction 2); the
// order of combatTurnChange and updateCombat (4, in double-hooks.test.js); core's turn events,
// one per crossed turn with `skipped` (5); pf2e's _onUpdate automation and dnd5e's recovery (6);
// another module's direct turn write (8).
import { test } from "node:test";
import assert from "node:assert/strict";
import { makeTable, addCombat, eachGeneration, GM } from "./fake-foundry/index.js";

const ARIA = "tokAria000000001", TOLM = "tokTolm000000001", GOB_A = "tokGobA000000001", GOB_B = "tokGobB000000001", BOSS = "tokBoss000000001";
const INITS = { [ARIA]: 20, [TOLM]: 15, [GOB_A]: 10, [GOB_B]: 5, [BOSS]: 1 };
const byToken = (combat, tokenId) => combat.combatants.find((c) => c.tokenId === tokenId);

eachGeneration(test, "isDefeated: the defeated field, or the actor's defeated status set from the token HUD; core's nextTurn skips both", async (generation) => {
  const t = makeTable({ generation, system: "core" });
  const combat = await addCombat(t, INITS);
  await t.gm.game.settings.set("core", "combatTrackerConfig", { resource: "", skipDefeated: true });
  await combat.startCombat();
  const tolm = byToken(combat, TOLM);
  assert.equal(tolm.isDefeated, false);
  t.world.setStatus(tolm.actorId, "dead");
  assert.equal(tolm.isDefeated, true, "the actor's status");
  assert.equal(tolm.defeated, false, "the field is untouched");
  await combat.nextTurn();
  assert.equal(combat.combatant.tokenId, GOB_A, "core skips the actor marked dead");
  await byToken(combat, GOB_B).update({ defeated: true });
  assert.equal(byToken(combat, GOB_B).isDefeated, true, "the field");
});

eachGeneration(test, "core's turn events reach each token's region after the protected method, and a start clears the movement history; calling _onStartTurn itself reaches no region", async (generation) => {
  const t = makeTable({ generation, system: "core" });
  const combat = await addCombat(t, INITS);
  await combat.startCombat();
  for (const list of [t.world.regionEvents, t.world.movementCleared]) list.length = 0;
  await combat.update({ turn: 2 });
  const a = byToken(combat, ARIA).id, b = byToken(combat, TOLM).id, c = byToken(combat, GOB_A).id;
  assert.deepEqual(t.world.regionEvents.map((e) => [e.event, e.combatantId, e.skipped]), [
    ["tokenTurnEnd", a, false], ["tokenTurnStart", b, true], ["tokenTurnEnd", b, true], ["tokenTurnStart", c, false]]);
  assert.deepEqual(t.world.movementCleared, [b, c]);
  t.world.regionEvents.length = 0;
  await combat.nextRound();
  assert.deepEqual(t.world.regionEvents.filter((e) => e.event.startsWith("tokenRound")).map((e) => [e.event, e.round]),
    [...Object.keys(INITS).map(() => ["tokenRoundEnd", 1]), ...Object.keys(INITS).map(() => ["tokenRoundStart", 2])], "round events for every combatant's token");
  t.world.regionEvents.length = 0;
  await combat._onStartTurn(byToken(combat, BOSS), { round: 2, turn: 4, skipped: false });
  assert.deepEqual(t.world.regionEvents, [], "the protected method is the system's point only");
  assert.deepEqual(t.gm.env.CONST.REGION_EVENTS.TOKEN_TURN_START, "tokenTurnStart");
});

eachGeneration(test, "core's turn events: one per crossed turn, passed-over ones marked skipped, End Turn → End Round → Start Round → Start Turn, active GM only", async (generation) => {
  const t = makeTable({ generation, system: "core" });
  const combat = await addCombat(t, INITS);
  await combat.startCombat();
  t.world.turnEvents.length = 0;
  await combat.update({ turn: 3 });
  assert.deepEqual(t.world.turnEvents.map((e) => [e.event, e.turn, e.skipped]), [
    ["endTurn", 0, false], ["startTurn", 1, true], ["endTurn", 1, true], ["startTurn", 2, true], ["endTurn", 2, true], ["startTurn", 3, false]
  ]);
  t.world.turnEvents.length = 0;
  await combat.nextRound();
  assert.deepEqual(t.world.turnEvents.map((e) => [e.event, e.round, e.turn, e.skipped]), [
    ["endTurn", 1, 3, false], ["endTurn", 1, 4, true], ["endRound", 1, 3, false], ["startRound", 2, 0, false], ["startTurn", 2, 0, false]
  ]);
  t.world.turnEvents.length = 0;
  await combat.update({ turn: 2 }, { turnEvents: false });
  await combat.previousTurn();
  assert.deepEqual(t.world.turnEvents, [], "turnEvents: false, and a backward step, fire none");
});

eachGeneration(test, "core's turn events from a null turn: the null compares as 0, so index 0 starts nothing and index 2 passes over index 1; the same index with another combatant ends and starts", async (generation) => {
  const t = makeTable({ generation, system: "core" });
  const combat = await addCombat(t, INITS);
  await combat.startCombat();
  const walk = async (turn) => {
    await combat.update({ turn: null }, { turnEvents: false });
    t.world.turnEvents.length = 0;
    await combat.update({ turn });
    return t.world.turnEvents.map((e) => [e.event, e.turn, e.skipped]);
  };
  assert.deepEqual(await walk(0), [], "null → 0: no Start Turn");
  assert.deepEqual(await walk(1), [["startTurn", 1, false]]);
  assert.deepEqual(await walk(2), [["startTurn", 1, true], ["endTurn", 1, true], ["startTurn", 2, false]]);
  t.world.turnEvents.length = 0;
  // a parent update re-sorts: Goblin B slides to index 2, where the pointer stays
  await combat.update({ combatants: [{ _id: byToken(combat, GOB_B).id, initiative: 12 }] });
  assert.deepEqual(t.world.turnEvents.map((e) => [e.event, e.combatantId]), [["endTurn", byToken(combat, GOB_A).id], ["startTurn", byToken(combat, GOB_B).id]]);
});

eachGeneration(test, "dnd5e recovers uses at every Start Turn event, a skipped one included; a defeated combatant recovers nothing", async (generation) => {
  const t = makeTable({ generation, system: "dnd5e" });
  const combat = await addCombat(t, INITS);
  await combat.startCombat();
  t.world.recoveries.length = 0;
  await combat.update({ turn: 2 });
  assert.deepEqual(t.world.recoveries.filter((r) => r.period === "turnStart").map((r) => r.combatantId),
    [byToken(combat, TOLM).id, byToken(combat, GOB_A).id], "the passed-over combatant recovers too");
  await byToken(combat, GOB_B).update({ defeated: true });
  t.world.recoveries.length = 0;
  await combat.update({ turn: 3 });
  assert.deepEqual(t.world.recoveries.filter((r) => r.period === "turnStart"), []);
});

eachGeneration(test, "pf2e starts and ends turns only from changed.turn/changed.round moving forward, once per round each", async (generation) => {
  const t = makeTable({ generation, system: "pf2e" });
  const combat = await addCombat(t, INITS);
  await combat.startCombat();
  const id = (tok) => byToken(combat, tok).id;
  assert.deepEqual(t.world.pf2eTurns, [{ kind: "startTurn", combatantId: id(ARIA), round: 1 }]);
  await combat.nextTurn();
  assert.deepEqual(t.world.pf2eTurns.slice(1), [{ kind: "endTurn", combatantId: id(ARIA), round: 1 }, { kind: "startTurn", combatantId: id(TOLM), round: 1 }]);
  t.world.pf2eTurns.length = 0;
  // Goblin A placed above Tolm: a parent update re-sorts, the pointer index unchanged → pf2e sees no turn change
  await combat.update({ combatants: [{ _id: id(GOB_A), initiative: 18 }] });
  assert.equal(combat.combatant.tokenId, GOB_A);
  assert.deepEqual(t.world.pf2eTurns, [], "no start for the combatant now current");
  // a forward turn back to Tolm (now at 2): pf2e ends Goblin A's turn (never started) and does
  // not start Tolm's again (roundOfLastTurn is this round)
  await combat.update({ turn: 2 });
  assert.deepEqual(t.world.pf2eTurns, [{ kind: "endTurn", combatantId: id(GOB_A), round: 1 }]);
  t.world.pf2eTurns.length = 0;
  await combat.update({ turn: 1 });
  assert.deepEqual(t.world.pf2eTurns, [], "a backward index is never a start");
  // an embedded update keeps the current combatant through combatTurn: no updateCombat, nothing for pf2e
  await combat.updateEmbeddedDocuments("Combatant", [{ _id: id(BOSS), initiative: 30 }]);
  assert.deepEqual(t.world.pf2eTurns, []);
});

eachGeneration(test, "another module's direct turn write carries no direction and passes no turn hook", async (generation) => {
  const t = makeTable({ generation, system: "core" });
  const combat = await addCombat(t, INITS);
  await combat.startCombat();
  const seen = [];
  t.gm.Hooks.on("combatTurn", () => seen.push("combatTurn"));
  t.gm.Hooks.on("preUpdateCombat", (_c, _changed, options) => seen.push(`pre:${options.direction ?? "none"}`));
  await t.world.otherModuleSetsTurn(t.gm, combat.id, 3);
  assert.deepEqual(seen, ["pre:none"]);
  assert.equal(combat.turn, 3);
  assert.equal(t.gm.game.user.id, GM);
});

eachGeneration(test, "dnd5e groups tracker rows by getGroupingKey (the floored initiative, disposition, base actor), shown at the first member", async (generation) => {
  const t = makeTable({ generation, system: "dnd5e" });
  const combat = await addCombat(t, { [ARIA]: 15.4, [TOLM]: 3, [GOB_A]: 15.6, [GOB_B]: 15.2, [BOSS]: 1 });
  const gobA = byToken(combat, GOB_A), gobB = byToken(combat, GOB_B);
  assert.equal(gobA.getGroupingKey(), "0015:-1:actGob0000000001");
  assert.equal(gobB.getGroupingKey(), gobA.getGroupingKey(), "15.6 and 15.2 floor alike");
  assert.deepEqual([...combat.createGroups().values()].map((g) => g.combatants.map((c) => c.id)), [[gobA.id, gobB.id]]);
  t.gm.boot();
  const list = t.gm.ui.combat.element.querySelector(".combat-tracker");
  const shown = [...list.children].map((li) => (li.classList.contains("combatant-group") ? [...li.querySelectorAll("li[data-combatant-id]")].map((r) => r.dataset.combatantId) : li.dataset.combatantId));
  assert.deepEqual(shown, [[gobA.id, gobB.id], byToken(combat, ARIA).id, byToken(combat, TOLM).id, byToken(combat, BOSS).id],
    "the turn order is Goblin, Aria, Goblin: the group shows both goblins first");
  assert.deepEqual(combat.turns.map((c) => c.id).slice(0, 3), [gobA.id, byToken(combat, ARIA).id, gobB.id]);
});

eachGeneration(test, "a CombatantGroup with an initiative of its own overrides its members'; updateEmbeddedDocuments('CombatantGroup') re-sorts, the current combatant kept, an unknown id refused", async (generation) => {
  const t = makeTable({ generation, system: "core" });
  const combat = await addCombat(t, INITS);
  await combat.update({ groups: [{ _id: "grpA000000000001", type: "base", name: "Pack", initiative: null, flags: {} }] });
  const gobB = byToken(combat, GOB_B);
  await gobB.update({ group: "grpA000000000001" });
  assert.equal(gobB.initiative, 5, "a group without initiative: the member's own");
  await combat.startCombat();
  await combat.updateEmbeddedDocuments("CombatantGroup", [{ _id: "grpA000000000001", initiative: 30 }]);
  assert.equal(gobB.initiative, 30);
  assert.equal(combat.turns[0].id, gobB.id);
  assert.equal(combat.combatant.tokenId, ARIA, "Aria stays current");
  await assert.rejects(combat.updateEmbeddedDocuments("CombatantGroup", [{ _id: "nope000000000001", initiative: 1 }]), /does not exist/);
});
