// The 230 raw Combat documents of ../shared/real-combats (v11, v12, v13; provenance in each file
// and in its README), read in place, never copied here. Each document is met first by the real
// sidecar (an updateCombat carrying it, as when a GM enables the module mid-fight) and its plan
// handed to the module's applier in a double world holding the document: under foundry-core
// nothing is written, under each rule-bearing ruleset only the sidecar's own flags. Then Next Turn and Next Round from the document land, with the module on
// every client, exactly where a world without the module lands (null turns, a turn past the end,
// hidden and defeated combatants included). Each runs with core's Skip Defeated off (its default:
// core gives a defeated combatant its turn) and on, the setting travelling as the module sends it
// (`skip_defeated`, read through the module's own snapshot), like the sidecar's settings matrix in
// tests/test_real_combat_documents.py. Without ../shared (a user's clone) the tests skip
// with one line saying why; with CI=true they fail instead.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { io } from "socket.io-client";
import { World } from "./fake-foundry/index.js";
import { bootTable, GM } from "./helpers/table.js";
import { SidecarProcess } from "./helpers/sidecar.js";
import { currentOfCombat, snapshotOf } from "../scripts/foundry-data.js";

const DIR = fileURLToPath(new URL("../../../shared/real-combats/", import.meta.url));
const present = existsSync(`${DIR}index.json`);
const WHY = `../shared/real-combats is not there (${DIR}): the real Combat documents live beside a checkout, not in it`;
if (!present && process.env.CI === "true") throw new Error(`CI=true and ${WHY}`);
const CORPUS = present ? JSON.parse(readFileSync(`${DIR}index.json`, "utf8")).entries.map((e) => ({ ...e, ...JSON.parse(readFileSync(`${DIR}${e.file}`, "utf8")) })) : [];
const skip = present ? false : WHY;
/** Core's Skip Defeated (`combat.settings.skipDefeated`, research §2): off, its default, and on. */
const SETTINGS = [false, true];
const named = (skipDefeated) => `Skip Defeated ${skipDefeated ? "on" : "off"}`;

let sidecar;
before(async () => { if (present) sidecar = await new SidecarProcess().start(); });
after(async () => { await sidecar?.stop(); });

/** A double world of the document's system holding the document as stored, with core's Skip Defeated as given; the module on the GM's and a player's client (or none). */
function worldOf(fx, withModule, skipDefeated) {
  const system = fx.source.system_id;
  const world = new World({
    id: `real-${fx.combat._id}`, system, rolls: "core",
    users: [{ _id: GM, name: "GM", role: World.ROLES.GAMEMASTER }, { _id: "plReal0000000001", name: "P", role: World.ROLES.PLAYER }]
  });
  world.combats.set(fx.combat._id, structuredClone(fx.combat));
  world.worldSettings.set("core.combatTrackerConfig", { resource: "", skipDefeated });
  if (!withModule) return { world, gm: world.connect(GM) };
  const t = bootTable(world, { users: [GM, "plReal0000000001"] });
  const gm = t.clients[GM];
  gm.module.state.applier.hooks.awaiting = () => false; // no sidecar connection here: the plan is handed over
  return { world, gm };
}

/** The sidecar's first plan for a document under a ruleset and a Skip Defeated (each in its own world). */
async function firstPlan(fx, i, ruleset, skipDefeated) {
  const auth = { token: sidecar.token, world: `real${ruleset.replace(/-/g, "")}${skipDefeated ? "skip" : ""}${i}`, ruleset, settings: {}, gm_users: [GM], protocol: 1 };
  const socket = io(sidecar.url, { transports: ["websocket"], auth, forceNew: true, reconnection: false });
  try {
    await new Promise((resolve, reject) => { socket.once("welcome", resolve); socket.once("connect_error", reject); });
    const doc = structuredClone(fx.combat);
    doc.combatants = doc.combatants.map((c, k) => ({ ...c, name: c.name || `Combatant ${k + 1}`, owners: [], is_npc: true, is_defeated: Boolean(c.defeated), stats: {} }));
    const { gm } = worldOf(fx, true, skipDefeated); // the module's settings registered: its snapshot reads them
    const combat = gm.game.combats.get(fx.combat._id);
    const sent = snapshotOf(gm.env, combat);
    doc.skip_defeated = sent.skip_defeated; // the setting as the module sends it
    doc.turn_order = sent.turn_order; // Foundry's own order (the system's sort), as the module sends it
    assert.equal(doc.skip_defeated, skipDefeated, `${fx.file}: the snapshot states the world's Skip Defeated`);
    assert.deepEqual(doc.turn_order, combat.turns.map((c) => c.id), `${fx.file}: the snapshot states combat.turns`);
    const current = combat.current;
    const ack = await socket.timeout(10000).emitWithAck("hook", { seq: 1, user: GM, world_time: 0, hook: "updateCombat", combat: doc, current: { round: doc.round ?? null, turn: null, combatantId: current.combatantId, tokenId: null } });
    assert.ok(ack.ok, `${fx.file}: ${JSON.stringify(ack.error)}`);
    return ack.plans?.[0] ?? null;
  } finally {
    socket.disconnect();
  }
}

for (const skipDefeated of SETTINGS) {
test(`under foundry-core, ${named(skipDefeated)}, each of the real combats met first leads to zero writes`, { skip, timeout: 300000 }, async () => {
  assert.equal(CORPUS.length, 230);
  const written = [];
  for (const [i, fx] of CORPUS.entries()) {
    const plan = await firstPlan(fx, i, "foundry-core", skipDefeated);
    if (!plan) continue;
    const { world, gm } = worldOf(fx, true, skipDefeated);
    const before = world.updates;
    await gm.module.state.applier.take(plan);
    if (world.updates !== before) written.push(`${fx.file}: ${JSON.stringify(world.log.slice(-2))}`);
  }
  assert.deepEqual(written, []);
});
}

/** The combat as stored without the sidecar's own flags (on the combat and each combatant). */
function foundrysPart(source) {
  const strip = (doc) => { const d = structuredClone(doc); if (d.flags) delete d.flags["initiative-sidecar"]; return d; };
  return { ...strip(source), combatants: source.combatants.map(strip) };
}

for (const ruleset of ["balanced-d20", "dice-pool", "storyteller"]) for (const skipDefeated of SETTINGS) {
  test(`under ${ruleset}, ${named(skipDefeated)}, each real combat met first gets the sidecar's flags and nothing of Foundry's written`, { skip, timeout: 300000 }, async () => {
    const written = [];
    let writes = 0;
    for (const [i, fx] of CORPUS.entries()) {
      const plan = await firstPlan(fx, i, ruleset, skipDefeated);
      if (!plan) continue;
      const { world, gm } = worldOf(fx, true, skipDefeated);
      world.worldSettings.set("initiative-sidecar.sidecarRules", { ruleset, intents: [], skipped_acts: ["defend_only", "held", "none"] });
      const before = foundrysPart(world.combats.get(fx.combat._id));
      const updates = world.updates;
      await gm.module.state.applier.take(plan);
      writes += world.updates - updates;
      const after = foundrysPart(world.combats.get(fx.combat._id));
      // a stored turn past the end (3 documents): every client shows turn 0 of the next round
      // (setupTurns clamps it, research §3), and core's combatTurn on the combatants' write
      // stores that 0: core's repair, the module writes no turn
      if (Number.isInteger(before.turn) && before.turn >= before.combatants.length && after.turn === 0) before.turn = 0;
      if (JSON.stringify(after) !== JSON.stringify(before)) written.push(`${fx.file}: ${JSON.stringify(world.log.slice(-3))}`);
    }
    assert.ok(writes > 0, "no write at all: the check would say nothing");
    assert.deepEqual(written, []);
  });
}

/** Where a step from the document lands: {round, turn, combatantId}. */
async function step(fx, withModule, how, skipDefeated) {
  const { gm } = worldOf(fx, withModule, skipDefeated);
  const combat = gm.game.combats.get(fx.combat._id);
  await combat[how]();
  return { round: combat.round, turn: combat.turn, combatantId: combat.combatant?.id ?? null };
}

for (const how of ["nextTurn", "nextRound"]) for (const skipDefeated of SETTINGS) {
  test(`${how === "nextTurn" ? "Next Turn" : "Next Round"} from each real combat, ${named(skipDefeated)}, lands where core lands, the module on every client`, { skip, timeout: 120000 }, async () => {
    const differ = [];
    for (const fx of CORPUS) {
      const core = await step(fx, false, how, skipDefeated);
      const ours = await step(fx, true, how, skipDefeated);
      if (JSON.stringify(core) !== JSON.stringify(ours)) differ.push(`${fx.file}: core ${JSON.stringify(core)}, with the module ${JSON.stringify(ours)}`);
    }
    assert.deepEqual(differ, []);
  });
}

/**
 * From each started document under foundry-core, the module's world makes a move (core's Next
 * Turn, or a pointer written straight onto a later row: a defeated one where there is one, else
 * the last, as the GM's click on a row's turn control or a macro's `combat.update({turn})` does),
 * the sidecar gets the module's snapshot of it, and its plan, handed to the applier, writes
 * nothing: the sidecar lands where core landed, defeated combatants included, with Skip Defeated
 * off and on (core skips the defeated only in nextTurn/nextRound, research §3).
 */
async function writesAfter(fx, i, skipDefeated, move) {
  const auth = { token: sidecar.token, world: `realmove${move}${skipDefeated ? "skip" : ""}${i}`, ruleset: "foundry-core", settings: {}, gm_users: [GM], protocol: 1 };
  const socket = io(sidecar.url, { transports: ["websocket"], auth, forceNew: true, reconnection: false });
  try {
    await new Promise((resolve, reject) => { socket.once("welcome", resolve); socket.once("connect_error", reject); });
    const { world, gm } = worldOf(fx, true, skipDefeated);
    const combat = gm.game.combats.get(fx.combat._id);
    const send = async (seq) => {
      const combatSent = snapshotOf(gm.env, combat);
      combatSent.combatants.forEach((c, k) => { c.name ||= `Combatant ${k + 1}`; });
      const ack = await socket.timeout(10000).emitWithAck("hook", { seq, user: GM, world_time: 0, hook: "updateCombat", combat: combatSent, current: currentOfCombat(combat) });
      assert.ok(ack.ok, `${fx.file}: ${JSON.stringify(ack.error)}`);
      return ack.plans?.[0] ?? null;
    };
    const first = await send(1);
    if (first) await gm.module.state.applier.take(first);
    const before = world.updates;
    if (move === "nextTurn") await combat.nextTurn();
    else {
      const turns = combat.turns;
      const after = combat.turn ?? -1;
      const dead = turns.findIndex((c, k) => k > after && c.isDefeated);
      await combat.update({ turn: dead >= 0 ? dead : turns.length - 1 });
    }
    const moved = world.updates;
    const plan = await send(2);
    if (plan) await gm.module.state.applier.take(plan);
    return world.updates === moved ? [] : [`${fx.file}: core moved to ${combat.combatant?.id ?? null} (${moved - before} update), then ${JSON.stringify(world.log.slice(-2))}`];
  } finally {
    socket.disconnect();
  }
}

/**
 * Departures these moves expose, each with its reason; the test fails when one is fixed (remove
 * it here) or a new one appears. None left: the pf2e document
 * v12/PushinAA+quest-for-the-frozen-flame-world/i3FnRFqaS2znQxhc-9faf7f4-s4367.json (a tie at 25
 * that pf2e breaks by `flags.pf2e.overridePriority`, research §3 (a); the double's pf2eSort) was
 * one while the sidecar broke ties by id; it now follows the snapshot's `turn_order`.
 */
const KNOWN = { nextTurn: [], turnWritten: [] };

for (const move of ["nextTurn", "turnWritten"]) for (const skipDefeated of SETTINGS) {
  test(`under foundry-core, ${named(skipDefeated)}, ${move === "nextTurn" ? "Next Turn" : "a pointer written on a later row"} from each real combat is followed by the sidecar with zero writes`, { skip, timeout: 300000 }, async () => {
    const written = [];
    let played = 0;
    for (const [i, fx] of CORPUS.entries()) {
      if (!(fx.combat.round >= 1 && fx.combat.combatants.length)) continue;
      played += 1;
      written.push(...await writesAfter(fx, i, skipDefeated, move));
    }
    assert.ok(played > 100, `only ${played} started documents: the check would say little`);
    const known = written.filter((w) => KNOWN[move].some((file) => w.startsWith(`${file}:`)));
    assert.deepEqual(written.filter((w) => !known.includes(w)), []);
    assert.equal(known.length, KNOWN[move].length, `a known departure is gone: remove it from KNOWN (${JSON.stringify(known)})`);
  });
}
