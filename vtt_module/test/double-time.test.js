// World time in the double: `Combat#getTimeDelta` and the `worldTime: {delta}` a turn step
// carries, which the "server" adds to the world's clock when the update is written
// (fake-foundry/README.md lists the sources: research §1.1; F13 `client/documents/combat.mjs`
// getTimeDelta, nextTurn, nextRound; F13 `dist/database/documents/combat.mjs`
// `_onUpdateOperation`; T13 13.345.1 / types 14.366 `combat.d.mts`; D14 Combat,
// hookEvents.combatTurn/combatRound).
import { test } from "node:test";
import assert from "node:assert/strict";
import { makeTable, addCombat, eachGeneration } from "./fake-foundry/index.js";

const ARIA = "tokAria000000001", TOLM = "tokTolm000000001", GOB_A = "tokGobA000000001", GOB_B = "tokGobB000000001", BOSS = "tokBoss000000001";
const ALL = { [ARIA]: 20, [TOLM]: 16, [GOB_A]: 12, [GOB_B]: 8, [BOSS]: 4 }; // five turns a round

async function timedTable(generation, { roundTime = 6, turnTime = 1 } = {}) {
  const t = makeTable({ generation });
  t.world.roundTime = roundTime;
  t.world.turnTime = turnTime;
  const combat = await addCombat(t, ALL);
  return { t, combat };
}

eachGeneration(test, "getTimeDelta: a round's time per round begun, a turn's per turn passed, negative going back", async (generation) => {
  const { combat } = await timedTable(generation);
  assert.equal(combat.turns.length, 5);
  assert.equal(combat.getTimeDelta(1, 0, 1, 1), 1, "one turn on");
  assert.equal(combat.getTimeDelta(1, 1, 1, 4), 3, "three turns on");
  assert.equal(combat.getTimeDelta(1, 3, 2, 0), 6 + 2, "into the next round: a round and the two turns left of the old one");
  assert.equal(combat.getTimeDelta(1, 1, 2, 2), 6 + 4 + 2, "into the next round, two turns in");
  assert.equal(combat.getTimeDelta(1, 4, 3, 0), 12 + 1 + 5, "two rounds on: the rest of the old one and a whole one");
  assert.equal(combat.getTimeDelta(0, null, 1, 0), 0, "the start: no time");
  assert.equal(combat.getTimeDelta(0, null, 1, 2), 2, "the start on the third turn: its turns only");
  assert.equal(combat.getTimeDelta(1, null, 2, null), 6, "a combat without a turn: rounds only");
  assert.equal(combat.getTimeDelta(2, 2, 2, 1), -1, "one turn back");
  assert.equal(combat.getTimeDelta(2, 1, 1, 4), -6 - 2, "back into the last turn of the round before");
  assert.equal(combat.getTimeDelta(1, 2, 0, null), -3, "back before the start");
});

eachGeneration(test, "turn steps carry the delta of the step proposed, and the write moves the world's clock by it on every client", async (generation) => {
  const { t, combat } = await timedTable(generation);
  const options = [];
  t.gm.Hooks.on("combatTurn", (_c, data, o) => options.push(["turn", { ...data }, structuredClone(o)]));
  t.gm.Hooks.on("combatRound", (_c, data, o) => options.push(["round", { ...data }, structuredClone(o)]));
  await combat.startCombat();
  assert.equal(t.world.worldTime, 0, "starting carries no worldTime");
  await combat.nextTurn();
  assert.deepEqual(options.at(-1), ["turn", { round: 1, turn: 1 }, { direction: 1, worldTime: { delta: 1 } }]);
  assert.equal(t.world.worldTime, 1);
  await combat.nextTurn(); await combat.nextTurn(); await combat.nextTurn(); // on the last turn (4)
  assert.equal(t.world.worldTime, 4);
  await combat.nextTurn(); // past the last turn: the next round
  assert.deepEqual(options.at(-1), ["round", { round: 2, turn: 0 }, { direction: 1, worldTime: { delta: 6 + 1 } }]);
  assert.equal(t.world.worldTime, 11);
  for (const c of t.clients) assert.equal(c.game.time.worldTime, 11, `client ${c.userId} reads the world's clock`);
  await combat.previousTurn(); // back into the last turn of round 1
  assert.deepEqual(options.at(-1), ["round", { round: 1, turn: 4 }, { direction: -1, worldTime: { delta: -6 - 1 } }]);
  assert.equal(t.world.worldTime, 4);
  await combat.nextRound();
  assert.deepEqual(options.at(-1), ["round", { round: 2, turn: 0 }, { direction: 1, worldTime: { delta: 6 + 1 } }]);
  assert.equal(t.world.worldTime, 11);
});

eachGeneration(test, "world time moves only with a written update that carries worldTime (or a legacy advanceTime); a pre-hook may change the delta", async (generation) => {
  const { t, combat } = await timedTable(generation);
  await combat.startCombat();
  await combat.update({ turn: 2 });
  assert.equal(t.world.worldTime, 0, "a plain update({turn}) carries no time");
  await combat.update({ turn: 2 }, { worldTime: { delta: 30 } });
  assert.equal(t.world.worldTime, 0, "a no-op update is not written: no time");
  await combat.update({ turn: 3 }, { advanceTime: 5 });
  assert.equal(t.world.worldTime, 5, "advanceTime without worldTime counts as its delta");
  const id = t.gm.Hooks.on("preUpdateCombat", (_c, _changed, options) => { options.worldTime = { ...options.worldTime, delta: 60 }; });
  await combat.nextTurn();
  t.gm.Hooks.off("preUpdateCombat", id);
  assert.equal(t.world.worldTime, 65, "the delta as the pre-hook left it");
});
