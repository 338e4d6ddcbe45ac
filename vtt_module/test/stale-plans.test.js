// A plan answers a message; the table may have moved on since. The module writes a combat's
// plan only once no message about that combat waits for an answer (applier.js), so a slow
// sidecar or a replayed backlog never moves Foundry's pointer back to a turn already played.
// And a step that steering turns into a new round carries a round's world time
// (Combat#getTimeDelta of where it lands; research §1.1, fake-foundry/README.md).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { PlanApplier } from "../scripts/applier.js";
import { Sidecar } from "../scripts/sidecar.js";
import { GM, ALICE, BOB, newWorld, bootTable, until } from "./helpers/table.js";
import { SidecarProcess } from "./helpers/sidecar.js";
import { setupCombat, settle, assertClientsFollowPlan, idOf } from "./helpers/play.js";

const M = "initiative-sidecar";

// ------------------------------------------------------------------ the applier on its own

/** A Foundry Collection: a Map whose iteration gives the documents. */
class Collection extends Map { *[Symbol.iterator]() { yield* this.values(); } }

/** A combat that records the module's writes; its pointer is on `a` (turn 0 of a, b, c). */
function recordingCombat() {
  const writes = [];
  const source = {
    _id: "cmb", round: 1, turn: 0, flags: {},
    combatants: [{ _id: "a", initiative: 30, flags: {} }, { _id: "b", initiative: 20, flags: {} }, { _id: "c", initiative: 10, flags: {} }]
  };
  const combatants = new Collection(source.combatants.map((c) => [c._id, { id: c._id, get initiative() { return c.initiative; } }]));
  const combat = {
    id: "cmb", combatants,
    get round() { return source.round; }, get turn() { return source.turn; },
    get combatant() { return { id: source.combatants[source.turn]._id }; },
    get turns() { return source.combatants.map((c) => ({ id: c._id })); },
    toObject: () => structuredClone(source),
    async updateEmbeddedDocuments(type, rows, options) {
      await new Promise((r) => setTimeout(r, 5));
      writes.push({ rows, revision: options[M].revision });
    },
    async update(data, options) {
      await new Promise((r) => setTimeout(r, 5));
      writes.push({ data, revision: options[M].revision });
      if ("turn" in data) source.turn = data.turn;
      if ("round" in data) source.round = data.round;
    }
  };
  const env = { game: { combats: new Collection([["cmb", combat]]), settings: { get: () => ({}) }, release: { generation: 13 } } };
  return { env, combat, writes };
}

const plan = (revision, current, round = 1) => ({
  combat_id: "cmb", revision, round, current, next_round: null,
  order: ["a", "b", "c"].map((id, i) => ({ combatant_id: id, initiative: 30 - 10 * i, acts: "full", reaction: null, tags: [], detail: {}, rules: [] }))
});

test("a plan that comes while answers about its combat are due waits; only the newest is written, once none is due", async () => {
  const { env, writes } = recordingCombat();
  let due = true;
  const applier = new PlanApplier(env, { awaiting: (id) => id === "cmb" && due });
  let written = false;
  const done = applier.take(plan(4, "b")).then(() => { written = true; });
  applier.take(plan(5, "c"));
  applier.release();
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(writes, [], "nothing written while a message about the combat waits");
  assert.equal(written, false, "take's promise waits for the write");
  due = false;
  applier.release(); // the last answer came (the Sidecar calls this after every ack and welcome)
  await done;
  assert.deepEqual(writes.map((w) => [w.revision, w.data.turn]), [[5, 2]], "one write: the newest plan");
  assert.equal(applier.appliedRevision("cmb"), 5);
  await applier.take(plan(5, "c"));
  assert.equal(writes.length, 1, "the same revision again is stale");
});

test("without an outbox (no awaiting) a plan is written at once, as before", async () => {
  const { env, writes } = recordingCombat();
  const applier = new PlanApplier(env);
  await applier.take(plan(1, "b"));
  assert.deepEqual(writes.map((w) => w.revision), [1]);
});

test("a message queued while a plan is written holds the plans after it", async () => {
  const { env, writes } = recordingCombat();
  let due = false;
  const applier = new PlanApplier(env, { awaiting: () => due });
  let settled = false;
  applier.take(plan(1, "b")).then(() => { settled = true; });
  due = true; // the GM pressed Next while the write was in flight: its hook is in the outbox
  applier.take(plan(2, "c"));
  await until(() => writes.length === 1 && applier.running.size === 0, { what: "the first write to end" });
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(writes.map((w) => w.revision), [1], "the plan that came meanwhile waits");
  assert.ok(applier.waiting.has("cmb"));
  assert.equal(settled, false, "take's promise: once nothing waits for the combat");
  due = false;
  applier.release();
  await until(() => settled, { what: "the held plan to be written" });
  assert.deepEqual(writes.map((w) => w.revision), [1, 2]);
});

/** A Sidecar (the GM's link) over an in-memory settings store, its plans going to an applier as wire.js does. */
function linkedSidecar(env) {
  const settings = new Map();
  env.game.settings = { get: (ns, key) => settings.get(`${ns}.${key}`), set: (ns, key, v) => { settings.set(`${ns}.${key}`, v); return v; } };
  env.game.world = { id: "w" };
  env.game.user = { id: GM, isGM: true };
  env.game.users = { filter: () => [], contents: [] };
  env.ui = { notifications: { warn() {}, info() {}, error() {} } };
  let applier = null;
  const sidecar = new Sidecar(env, {
    onPlan: (p) => applier.take(p), onRevisions: (c) => applier.align(c), onSettled: () => applier.release(),
    onPrompt() {}, onNotices() {}
  });
  applier = new PlanApplier(env, { awaiting: (id) => sidecar.awaiting(id) });
  return { sidecar, applier };
}

/** The sidecar answers the oldest message: the outbox lets it go, then the ack is handled (as sidecar-client.js does). */
function answer(sidecar, ack) {
  const message = sidecar.outbox.peek();
  sidecar.outbox.settle(message.data.seq, { ok: true, ...ack });
  sidecar.ack(message, { ok: true, plans: [], prompts: [], notices: [], ...ack });
}

test("the last answer due releases the waiting plan even when it carries no plan (the plan did not change)", async () => {
  const { env, writes } = recordingCombat();
  const { sidecar, applier } = linkedSidecar(env);
  sidecar.intent({ user: GM, kind: "dash", combat_id: "cmb", combatant_id: "a", args: {} });
  sidecar.intent({ user: GM, kind: "dash", combat_id: "cmb", combatant_id: "b", args: {} });
  sidecar.intent({ user: GM, kind: "ready.break", args: {} }); // about no combat: holds nothing back
  assert.equal(sidecar.awaiting("cmb"), true);
  answer(sidecar, { plans: [plan(7, "b")] });
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(writes, [], "the second message about the combat is still unanswered");
  answer(sidecar, {}); // refused or unchanged: no plan in it
  await until(() => writes.length === 1, { what: "the held plan to be written" });
  assert.equal(writes[0].revision, 7);
  assert.equal(applier.waiting.size, 0);
});

test("at a welcome, a waiting plan is written when the sidecar has nothing newer, and dropped when it has", async () => {
  for (const [theirs, expected] of [[7, [7]], [8, []]]) {
    const { env, writes } = recordingCombat();
    const { sidecar } = linkedSidecar(env);
    sidecar.intent({ user: GM, kind: "dash", combat_id: "cmb", combatant_id: "a", args: {} });
    sidecar.intent({ user: GM, kind: "dash", combat_id: "cmb", combatant_id: "b", args: {} });
    answer(sidecar, { plans: [plan(7, "b")] });
    // the connection dropped before the second ack; the sidecar had stored it (last_seq 2)
    const warn = console.warn; console.warn = () => {};
    try { sidecar.welcome({ ruleset: "foundry-core", last_seq: 2, combats: [{ combat_id: "cmb", revision: theirs }], intents: [], skipped_acts: [] }); } finally { console.warn = warn; }
    assert.equal(sidecar.outbox.size, 0);
    await new Promise((r) => setTimeout(r, 30));
    assert.deepEqual(writes.map((w) => w.revision), expected,
      theirs === 7 ? "revision 7 is the sidecar's latest: written" : "revision 8 never came: 7 would rewind the combat, dropped");
  }
});

// ------------------------------------------------------------------ against the real sidecar

let sidecar;
before(async () => { sidecar = await new SidecarProcess().start(); });
after(async () => { await sidecar?.stop(); });

/** A started foundry-core combat: Goblin, Aria, Brother Tolm, Hidden Boss; the turn changes the GM sees from now on. */
async function startedCore(worldId) {
  const { world, table, gm, combatId } = await setupCombat(sidecar, "foundry-core", worldId);
  world.dice.script(14, 9, 17, 5);
  const combat = gm.game.combats.get(combatId);
  await combat.rollAll();
  await settle(table);
  await combat.startCombat();
  await settle(table);
  assert.deepEqual(combat.turns.map((c) => c.name), ["Goblin", "Aria", "Brother Tolm", "Hidden Boss"]);
  const moves = [];
  gm.Hooks.on("combatTurnChange", (d, prior, now) => moves.push(`${d.combatants.get(prior.combatantId)?.name} -> ${d.combatants.get(now.combatantId)?.name}`));
  const ownBefore = world.log.filter((e) => e.own).length;
  return { world, table, gm, combatId, combat, moves, ownWrites: () => world.log.filter((e) => e.own).length - ownBefore };
}

test("foundry-core: two quick Next Turns while the sidecar answers slowly: no plan moves the pointer back, no write at all", async () => {
  const { table, gm, combat, combatId, moves, ownWrites } = await startedCore("stale-quick");
  const socket = gm.socket;
  const emitWithAck = socket.emitWithAck;
  socket.emitWithAck = async (...a) => { const r = await emitWithAck(...a); await new Promise((res) => setTimeout(res, 150)); return r; };
  await combat.nextTurn();
  await new Promise((r) => setTimeout(r, 50));
  await combat.nextTurn();
  await settle(table);
  socket.emitWithAck = emitWithAck;
  assert.deepEqual(moves, ["Goblin -> Aria", "Aria -> Brother Tolm"], "the pointer only went forward");
  assert.equal(ownWrites(), 0, "foundry-core: the sidecar agrees with Foundry, the module writes nothing");
  const plan = assertClientsFollowPlan(table, combatId);
  assert.equal(plan.current, idOf(table, combatId, "Brother Tolm"));
  gm.module.state.sidecar.stop();
});

test("foundry-core: the sidecar away for three turns: the replayed backlog does not replay the turns on the table", async () => {
  const { table, gm, combat, combatId, moves, ownWrites } = await startedCore("stale-backlog");
  await sidecar.stop();
  await until(() => gm.module.state.sidecar.status !== "connected", { what: "the GM to notice" });
  await combat.nextTurn(); await combat.nextTurn(); await combat.nextTurn();
  assert.equal(gm.module.state.sidecar.outbox.size, 3, "three turns wait in the outbox");
  const played = [...moves];
  await sidecar.start();
  await until(() => gm.module.state.sidecar.status === "connected", { timeout: 20000, what: "the GM to reconnect" });
  await settle(table, { timeout: 20000 });
  assert.deepEqual(played, ["Goblin -> Aria", "Aria -> Brother Tolm", "Brother Tolm -> Hidden Boss"]);
  assert.deepEqual(moves, played, "no turn change after the sidecar came back");
  assert.equal(ownWrites(), 0);
  const plan = assertClientsFollowPlan(table, combatId);
  assert.equal(plan.current, idOf(table, combatId, "Hidden Boss"));
  gm.module.state.sidecar.stop();
});

test("storyteller: Next Turn on the last one to act, everyone after holding, starts round 2 and advances a round's world time", async () => {
  const { world, table, gm, combatId } = await setupCombat(sidecar, "storyteller", "stale-time");
  const alice = table.clients[ALICE], bob = table.clients[BOB];
  world.dice.script(10); await alice.game.combats.get(combatId).rollAll();   // Aria 13
  world.dice.script(5); await bob.game.combats.get(combatId).rollAll();      // Tolm 6
  world.dice.script(6, 2); await gm.game.combats.get(combatId).rollAll();    // Goblin 8, Boss 3
  const combat = gm.game.combats.get(combatId);
  await combat.startCombat();
  await settle(table);
  assert.deepEqual(combat.turns.map((c) => c.name), ["Aria", "Goblin", "Brother Tolm", "Hidden Boss"]);
  const bCombat = bob.game.combats.get(combatId);
  assert.equal((await bob.api.perform("hold", bCombat, bCombat.combatants.get(idOf(table, combatId, "Brother Tolm")), {})).ok, true);
  assert.equal((await gm.api.perform("hold", combat, combat.combatants.get(idOf(table, combatId, "Hidden Boss")), {})).ok, true);
  await settle(table);
  await combat.nextTurn(); // Aria → Goblin: dnd5e-like 0 s a turn
  await settle(table);
  assert.equal(combat.combatant.name, "Goblin");
  const before = world.worldTime;
  await combat.nextTurn(); // nobody after the Goblin acts this round: steering starts round 2
  await settle(table);
  assert.equal(combat.round, 2);
  assert.equal(world.worldTime - before, world.roundTime, "a round's time passed (6 s), not one turn's (0 s)");
  assert.equal(assertClientsFollowPlan(table, combatId).round, 2);
  gm.module.state.sidecar.stop();
});

// ------------------------------------------------------------------ steering alone (flags set by hand)

/**
 * A started combat of the party (Aria 20, Tolm 15, Goblin 10, Boss 5) whose flags say the
 * last two hold, and whose next round reverses the order; 6 s a round, 1 s a turn.
 */
async function heldTail(world, gm) {
  world.roundTime = 6; world.turnTime = 1;
  world.worldSettings.set(`${M}.sidecarRules`, { ruleset: "storyteller", intents: [], skipped_acts: ["held"] });
  const combat = await world.createCombat(gm, {});
  await combat.createEmbeddedDocuments("Combatant", [...world.tokens.values()].map((t) => ({ actorId: t.actorId, tokenId: t._id })));
  const ids = Object.fromEntries(combat.combatants.map((c) => [c.name, c.id]));
  const order = ["Aria", "Brother Tolm", "Goblin", "Hidden Boss"];
  await combat.updateEmbeddedDocuments("Combatant", order.map((n, i) => ({ _id: ids[n], initiative: 20 - 5 * i })));
  await combat.startCombat();
  const held = { revision: 1, acts: "held", reaction: null, tags: ["held"], detail: {}, rules: ["ST-1"] };
  const next = order.map((n, i) => ({ combatant_id: ids[n], initiative: 5 + 5 * i, acts: "full" })); // round 2: Boss first
  await combat.update({
    combatants: ["Goblin", "Hidden Boss"].map((n) => ({ _id: ids[n], [`flags.${M}.state`]: held })),
    [`flags.${M}.plan`]: { revision: 1, round: 1, current: ids.Aria, next_round: { round: 2, current: ids["Hidden Boss"], order: next } }
  });
  return { combat, ids };
}

for (const who of [GM, ALICE]) {
  test(`steering: ${who === GM ? "the GM's" : "a player's"} Next Turn turned into a new round carries the time of where it lands`, async () => {
    const world = newWorld({ id: `time-${who}` });
    const t = bootTable(world);
    const { combat, ids } = await heldTail(world, t.clients[GM]);
    const mine = t.clients[who].game.combats.get(combat.id);
    await mine.nextTurn(); // Aria → Tolm: one turn
    assert.equal(world.worldTime, 1);
    assert.equal(mine.combatant.id, ids["Brother Tolm"]);
    await mine.nextTurn(); // Goblin and Boss hold: round 2, on the Boss
    assert.equal(mine.round, 2);
    assert.equal(mine.combatant.id, ids["Hidden Boss"]);
    // from round 1 turn 1 to round 2 at the Boss's index: a round, the 3 turns left of round 1,
    // and the turns before the Boss in round 2, under today's order (the next round's
    // initiatives come with the sidecar's plan for the new round, which keeps the Boss current)
    const into = 3;
    assert.equal(mine.turn, into);
    assert.equal(world.worldTime, 1 + 6 + 3 + into);
  });
}

test("steering: a skipped turn inside the round counts the turns passed over", async () => {
  const world = newWorld({ id: "time-skip" });
  const t = bootTable(world);
  const { combat, ids } = await heldTail(world, t.clients[GM]);
  await combat.update({ combatants: [{ _id: ids["Brother Tolm"], [`flags.${M}.state`]: { revision: 1, acts: "held", reaction: null, tags: ["held"], detail: {}, rules: [] } }, { _id: ids.Goblin, [`flags.${M}.state`]: { revision: 1, acts: "full", reaction: null, tags: [], detail: {}, rules: [] } }] });
  await combat.nextTurn(); // Tolm holds: Aria → Goblin, two turns on
  assert.equal(combat.combatant.id, ids.Goblin);
  assert.equal(world.worldTime, 2);
  await combat.previousTurn(); // backward: not steered, Foundry's own delta
  assert.equal(world.worldTime, 1);
});
