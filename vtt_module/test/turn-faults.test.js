// Issue 25's turn faults, each against the corrected double (fake-foundry/turn-events.js) with the
// module booted on every client: a combatant marked Dead from the token HUD gets no turn (fault
// 2), "no one's turn" survives Next Round (fault 3), pf2e's turn automation sees no turn end in
// the middle of a turn (fault 4), and the lows of the turns half: a direct turn write is not
// steered, plan writes fire updateCombatant, a round begun by a rule moves the clock and fires the
// round events as core's nextRound does.
import { test } from "node:test";
import assert from "node:assert/strict";
import { World, eachGeneration } from "./fake-foundry/index.js";
import { bootTable, party, GM, ALICE } from "./helpers/table.js";

const M = "initiative-sidecar";
const SKIPPED = ["defend_only", "held", "none"];
const NAMES = ["Aria", "Brother Tolm", "Goblin", "Hidden Boss"];
const INITS = [20, 15, 10, 5];

/** A world of the party, the module booted on the GM and Alice; a combat of all four, in that order. */
async function table(generation, system = "core", { skipDefeated = false } = {}) {
  const { actors, tokens } = party();
  const world = new World({
    id: `faults-${system}-${generation}`, generation, system,
    users: [{ _id: GM, name: "GM", role: World.ROLES.GAMEMASTER }, { _id: ALICE, name: "Alice", role: World.ROLES.PLAYER }],
    actors, tokens
  });
  world.worldSettings.set(`${M}.sidecarRules`, { ruleset: "storyteller", intents: [], skipped_acts: SKIPPED });
  world.worldSettings.set("core.combatTrackerConfig", { resource: "", skipDefeated });
  const t = bootTable(world, { users: [GM, ALICE] });
  const gm = t.clients[GM];
  const combat = await world.createCombat(gm, {});
  await combat.createEmbeddedDocuments("Combatant", tokens.map((tk) => ({ actorId: tk.actorId, tokenId: tk._id })));
  const ids = Object.fromEntries(NAMES.map((n) => [n, combat.combatants.find((c) => c.name === n).id]));
  await combat.updateEmbeddedDocuments("Combatant", NAMES.map((n, i) => ({ _id: ids[n], initiative: INITS[i] })));
  // no sidecar here: plans are handed to the GM's applier directly, none waits for an answer
  const applier = gm.module.state.applier;
  applier.hooks.awaiting = () => false;
  return { world, gm, alice: t.clients[ALICE], combat, ids, applier };
}

const entry = (id, initiative, acts = "full") => ({ combatant_id: id, initiative, acts, reaction: null, tags: acts === "held" ? ["held"] : [], detail: {}, rules: [] });
const planOf = (combat, revision, round, current, order, next_round = null) => ({ combat_id: combat.id, revision, round, current, next_round, order });

// ------------------------------------------------------------------ fault 2
eachGeneration(test, "fault 2: a combatant marked Dead from the token HUD gets no turn at a new round, under foundry-core", async (generation) => {
  const { world, combat, ids } = await table(generation, "core", { skipDefeated: true });
  await combat.startCombat();
  await combat.update({ turn: 3 });
  world.setStatus(combat.combatants.get(ids.Aria).actorId, "dead");
  await combat.nextTurn();
  assert.equal(combat.round, 2);
  assert.equal(combat.combatant.id, ids["Brother Tolm"], "core skips Aria (isDefeated), and so does the module");
});

eachGeneration(test, "fault 2: steering past a held turn does not land on a combatant the actor's status marks defeated", async (generation) => {
  const { world, combat, ids, applier } = await table(generation, "core", { skipDefeated: true });
  await combat.startCombat();
  await applier.take(planOf(combat, 1, 1, ids.Aria, [entry(ids.Aria, 20), entry(ids["Brother Tolm"], 15, "held"), entry(ids.Goblin, 10), entry(ids["Hidden Boss"], 5)]));
  world.setStatus(combat.combatants.get(ids.Goblin).actorId, "dead");
  await combat.nextTurn();
  assert.equal(combat.combatant.id, ids["Hidden Boss"], "Tolm holds, the Goblin is dead: the Boss");
});

// ------------------------------------------------------------------ fault 3
eachGeneration(test, "fault 3: a started combat with no one's turn keeps no one's turn at Next Round", async (generation) => {
  const { combat, alice } = await table(generation, "core");
  await combat.startCombat();
  await combat.update({ turn: null }); // lancer, daggerheart: popcorn play leaves the turn unset
  await combat.nextRound();
  assert.equal(combat.round, 2);
  assert.equal(combat.turn, null, "the GM's Next Round");
  await alice.game.combats.get(combat.id).nextRound();
  assert.equal(combat.round, 3);
  assert.equal(combat.turn, null, "a player's Next Round");
});

// ------------------------------------------------------------------ fault 4
eachGeneration(test, "fault 4: pf2e does not end the current turn when a plan places someone above the current combatant", async (generation) => {
  const { world, combat, ids, applier } = await table(generation, "pf2e");
  await combat.startCombat();
  await combat.nextTurn();
  assert.equal(combat.combatant.id, ids["Brother Tolm"]);
  world.pf2eTurns.length = 0;
  world.turnEvents.length = 0;
  // the Goblin dashes above Tolm mid-turn: Tolm's index grows, Tolm stays current
  await applier.take(planOf(combat, 1, 1, ids["Brother Tolm"], [entry(ids.Aria, 20), entry(ids.Goblin, 18), entry(ids["Brother Tolm"], 15), entry(ids["Hidden Boss"], 5)]));
  assert.equal(combat.combatant.id, ids["Brother Tolm"]);
  assert.equal(combat.turn, 2);
  assert.deepEqual(world.pf2eTurns, [], "no endTurn (Frightened would drop), no start");
  assert.deepEqual(world.turnEvents, [], "no core turn events either");
  await combat.nextTurn();
  assert.deepEqual(world.pf2eTurns.map((e) => [e.kind, e.combatantId]), [["endTurn", ids["Brother Tolm"]], ["startTurn", ids["Hidden Boss"]]],
    "Tolm's turn ends once, when it ends");
});

eachGeneration(test, "fault 4: an interrupter placed at the current combatant's place gets its start of turn, once, and the interrupted turn does not end", async (generation) => {
  const { world, combat, ids, applier } = await table(generation, "pf2e");
  await combat.startCombat();
  await combat.nextTurn();
  world.pf2eTurns.length = 0;
  world.turnEvents.length = 0;
  // the Goblin acts before Tolm (ST-2): placed at Tolm's index, made current
  await applier.take(planOf(combat, 1, 1, ids.Goblin, [entry(ids.Aria, 20), entry(ids.Goblin, 16), entry(ids["Brother Tolm"], 15), entry(ids["Hidden Boss"], 5)]));
  assert.equal(combat.combatant.id, ids.Goblin);
  assert.deepEqual(world.pf2eTurns.map((e) => [e.kind, e.combatantId]), [["startTurn", ids.Goblin]]);
  assert.deepEqual(world.turnEvents.map((e) => [e.event, e.combatantId, e.skipped]), [["startTurn", ids.Goblin, false]]);
  await combat.nextTurn(); // back to Tolm: the Goblin's turn ends, Tolm's (already begun) is not begun again by pf2e
  assert.deepEqual(world.pf2eTurns.slice(1).map((e) => [e.kind, e.combatantId]), [["endTurn", ids.Goblin]]);
});

/** Core's turn events as a system sees them, the Region events, and dnd5e's recoveries, by name; then cleared. */
function seen(world, ids) {
  const name = (id) => NAMES.find((n) => ids[n] === id) ?? null;
  const out = {
    events: world.turnEvents.map((e) => [e.event, name(e.combatantId), e.skipped]),
    regions: world.regionEvents.map((e) => [e.event, name(e.combatantId), e.skipped]).filter((e) => e[0].startsWith("tokenTurn")),
    recovered: world.recoveries.map((r) => [r.period, name(r.combatantId)])
  };
  for (const list of [world.turnEvents, world.regionEvents, world.recoveries]) list.length = 0;
  return out;
}
/** The active GM's turn events run after the update, as core's do (not awaited by the writer). */
const settle = () => new Promise((r) => setImmediate(r));
const start = (n) => ["startTurn", n, false], end = (n) => ["endTurn", n, false];
const regionStart = (n) => ["tokenTurnStart", n, false], regionEnd = (n) => ["tokenTurnEnd", n, false];

/** dnd5e: the Boss interrupts (ST-2) once `steps` Next Turns have passed, its initiative `init`; who saw what. */
async function interrupt(generation, steps, init) {
  const t = await table(generation, "dnd5e");
  const { world, combat, ids, applier } = t;
  await combat.startCombat();
  for (let k = 0; k < steps; k++) await combat.nextTurn();
  seen(world, ids);
  const order = [entry(ids.Aria, 20), entry(ids["Brother Tolm"], 15), entry(ids.Goblin, 10), entry(ids["Hidden Boss"], init)].sort((a, b) => b.initiative - a.initiative);
  t.interrupted = combat.combatant.id;
  await applier.take(planOf(combat, 1, 1, ids["Hidden Boss"], order));
  await settle();
  assert.equal(combat.combatant.id, ids["Hidden Boss"]);
  t.order = order;
  return { ...t, ...seen(world, ids) };
}

eachGeneration(test, "fault 4 (a): an interrupter gets its Start Turn once, at any index, and nobody else gets an event (dnd5e recovery, regions)", async (generation) => {
  for (const [steps, init, index] of [[1, 25, 0], [2, 16, 1], [2, 12, 2]]) {
    const { combat, events, regions, recovered } = await interrupt(generation, steps, init);
    assert.equal(combat.turn, index);
    assert.deepEqual(events, [start("Hidden Boss")], `index ${index}: the interrupter's Start Turn alone; the interrupted turn does not end`);
    assert.deepEqual(regions, [regionStart("Hidden Boss")], `index ${index}: regions see the same`);
    assert.deepEqual(recovered, [["turnStart", "Hidden Boss"]], `index ${index}: no one who already acted recovers again`);
  }
});

eachGeneration(test, "fault 4 (c): an interrupted turn resumes without a second Start Turn, by Next Turn or by the plan", async (generation) => {
  for (const how of ["next turn", "plan"]) {
    const { world, combat, ids, applier, interrupted, order } = await interrupt(generation, 2, 12);
    if (how === "next turn") await combat.nextTurn();
    else await applier.take(planOf(combat, 2, 1, interrupted, order));
    await settle();
    assert.equal(combat.combatant.id, ids.Goblin);
    const after = seen(world, ids);
    assert.deepEqual(after.events, [end("Hidden Boss")], `${how}: the interrupter's turn ends, the Goblin's is not begun again`);
    assert.deepEqual(after.regions, [regionEnd("Hidden Boss")], how);
    assert.deepEqual(after.recovered, [["turnEnd", "Hidden Boss"]], how);
    await combat.nextTurn();
    await settle();
    assert.deepEqual(seen(world, ids).events.slice(0, 2), [end("Goblin"), ["endRound", null, false]], `${how}: the Goblin's turn ends once, when it ends`);
  }
});

eachGeneration(test, "fault 4 (b): a holder passed over by steering or by a rule's jump gets no turn event (dnd5e recovery, regions)", async (generation) => {
  for (const how of ["GM's Next Turn", "player's Next Turn", "plan"]) {
    const { world, combat, ids, applier, alice } = await table(generation, "dnd5e");
    await combat.startCombat();
    const order = [entry(ids.Aria, 20), entry(ids["Brother Tolm"], 15, "held"), entry(ids.Goblin, 10), entry(ids["Hidden Boss"], 5)];
    await applier.take(planOf(combat, 1, 1, ids.Aria, order));
    seen(world, ids);
    if (how === "plan") await applier.take(planOf(combat, 2, 1, ids.Goblin, order));
    else await (how === "GM's Next Turn" ? combat : alice.game.combats.get(combat.id)).nextTurn();
    await settle();
    assert.equal(combat.combatant.id, ids.Goblin, how);
    const got = seen(world, ids);
    assert.deepEqual(got.events, [end("Aria"), start("Goblin")], `${how}: Tolm holds and gets nothing`);
    assert.deepEqual(got.regions, [regionEnd("Aria"), regionStart("Goblin")], how);
    assert.deepEqual(got.recovered, [["turnEnd", "Aria"], ["turnStart", "Goblin"]], how);
  }
});

eachGeneration(test, "fault 4 (b): a Next Turn steered into the next round ends the round and starts the plan's first, passing over no one", async (generation) => {
  const { world, combat, ids, applier } = await table(generation, "dnd5e");
  await combat.startCombat();
  await combat.update({ turn: 2 });
  const order = [entry(ids.Aria, 20), entry(ids["Brother Tolm"], 15), entry(ids.Goblin, 10), entry(ids["Hidden Boss"], 5, "held")];
  await applier.take(planOf(combat, 1, 1, ids.Goblin, order, { round: 2, current: ids["Brother Tolm"], order: [{ ...order[0], acts: "held" }] }));
  seen(world, ids);
  await combat.nextTurn();
  await settle();
  assert.deepEqual([combat.round, combat.combatant.id], [2, ids["Brother Tolm"]]);
  const events = world.turnEvents.map((e) => [e.event, NAMES.find((n) => ids[n] === e.combatantId) ?? e.round, e.skipped]);
  assert.deepEqual(events, [end("Goblin"), ["endRound", 1, false], ["startRound", 2, false], start("Brother Tolm")]);
});

eachGeneration(test, "fault 4: a Next Turn the plan does not steer stays core's own (its events and combatTurnChange)", async (generation) => {
  const { world, combat, ids, applier, alice } = await table(generation, "dnd5e");
  await combat.startCombat();
  await applier.take(planOf(combat, 1, 1, ids.Aria, [entry(ids.Aria, 20), entry(ids["Brother Tolm"], 15), entry(ids.Goblin, 10), entry(ids["Hidden Boss"], 5, "held")]));
  seen(world, ids);
  const changes = [];
  alice.Hooks.on("combatTurnChange", (_c, prior, now) => changes.push([prior.combatantId, now.combatantId]));
  await combat.nextTurn();
  await settle();
  assert.deepEqual(seen(world, ids).events, [end("Aria"), start("Brother Tolm")]);
  assert.deepEqual(changes, [[ids.Aria, ids["Brother Tolm"]]], "core's step: every client's combatTurnChange");
});

eachGeneration(test, "fault 4: the module's own moves and steered steps announce combatTurnChange once, on every client", async (generation) => {
  const { combat, ids, applier, gm, alice } = await table(generation, "dnd5e");
  await combat.startCombat();
  await combat.nextTurn();
  const changes = { gm: [], alice: [] };
  for (const [who, client] of [["gm", gm], ["alice", alice]]) client.Hooks.on("combatTurnChange", (_c, prior, now) => changes[who].push([prior.combatantId, now.combatantId]));
  // the Boss interrupts Tolm (a plan move), then Next Turn resumes Tolm (a steered step), then past the held Goblin
  await applier.take(planOf(combat, 1, 1, ids["Hidden Boss"], [entry(ids.Aria, 20), entry(ids["Hidden Boss"], 16), entry(ids["Brother Tolm"], 15), entry(ids.Goblin, 10, "held")]));
  await settle();
  await combat.nextTurn();
  await settle();
  const want = [[ids["Brother Tolm"], ids["Hidden Boss"]], [ids["Hidden Boss"], ids["Brother Tolm"]]];
  assert.deepEqual(changes.gm, want, "the active GM: once per move");
  assert.deepEqual(changes.alice, want, "a player's client: the same");
});

eachGeneration(test, "fault 4 (pf2e): the module's own turn events never double pf2e's turn automation", async (generation) => {
  const { world, combat, ids, applier } = await table(generation, "pf2e");
  await combat.startCombat();
  await combat.nextTurn();
  await combat.nextTurn(); // the Goblin's turn
  world.pf2eTurns.length = 0;
  seen(world, ids);
  const order = [entry(ids.Aria, 20), entry(ids["Brother Tolm"], 15), entry(ids["Hidden Boss"], 12), entry(ids.Goblin, 10)];
  await applier.take(planOf(combat, 1, 1, ids["Hidden Boss"], order));
  await combat.nextTurn();
  await settle();
  assert.deepEqual(world.pf2eTurns.map((e) => [e.kind, e.combatantId]), [["startTurn", ids["Hidden Boss"]], ["endTurn", ids["Hidden Boss"]]],
    "pf2e: the interrupter starts and ends once; resuming the Goblin starts nothing");
  assert.deepEqual(seen(world, ids).regions, [regionStart("Hidden Boss"), regionEnd("Hidden Boss")], "regions: the interrupter's start and end, once each");
});

// ------------------------------------------------------------------ lows
eachGeneration(test, "a direct turn write by another module or a macro is not steered", async (generation) => {
  const { world, gm, combat, ids, applier } = await table(generation, "core");
  await combat.startCombat();
  await applier.take(planOf(combat, 1, 1, ids.Aria, [entry(ids.Aria, 20), entry(ids["Brother Tolm"], 15, "held"), entry(ids.Goblin, 10), entry(ids["Hidden Boss"], 5)]));
  await world.otherModuleSetsTurn(gm, combat.id, 1);
  assert.equal(combat.combatant.id, ids["Brother Tolm"], "the macro chose Tolm, held or not");
});

eachGeneration(test, "a plan's initiatives fire updateCombatant on every client, as Foundry's own writes do", async (generation) => {
  const { combat, alice, ids, applier } = await table(generation, "core");
  const seen = [];
  alice.Hooks.on("updateCombatant", (c, changed) => { if ("initiative" in changed) seen.push([c.id, changed.initiative]); });
  await combat.startCombat();
  await applier.take(planOf(combat, 1, 1, ids.Aria, [entry(ids.Aria, 20), entry(ids["Brother Tolm"], 15), entry(ids.Goblin, 16), entry(ids["Hidden Boss"], 5)]));
  assert.deepEqual(seen, [[ids.Goblin, 16]]);
});

eachGeneration(test, "a round begun by a rule advances world time and fires the round events as core's Next Round does", async (generation) => {
  const { world, combat, ids, applier } = await table(generation, "core");
  await combat.startCombat();
  await combat.update({ turn: 3 });
  const before = world.worldTime;
  world.turnEvents.length = 0;
  const next = { round: 2, current: ids.Goblin, order: [] };
  await applier.take(planOf(combat, 1, 2, ids.Goblin, [entry(ids.Aria, 20, "held"), entry(ids["Brother Tolm"], 15, "held"), entry(ids.Goblin, 10), entry(ids["Hidden Boss"], 5)], next));
  assert.equal(combat.round, 2);
  assert.equal(combat.combatant.id, ids.Goblin);
  assert.equal(world.worldTime - before, 6 + 2 * world.turnTime, "a round's time, as getTimeDelta counts it");
  assert.deepEqual(world.turnEvents.filter((e) => e.event.endsWith("Round")).map((e) => [e.event, e.round]), [["endRound", 1], ["startRound", 2]]);
});
