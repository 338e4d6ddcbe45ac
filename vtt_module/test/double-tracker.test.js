// The double's combat tracker: first render before `ready` with its context menu built once,
// entry shapes by generation, decimals, escaping, visibility, pop-outs
// (fake-foundry/README.md lists the sources).
import { test } from "node:test";
import assert from "node:assert/strict";
import { makeTable as table, addCombat, eachGeneration } from "./fake-foundry/index.js";

/** These tests are about the double: a manifest either generation can activate, whatever module.json says. */
const makeTable = (o) => table({ manifest: { compatibility: { minimum: "13", maximum: "14" } }, ...o });

const ARIA = "tokAria000000001", TOLM = "tokTolm000000001", BOSS = "tokBoss000000001";
const byToken = (combat, tokenId) => combat.combatants.find((c) => c.tokenId === tokenId);

/** A module's entry in both shapes' vocabularies. */
const v13Entry = (log) => ({ name: "MOD.hold", icon: "<i></i>", condition: (li) => Boolean(li.dataset.combatantId), callback: (li) => log.push(li.dataset.combatantId) });
const v14Entry = (log) => ({ label: "MOD.hold", icon: "<i></i>", visible: (li) => Boolean(li.dataset.combatantId), onClick: (_event, li) => log.push(li.dataset.combatantId) });

eachGeneration(test, "boot renders the tracker before ready: the context menu hook runs once, then; a ready-time handler misses it", async (generation) => {
  const t = makeTable({ generation });
  const order = [];
  const { gm } = t;
  gm.Hooks.on("init", () => gm.Hooks.on("getCombatTrackerContextOptions", () => order.push("menu@init")));
  gm.Hooks.on("renderCombatTracker", (app, element) => order.push(`render:${element.tagName}`));
  gm.Hooks.on("ready", () => { order.push("ready"); gm.Hooks.on("getCombatTrackerContextOptions", () => order.push("menu@ready")); });
  for (const h of ["i18nInit", "setup", "initializeCombatConfiguration"]) gm.Hooks.on(h, () => order.push(h));
  gm.boot();
  assert.deepEqual(order, ["i18nInit", "setup", "initializeCombatConfiguration", "menu@init", "render:SECTION", "ready"]);
  await addCombat(t, { [ARIA]: 3 });
  gm.ui.combat.render();
  assert.equal(gm.ui.combat.menuBuilds, 1, "built once per app");
  assert.ok(!order.includes("menu@ready"), "a handler registered in ready never runs for the sidebar tracker");
  assert.ok(gm.ui.combat.renders >= 2, "re-rendered after changes");
});

eachGeneration(test, "render hooks get the app, an HTMLElement, the context and options; parents' hooks fire too", async (generation) => {
  const t = makeTable({ generation, boot: true });
  const seen = [];
  for (const h of ["renderCombatTracker", "renderAbstractSidebarTab", "renderApplicationV2"]) t.gm.Hooks.on(h, (app, el, ctx, opts) => seen.push([h, app === t.gm.ui.combat, typeof el.querySelector, Array.isArray(ctx.turns), opts.isFirstRender]));
  await addCombat(t);
  assert.deepEqual(seen.slice(-3), [["renderCombatTracker", true, "function", true, false], ["renderAbstractSidebarTab", true, "function", true, false], ["renderApplicationV2", true, "function", true, false]]);
});

test("v13 menu: name/condition/callback(li) work without deprecation; a v14-shaped entry has no name and its click fails", async () => {
  const t = makeTable({ generation: 13 });
  const log = [];
  t.gm.Hooks.on("getCombatTrackerContextOptions", (_app, items) => items.push(v13Entry(log), { ...v14Entry(log), label: "MOD.v14" }));
  t.gm.boot();
  const combat = await addCombat(t, { [ARIA]: 3 });
  const li = t.gm.ui.combat.row(byToken(combat, ARIA).id);
  const labels = t.gm.ui.combat.contextMenu.entriesFor(li).map((e) => e.label);
  assert.ok(labels.includes("MOD.hold"));
  assert.ok(labels.includes(undefined), "v13 reads `name` only");
  t.gm.ui.combat.contextMenu.click("MOD.hold", li);
  assert.deepEqual(log, [byToken(combat, ARIA).id]);
  assert.throws(() => t.gm.ui.combat.contextMenu.click(undefined, li), TypeError);
  assert.deepEqual(t.world.deprecations, []);
});

test("v14 menu: label/visible/onClick(event, target) work; name/condition/callback still work but are recorded as deprecated", async () => {
  const t = makeTable({ generation: 14 });
  const log = [];
  t.gm.Hooks.on("getCombatTrackerContextOptions", (_app, items) => items.push(v14Entry(log)));
  t.gm.boot();
  assert.deepEqual(t.world.deprecations, [], "core's own entries and the v14 entry: no warning");
  const combat = await addCombat(t, { [ARIA]: 3 });
  const li = t.gm.ui.combat.row(byToken(combat, ARIA).id);
  t.gm.ui.combat.contextMenu.click("MOD.hold", li);
  assert.deepEqual(log, [byToken(combat, ARIA).id]);

  const old = makeTable({ generation: 14 });
  old.gm.Hooks.on("getCombatTrackerContextOptions", (_app, items) => items.push(v13Entry(log)));
  old.gm.boot();
  assert.deepEqual(old.world.deprecations.map((d) => d.message), [
    "ContextMenuEntry#name is deprecated. Use ContextMenuEntry#label instead.",
    "ContextMenuEntry#callback is deprecated. Use ContextMenuEntry#onClick instead.",
    "ContextMenuEntry#condition is deprecated. Use ContextMenuEntry#visible instead."]);
  const c2 = await addCombat(old, { [ARIA]: 3 });
  old.gm.ui.combat.contextMenu.click("MOD.hold", old.gm.ui.combat.row(byToken(c2, ARIA).id));
  assert.equal(log.length, 2, "the deprecated shape still works on 14");
});

eachGeneration(test, "decimals: every row shows two decimals and the GM's inline input becomes text", async (generation) => {
  const t = makeTable({ generation, boot: true });
  const combat = await addCombat(t, { [ARIA]: 12, [TOLM]: 9 });
  const el = t.gm.ui.combat.element;
  assert.equal(el.querySelectorAll("input.initiative-input").length, 2, "integers: inputs for the GM");
  assert.equal(t.alice.ui.combat.element.querySelectorAll("input.initiative-input").length, 0, "players get text");
  await byToken(combat, TOLM).update({ initiative: 9.5 });
  assert.equal(el.querySelectorAll("input.initiative-input").length, 0);
  assert.deepEqual([...el.querySelectorAll(".token-initiative .initiative:not(.none)")].map((s) => s.textContent), ["12.00", "9.50"]);
});

eachGeneration(test, "names are escaped and hidden combatants are left out of a player's tracker", async (generation) => {
  const t = makeTable({ generation, boot: true });
  t.world.tokens.get(ARIA).name = `<img src=x onerror="alert(1)">`;
  const combat = await addCombat(t, { [ARIA]: 12 });
  const gmEl = t.gm.ui.combat.element;
  assert.equal(gmEl.querySelectorAll("img[onerror]").length, 0, "no markup from a name");
  assert.equal(gmEl.querySelector(`[data-combatant-id="${byToken(combat, ARIA).id}"] .name`).textContent, `<img src=x onerror="alert(1)">`);
  const boss = byToken(combat, BOSS).id;
  assert.ok(t.gm.ui.combat.row(boss));
  assert.equal(t.alice.ui.combat.row(boss), null);
});

test("v14 pops the tracker out into its own window: another ownerDocument, same app", async () => {
  const t = makeTable({ generation: 14, boot: true });
  const combat = await addCombat(t, { [ARIA]: 12 });
  const app = t.gm.ui.combat;
  const docs = [];
  t.gm.Hooks.on("renderCombatTracker", (_app, el) => docs.push(el.ownerDocument));
  app.popOutWindow();
  assert.notEqual(docs.at(-1), t.gm.document, "rendered into the pop-out window's document");
  assert.equal(app.element.ownerDocument, t.gm.windows[0].document);
  assert.ok(t.gm.document.querySelector("li.combatant") === null, "the main window's document has no rows left");
  assert.equal(app.menuBuilds, 1, "the same app: its menu is not built again");
  await byToken(combat, ARIA).update({ initiative: 4 });
  assert.equal(docs.at(-1), t.gm.windows[0].document, "later renders stay in the pop-out");
});

test("v13 pops out a separate tracker app in the same page, with its own first render and menu", async () => {
  const t = makeTable({ generation: 13 });
  let menus = 0;
  t.gm.Hooks.on("getCombatTrackerContextOptions", () => { menus += 1; });
  t.gm.boot();
  await addCombat(t, { [ARIA]: 12 });
  const pop = t.gm.ui.combat.popOutWindow();
  assert.notEqual(pop, t.gm.ui.combat);
  assert.equal(pop.element.ownerDocument, t.gm.document);
  assert.equal(menus, 2);
});

eachGeneration(test, "the GM sets an initiative in the inline input while there are no decimals; with decimals there is none", async (generation) => {
  const t = makeTable({ generation, boot: true });
  const combat = await addCombat(t, { [ARIA]: 12, [TOLM]: 9 });
  const tolm = byToken(combat, TOLM).id;
  await t.gm.ui.combat.typeInitiative(tolm, "15");
  assert.equal(t.alice.game.combats.get(combat.id).combatants.get(tolm).initiative, 15);
  await assert.rejects(t.alice.ui.combat.typeInitiative(tolm, "3"), /no inline initiative input/, "players have none");
  await byToken(combat, ARIA).update({ initiative: 12.5 });
  await assert.rejects(t.gm.ui.combat.typeInitiative(tolm, "3"), /no inline initiative input/);
});
