// The module against Foundry's real behaviour (../shared/research/foundry-api.md sections 9
// and 10): diff-only writes, the system's own order, hook timing, unique roll marks, no ghost
// combatants, one code path per Foundry generation.
import { test } from "node:test";
import assert from "node:assert/strict";
import { planUpdate } from "../scripts/plan.js";
import { classifyCombatantChange, registerForwarder } from "../scripts/forwarder.js";
import { registerRollMarking, rollMark } from "../scripts/initiative.js";
import { FORWARDED_HOOKS, MODULE_ID } from "../scripts/constants.js";
import { deletion, menuEntry, gmOnlyMessage, generation } from "../scripts/compat.js";
import { Hooks } from "./fake-foundry/hooks.js";
import { setProperty } from "./fake-foundry/utils.js";

const M = MODULE_ID;
const entry = (id, initiative, acts = "full", extra = {}) => ({ combatant_id: id, initiative, acts, reaction: null, tags: [], detail: {}, rules: [], ...extra });
const planOf = (revision, current, order, extra = {}) => ({ combat_id: "cmb", revision, round: 1, turn: 0, current, next_round: null, order, ...extra });
const combatOf = (over = {}) => ({
  _id: "cmb", round: 1, turn: 0, flags: {},
  combatants: [{ _id: "a", initiative: 18, flags: {} }, { _id: "b", initiative: 12, flags: {} }, { _id: "c", initiative: 8, flags: {} }],
  ...over
});

// Foundry's diffObject for the parts a combatant update has: unchanged keys (nested too) go.
function diff(source, changes) {
  const out = {};
  for (const [k, v] of Object.entries(changes)) {
    if (v && typeof v === "object" && !Array.isArray(v)) {
      const inner = diff(source?.[k] ?? {}, v);
      if (Object.keys(inner).length) out[k] = inner;
    } else if (source?.[k] !== v) out[k] = v;
  }
  return out;
}

test("a plan that agrees with the combat writes nothing, even on first contact", () => {
  const s = combatOf();
  assert.equal(planUpdate(s, planOf(1, "a", [entry("a", 18), entry("b", 12), entry("c", 8)])).data, null);
  const steering = { skipped: ["defend_only", "held", "none"] };
  const next = { round: 2, current: "a", order: [{ combatant_id: "a", initiative: 18, acts: "full" }, { combatant_id: "b", initiative: 12, acts: "full" }] };
  assert.equal(planUpdate(s, planOf(1, "a", [entry("a", 18), entry("b", 12), entry("c", 8)], { next_round: next }), steering).data, null,
    "a next round Foundry would play the same way needs no flag");
});

test("a write never puts null over a number and never touches turn when the current stays", () => {
  const s = combatOf();
  const { data } = planUpdate(s, planOf(2, "a", [entry("a", 18), entry("b", null, "full", { tags: ["x"] }), entry("c", 20)]));
  assert.equal(data.combatants.find((r) => r._id === "b").initiative, undefined, "b keeps its 12");
  assert.equal(data.combatants.find((r) => r._id === "c").initiative, 20);
  // c moves above a: Foundry's combatTurn keeps a current through the initiative write
  assert.ok(!("current" in data) && !("turn" in data), "the pointer is not the plan's to move");
  const calm = planUpdate(s, planOf(3, "a", [entry("a", 18), entry("b", 12), entry("c", 9)])).data;
  assert.ok(calm && !("current" in calm) && !("round" in calm), "a stays current: no pointer write");
});

test("a combat whose system keeps turn null gets no turn unless a rule moved the pointer", () => {
  const s = combatOf({ turn: null, round: 3 });
  const first = planUpdate(s, planOf(1, "a", [entry("a", 18), entry("b", 12), entry("c", 8)], { round: 3 }));
  assert.equal(first.data, null, "first contact: the sidecar's idea of a current is not written");
  s.flags = { [M]: { plan: { revision: 1, round: 3, current: "a", next_round: null } } };
  const moved = planUpdate(s, planOf(2, "b", [entry("a", 18), entry("b", 12), entry("c", 8)], { round: 3 })).data;
  assert.equal(moved.current, "b", "the sidecar moved the pointer from a to b: a rule needs it");
});

test("a reroll with the same total and a clear-and-roll-again with the same roll both reach the sidecar as rolls", () => {
  const env = { foundry: { utils: { randomID: (() => { let n = 0; return () => `nonce${++n}`; })(), setProperty } }, Hooks: new Hooks() };
  const rolls = new Map();
  registerRollMarking(env, () => rolls);
  const roll = { total: 14, toJSON: () => ({ class: "Roll", formula: "1d20", terms: [{ class: "Die", faces: 20, number: 1, results: [{ result: 14, active: true }] }], total: 14 }) };
  const source = { initiative: 14, flags: { [M]: { roll: rollMark(env, roll) } } }; // an earlier roll of 14
  // 1) the same roll again: initiative and json unchanged, only the nonce differs
  rolls.set("x", roll);
  const changes = { initiative: 14 };
  env.Hooks.call("preUpdateCombatant", { id: "x" }, changes);
  const d1 = diff(source, changes);
  assert.deepEqual(Object.keys(d1), ["flags"], "the diff keeps only the new mark's nonce");
  const mark1 = { ...source.flags[M].roll, ...changes.flags[M].roll };
  assert.equal(classifyCombatantChange(d1, mark1, 14).kind, "roll");
  // 2) cleared (null), then rolled the same: the json is the same as the stored one
  const cleared = { initiative: null, flags: source.flags };
  rolls.set("x", roll);
  const again = { initiative: 14 };
  env.Hooks.call("preUpdateCombatant", { id: "x" }, again);
  const d2 = diff(cleared, again);
  assert.equal(d2.flags[M].roll.json, undefined, "the roll's JSON is not in the diff");
  assert.equal(classifyCombatantChange(d2, { ...cleared.flags[M].roll, ...again.flags[M].roll }, 14).kind, "roll");
  // a hand edit after the roll carries no new nonce: the GM's initiative.set
  assert.deepEqual(classifyCombatantChange({ initiative: 9 }, mark1, 9), { kind: "set", value: 9 });
});

/** A stub sidecar and a combat whose turns Foundry refreshes after the combatant hooks. */
function forwardingTable() {
  const sent = [];
  const H = new Hooks();
  const env = { Hooks: H, game: { user: { isGM: true, isActiveGM: true }, users: new Map([["u", { id: "u", isGM: true }]]) } };
  const s = { hook: (name, combat) => sent.push({ name, current: combat.combatant?.id ?? null }), intent: (p) => sent.push({ name: p.kind }) };
  registerForwarder(env, () => s);
  return { H, sent };
}

test("every hook the module claims to forward is registered, and forwarded", async () => {
  const { H, sent } = forwardingTable();
  for (const name of FORWARDED_HOOKS) assert.equal(H.events.get(name)?.length, 1, `${name} registered`);
  assert.ok(!FORWARDED_HOOKS.includes("combatStart") && !FORWARDED_HOOKS.includes("combatTurnChange"), "claimed only what is forwarded (see constants.js)");
  const combat = { id: "cmb", combatant: null };
  const combatant = { id: "x", parent: combat, flags: {}, initiative: 3 };
  for (const name of FORWARDED_HOOKS) {
    if (name.endsWith("Combatant")) H.callAll(name, combatant, name === "updateCombatant" ? { hidden: true } : {}, {}, "u");
    else H.callAll(name, combat, name === "updateCombat" ? { round: 1 } : {}, {}, "u");
  }
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(sent.map((m) => m.name), [...FORWARDED_HOOKS]);
});

test("combatant hooks forward the combat as it is after Foundry re-sorted it", async () => {
  const { H, sent } = forwardingTable();
  const combat = { id: "cmb", combatant: { id: "gone" } };
  const deleted = { id: "gone", parent: combat };
  // Foundry: the post-hook runs, then (synchronously) #onModifyCombatants moves the pointer
  H.callAll("deleteCombatant", deleted, {}, "u");
  combat.combatant = { id: "next" };
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(sent, [{ name: "deleteCombatant", current: "next" }], "not the deleted combatant");
});

test("one code path per Foundry generation: deletion, context menu entries, hidden rolls", () => {
  const v13 = { game: { release: { generation: 13 } } };
  const del = Symbol("_del");
  const v14 = { game: { release: { generation: 14 } }, _del: del };
  assert.equal(generation(v13), 13);
  assert.equal(generation(v14), 14);
  assert.deepEqual(deletion(v13, "flags.x.detail", "k"), ["flags.x.detail.-=k", null]);
  assert.deepEqual(deletion(v14, "flags.x.detail", "k"), ["flags.x.detail.k", del]);
  const runs = [];
  const spec = { label: "L", icon: "<i></i>", visible: (el) => el === "row", run: (el) => runs.push(el) };
  const e13 = menuEntry(v13, spec);
  assert.deepEqual(Object.keys(e13).sort(), ["callback", "condition", "icon", "name"]);
  assert.equal(e13.condition("row"), true);
  e13.callback("row");
  const e14 = menuEntry(v14, spec);
  assert.deepEqual(Object.keys(e14).sort(), ["icon", "label", "onClick", "visible"]);
  assert.equal(e14.visible("other"), false);
  e14.onClick({}, "row14");
  assert.deepEqual(runs, ["row", "row14"]);
  assert.deepEqual(gmOnlyMessage(v13), { rollMode: "gmroll" });
  assert.deepEqual(gmOnlyMessage(v14), { messageMode: "gm" });
  // the plan's vanished detail key is deleted the v14 way in a v14 world
  const s = combatOf();
  s.combatants[0].flags = { [M]: { state: { revision: 1, acts: "full", reaction: null, tags: [], detail: { k: 1 }, rules: [] } } };
  const { data } = planUpdate(s, planOf(2, "a", [entry("a", 18), entry("b", 12), entry("c", 8)]), { del: (p, k) => deletion(v14, p, k) });
  assert.equal(data.combatants[0][`flags.${M}.state.detail.k`], del);
  assert.ok(!Object.keys(data.combatants[0]).some((k) => k.includes("-=")));
});

test("the tracker's context menu and render hooks are in place at init, before ready", async () => {
  const { newWorld, GM } = await import("./helpers/table.js");
  const { wireModule } = await import("../scripts/wire.js");
  const world = newWorld({ id: "early-world" });
  const client = world.connect(GM);
  wireModule(client.env);
  client.Hooks.callAll("init");
  // the sidebar renders during initializeUI, before ready: the menu is built then, once
  for (const name of ["getCombatTrackerContextOptions", "renderCombatTracker", "preUpdateCombatant", ...FORWARDED_HOOKS]) {
    assert.ok(client.Hooks.events.get(name)?.length, `${name} registered at init`);
  }
  const items = [];
  client.Hooks.callAll("getCombatTrackerContextOptions", {}, items);
  assert.ok(items.length >= 11, "action entries and Set initiative… are in the first menu");
  const v14 = client.game.release.generation >= 14;
  assert.ok(items.every((e) => (v14 ? typeof e.visible === "function" && typeof e.onClick === "function" && !("name" in e)
    : typeof e.condition === "function" && typeof e.callback === "function")), `the v${client.game.release.generation} entry shape`);
});

test("v14's Combatant.roundJoined travels in the combat snapshot (and fits the hook schema)", async () => {
  const { makeTable, addCombat } = await import("./fake-foundry/index.js");
  const { snapshotOf, currentOfCombat } = await import("../scripts/foundry-data.js");
  const { hookPayload } = await import("../scripts/payloads.js");
  const { assertValid } = await import("./helpers/schemas.js");
  const t = makeTable({ generation: 14, system: "dnd5e" });
  for (const c of t.clients) (await import("../scripts/wire.js")).wireModule(c.env);
  for (const c of t.clients) c.boot();
  const combat = await addCombat(t, { tokAria000000001: 12 });
  await combat.startCombat();
  const [late] = await combat.createEmbeddedDocuments("Combatant", [{ actorId: "actGob0000000001", tokenId: "tokGobA000000001" }]);
  const snap = snapshotOf(t.gm.env, t.gm.game.combats.get(combat.id));
  const joined = Object.fromEntries(snap.combatants.map((c) => [c._id, c.roundJoined]));
  assert.equal(joined[late.id ?? late._id], 1, "joined in round 1");
  assert.ok(Object.values(joined).every((r) => Number.isInteger(r)), "every v14 combatant carries it");
  assertValid("hook", { seq: 1, ...hookPayload({ user: GM_ID, world_time: 0, hook: "createCombatant", combat: snap, current: currentOfCombat(t.gm.game.combats.get(combat.id)), changed: { _id: "x" } }) });
});
const GM_ID = "gmUser0000000001";

test("a plan row for a combatant already deleted is not written (it would create one)", () => {
  const s = combatOf();
  const { data } = planUpdate(s, planOf(2, "a", [entry("a", 18), entry("gone", 30, "held", { tags: ["held"] }), entry("b", 12), entry("c", 8)]));
  assert.equal(data, null, "nothing else changed, and the deleted one is not named");
  const moved = planUpdate(s, planOf(3, "gone", [entry("gone", 30), entry("a", 18), entry("b", 12), entry("c", 9)])).data;
  assert.ok(!moved.combatants.some((r) => r._id === "gone"));
  assert.ok(!("current" in moved), "no pointer onto a combatant that is not there");
});

test("a defeated combatant's 'does not act' restates the document: written only beside another change", () => {
  const s = combatOf();
  s.combatants[2].defeated = true;
  const dead = entry("c", 8, "none", { tags: ["defeated"] });
  const skipped = { skipped: ["defend_only", "held", "none"] };
  const next = { round: 2, current: "a", order: [{ combatant_id: "a", initiative: 18, acts: "full" }, { combatant_id: "b", initiative: 12, acts: "full" }, { combatant_id: "c", initiative: 8, acts: "none" }] };
  assert.equal(planUpdate(s, planOf(1, "a", [entry("a", 18), entry("b", 12), dead], { next_round: next }), skipped).data, null);
  const moved = planUpdate(s, planOf(2, "b", [entry("a", 18), entry("b", 12), dead]), skipped).data;
  assert.equal(moved.current, "b");
  assert.equal(moved.combatants.find((r) => r._id === "c")[`flags.${M}.state`].acts, "none", "rides along with the turn change");
});
