// A combatant's plan state (`flags.initiative-sidecar.state`) from the sidecar's plan entries:
// every key the entry carries reaches the flag (the GM's own actions too), a key the entry
// leaves out is deleted from the flag (Foundry merges a flag key by key), and a plan that
// restates the flag writes nothing. Pure checks on `planUpdate`, then the real sidecar at the
// Foundry double's table: from the plan it sends to the menus the GM and a player see.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { planUpdate, entryState } from "../scripts/plan.js";
import { availableActions } from "../scripts/actions.js";
import { deletion } from "../scripts/compat.js";
import { MODULE_ID } from "../scripts/constants.js";
import { GM, ALICE, BOB } from "./helpers/table.js";
import { SidecarProcess } from "./helpers/sidecar.js";
import { settle, setupCombat, idOf, lastPlan, endTurn } from "./helpers/play.js";
import { DELETE, expandObject, mergeInto, deletionsIn } from "./fake-foundry/utils.js";

// ------------------------------------------------------------------ pure: planUpdate

/** The generations' deletion forms, as the applier passes them (`compat.deletion`). */
const GENERATION_ENVS = {
  13: { game: { release: { generation: 13 } } },
  14: { game: { release: { generation: 14 } }, _del: DELETE }
};
const delFor = (generation) => (path, key) => deletion(GENERATION_ENVS[generation], path, key);

/** A combat source (round 0) with one combatant whose flag state is `state` (none: no flag). */
function sourceWith(state, c = {}) {
  const flags = state ? { [MODULE_ID]: { state: structuredClone(state) } } : {};
  return { _id: "cmb0000000000001", round: 0, turn: null, flags: {}, combatants: [{ _id: "c1", initiative: 12, defeated: false, flags, ...c }] };
}

/** Apply an update's rows to the source as Foundry merges them (key by key, deletions done). */
function applyRows(source, data) {
  for (const { _id, ...row } of data?.combatants ?? []) mergeInto(source.combatants.find((c) => c._id === _id), expandObject(row));
  return source;
}

const stateOf = (source) => source.combatants[0].flags[MODULE_ID]?.state;
const plan = (revision, entry) => ({ combat_id: "cmb0000000000001", revision, round: 0, turn: null, current: null, next_round: null, order: [{ combatant_id: "c1", initiative: 12, ...entry }] });

// Storyteller, a combatant holding (ST-1) as the sidecar sends it (docs/protocol.md, plan entry)
const HELD = { acts: "held", reaction: null, tags: ["held"], detail: {}, rules: ["ST-1"], actions: ["act.now", "act.after", "act.before"], gm_actions: ["hold.target_aware"] };

test("a holder's GM action goes from the plan entry into the flag and into the GM's menu only", () => {
  const source = sourceWith(null);
  const { data } = planUpdate(source, plan(3, HELD), { del: delFor(13) });
  const flag = stateOf(applyRows(source, data));
  assert.deepEqual(flag.gm_actions, ["hold.target_aware"], "the flag keeps gm_actions");
  assert.deepEqual(availableActions(flag, { isGM: true }), ["act.now", "act.after", "act.before", "hold.target_aware"]);
  assert.deepEqual(availableActions(flag, { isGM: false }), ["act.now", "act.after", "act.before"], "a player never gets it");
});

test("a state whose only news is a GM action is written (not taken for a plain one), beside a defeat too", () => {
  const onlyGM = { acts: "full", reaction: null, tags: [], detail: {}, rules: [], gm_actions: ["hold.target_aware"] };
  const { data } = planUpdate(sourceWith(null), plan(2, onlyGM), { del: delFor(13) });
  assert.deepEqual(data?.combatants?.[0]?.[`flags.${MODULE_ID}.state`]?.gm_actions, ["hold.target_aware"]);
  const defeatedGM = { acts: "none", reaction: null, tags: ["defeated"], detail: {}, rules: [], gm_actions: ["hold.target_aware"] };
  const r = planUpdate(sourceWith(null, { defeated: true }), plan(2, defeatedGM), { del: delFor(13) });
  assert.ok(r.data, "not a mere restatement of the defeat: written on its own");
  // and a bare defeat still is one (written only beside another change)
  const bare = planUpdate(sourceWith(null, { defeated: true }), plan(2, { ...defeatedGM, gm_actions: undefined }), { del: delFor(13) });
  assert.equal(bare.data, null);
});

for (const generation of [13, 14]) {
  test(`a state key the entry leaves out is deleted from the flag, then the same state writes nothing [v${generation}]`, () => {
    // balanced-d20 before the start: the reaction is not available yet, then the combatant dashes
    const before = { revision: 3, acts: "full", reaction: { available: false, reason: "before_first_turn" }, tags: [], detail: {}, rules: ["BI-1", "BI-3"], actions: ["dash"], gm_actions: ["hold.target_aware"], formula: "5d6cs>=4df=1" };
    const dashed = { acts: "movement_or_action", reaction: { available: false, reason: "dashed" }, tags: ["dashed", "no_dominance"], detail: { dash: 2 }, rules: ["BI-1", "BI-4"] };
    const source = sourceWith(before);
    const { data } = planUpdate(source, plan(7, dashed), { del: delFor(generation) });
    const row = data.combatants[0];
    const found = deletionsIn(expandObject(row));
    const path = `flags.${MODULE_ID}.state`;
    if (generation === 13) {
      assert.deepEqual(found.legacy.sort(), ["actions", "formula", "gm_actions"].map((k) => `${path}.-=${k}`));
      assert.deepEqual(found.operator, []);
    } else {
      assert.deepEqual(found.operator.sort(), ["actions", "formula", "gm_actions"].map((k) => `${path}.${k}`), "v14: the _del operator, no -= key");
      assert.deepEqual(found.legacy, []);
    }
    const flag = stateOf(applyRows(source, data));
    assert.deepEqual(flag, entryState(dashed, 7), "the flag is exactly the new state: nothing of the old one survives");
    assert.deepEqual(availableActions(flag, { isGM: true }), [], "no dash offered any more, to anyone");
    // every later plan that restates it writes nothing
    assert.equal(planUpdate(source, plan(8, dashed), { del: delFor(generation) }).data, null);
    assert.equal(planUpdate(source, plan(9, { ...dashed, actions: [], gm_actions: [] }), { del: delFor(generation) }).data, null, "an empty list is no list");
  });
}

test("a flag that says the same in another key order, or with an empty or null optional key, is not written again", () => {
  const entry = { ...HELD, detail: { turns_lost: 1, score: 9 } };
  // what a merge leaves: old keys first, new ones appended; older writes may hold null/[]
  const merged = { revision: 4, gm_actions: ["hold.target_aware"], acts: "held", detail: { score: 9, turns_lost: 1 }, rules: ["ST-1"], reaction: null, tags: ["held"], actions: ["act.now", "act.after", "act.before"], formula: null };
  assert.equal(planUpdate(sourceWith(merged), plan(5, entry), { del: delFor(13) }).data, null);
  assert.equal(planUpdate(sourceWith({ ...merged, formula: undefined, gm_actions: [] }), plan(5, { ...entry, gm_actions: undefined }), { del: delFor(13) }).data, null);
  // a real change still writes, and deletes the leftover null along with it
  const { data } = planUpdate(sourceWith(merged), plan(5, { ...entry, tags: ["held", "target_aware"] }), { del: delFor(13) });
  assert.equal(data.combatants[0][`flags.${MODULE_ID}.state.-=formula`], null);
});

test("detail keys the entry drops are still deleted beside the top-level ones", () => {
  const old = { revision: 2, acts: "held", reaction: null, tags: ["held"], detail: { turns_lost: 2 }, rules: ["ST-1"], actions: ["act.now"] };
  const source = sourceWith(old);
  const entry = { acts: "full", reaction: null, tags: ["x"], detail: {}, rules: [] };
  const { data } = planUpdate(source, plan(3, entry), { del: delFor(14) });
  assert.deepEqual(stateOf(applyRows(source, data)), entryState(entry, 3));
});

// ------------------------------------------------------------------ the real sidecar at the table

let sidecar;
before(async () => { sidecar = await new SidecarProcess().start(); });
after(async () => { await sidecar?.stop(); });

/** The module's entries in a client's tracker menu for a combatant (ids of the i18n labels). */
const menu = (client, combatantId) => client.ui.combat.contextMenu.entriesFor(client.ui.combat.row(combatantId)).map((e) => e.label.replace("INITIATIVE_SIDECAR.action.", ""));

/** Record the combatant rows of every update the GM's applier sends for a combat. */
function spyRows(gm, combatId) {
  const rows = [];
  const combat = gm.game.combats.get(combatId);
  const update = combat.updateEmbeddedDocuments.bind(combat);
  combat.updateEmbeddedDocuments = (type, data, options) => {
    if (options?.[MODULE_ID]?.own) rows.push(...data.map((r) => structuredClone({ ...r, revision: options[MODULE_ID].revision })));
    return update(type, data, options);
  };
  return rows;
}

test("storyteller: a holder's 'Keep waiting (the target knows)' reaches the GM's menu from the sidecar's plan, never a player's", async () => {
  const { world, table, gm, combatId } = await setupCombat(sidecar, "storyteller", "plan-state-st");
  const alice = table.clients[ALICE];
  world.dice.script(10);          // Aria 13
  await alice.game.combats.get(combatId).rollAll();
  world.dice.script(5);           // Tolm 6
  await table.clients[BOB].game.combats.get(combatId).rollAll();
  world.dice.script(6, 2);        // Goblin 8, Boss 3
  await gm.game.combats.get(combatId).rollAll();
  await gm.game.combats.get(combatId).startCombat();
  await settle(table);
  const aria = idOf(table, combatId, "Aria");
  const aCombat = alice.game.combats.get(combatId);
  const r = await alice.api.perform("hold", aCombat, aCombat.combatants.get(aria), {});
  assert.equal(r.ok, true, JSON.stringify(r));
  await settle(table);
  const sent = lastPlan(table, combatId).order.find((e) => e.combatant_id === aria);
  assert.equal(sent.acts, "held");
  assert.deepEqual(sent.gm_actions, ["hold.target_aware"], "the sidecar offers the GM's action");
  for (const c of Object.values(table.clients)) {
    assert.deepEqual(c.game.combats.get(combatId).combatants.get(aria).flags[MODULE_ID].state.gm_actions, ["hold.target_aware"], `${c.userId}: the flag carries it`);
  }
  assert.ok(menu(gm, aria).includes("holdAware"), `the GM's menu: ${menu(gm, aria)}`);
  assert.ok(!menu(alice, aria).includes("holdAware") && menu(alice, aria).includes("actNow"), `Alice's menu: ${menu(alice, aria)}`);
  // and the GM's choice goes through
  gm.respond = () => ({});
  await gm.ui.combat.contextMenu.click("INITIATIVE_SIDECAR.action.holdAware", gm.ui.combat.row(aria));
  await settle(table);
  assert.ok(table.sent.some((m) => m.data.kind === "hold" && m.data.args?.target_aware === true && m.data.user === GM), "hold {target_aware} sent as the GM's");
  gm.module.state.sidecar.stop();
});

test("balanced-d20: a dash before the start takes 'dash' out of the flag and the menu, and later plans leave that state alone", async () => {
  const { world, table, gm, combatId } = await setupCombat(sidecar, "balanced-d20", "plan-state-bd");
  const alice = table.clients[ALICE], bob = table.clients[BOB];
  for (const c of Object.values(table.clients)) c.respond = () => true;
  world.dice.script(15); await alice.game.combats.get(combatId).rollAll();
  world.dice.script(5); await bob.game.combats.get(combatId).rollAll();
  world.dice.script(12, 8); await gm.game.combats.get(combatId).rollAll();
  await settle(table);
  const aria = idOf(table, combatId, "Aria"), tolm = idOf(table, combatId, "Brother Tolm");
  const flag = (c, id) => c.game.combats.get(combatId).combatants.get(id).flags[MODULE_ID].state;
  assert.deepEqual(flag(alice, aria).actions, ["dash"], "before the start, the reaction not available yet: only a dash");
  assert.ok(menu(alice, aria).includes("dash"));
  const rows = spyRows(gm, combatId);
  const aCombat = alice.game.combats.get(combatId);
  let r = await alice.api.perform("dash", aCombat, aCombat.combatants.get(aria), { amount: 2 });
  assert.equal(r.ok, true, JSON.stringify(r));
  await settle(table);
  assert.equal(lastPlan(table, combatId).order.find((e) => e.combatant_id === aria).actions, undefined, "the sidecar leaves actions out");
  for (const c of Object.values(table.clients)) {
    assert.ok(!("actions" in flag(c, aria)), `${c.userId}: no actions left in Aria's flag: ${JSON.stringify(flag(c, aria))}`);
    assert.deepEqual(flag(c, aria).tags, ["dashed", "no_dominance"]);
  }
  assert.ok(!menu(alice, aria).includes("dash"), `Alice is not offered a dash the sidecar would refuse: ${menu(alice, aria)}`);
  const ariaRows = () => rows.filter((row) => row._id === aria && Object.keys(row).some((k) => k.includes(".state")));
  assert.equal(ariaRows().length, 1, "Aria's state written once, for the dash");
  // later plans (Tolm dashes, the combat starts, turns go by) restate Aria's state: never rewritten
  const bCombat = bob.game.combats.get(combatId);
  r = await bob.api.perform("dash", bCombat, bCombat.combatants.get(tolm), { amount: 1 });
  assert.equal(r.ok, true, JSON.stringify(r));
  await settle(table);
  const ariaEntry = () => lastPlan(table, combatId).order.find((e) => e.combatant_id === aria);
  const sameAsDash = JSON.stringify(ariaEntry());
  assert.equal(ariaRows().length, 1, `Aria's unchanged state is not written again: ${JSON.stringify(ariaRows())}`);
  await gm.game.combats.get(combatId).startCombat();
  await settle(table);
  const { revision } = lastPlan(table, combatId);
  if (JSON.stringify(ariaEntry()) === sameAsDash) assert.equal(ariaRows().length, 1, "still not rewritten after the start");
  await endTurn(table, combatId);
  assert.ok(lastPlan(table, combatId).revision > revision);
  // whatever the later plans said, the flag is exactly the last entry's state
  const last = ariaEntry();
  const { revision: _r, ...want } = entryState(last, 0);
  const { revision: _f, ...got } = flag(gm, aria);
  assert.deepEqual(got, want);
  gm.module.state.sidecar.stop();
});
