// The module's tracker in the Foundry double, both generations: badges and context entries
// from the first render (before `ready`), a popped-out tracker, the plain rule score and the
// GM's hand-set initiative once initiatives carry decimals, no deprecated call.
import { test } from "node:test";
import assert from "node:assert/strict";
import "./helpers/table.js"; // quiets the module's info lines
import { wireModule } from "../scripts/wire.js";
import { eachGeneration, makeTable, addCombat, assertNoDeprecations } from "./fake-foundry/index.js";
import { MODULE_ID } from "../scripts/constants.js";

const state = (extra = {}) => ({ revision: 1, acts: "held", reaction: null, tags: ["held"], detail: {}, rules: ["ST-1"], actions: ["act.now", "act.after", "act.before"], gm_actions: ["hold.target_aware"], ...extra });

/** A table whose combat already carries plan flags and decimal initiatives, then booted. */
async function table(generation) {
  const t = makeTable({ generation, system: "dnd5e" });
  for (const c of t.clients) c.module = wireModule(c.env);
  const combat = await addCombat(t, { tokAria000000001: 13.02, tokTolm000000001: 13.01, tokGobA000000001: 9, tokGobB000000001: 8, tokBoss000000001: 4 });
  const aria = combat.combatants.find((c) => c.tokenId === "tokAria000000001");
  await combat.updateEmbeddedDocuments("Combatant", [{ _id: aria.id, [`flags.${MODULE_ID}.state`]: state() }]);
  for (const c of t.clients) c.boot();
  return { ...t, aria: aria.id, combatId: combat.id };
}

eachGeneration(test, "badges and the module's context entries are there from the tracker's first render", async (generation) => {
  const { world, gm, alice, bob, aria } = await table(generation);
  for (const c of [gm, alice, bob]) {
    const tracker = c.ui.combat;
    assert.equal(tracker.renders >= 1 && tracker.menuBuilds, 1, "the menu was built once, at the first render");
    assert.ok(tracker.row(aria)?.querySelector(".initiative-sidecar-badges [data-badge=held]"), `${c.userId}: Aria's held badge`);
  }
  const row = (c) => c.ui.combat.row(aria);
  const labels = (c) => c.ui.combat.contextMenu.entriesFor(row(c)).map((e) => e.label);
  assert.ok(labels(alice).includes("INITIATIVE_SIDECAR.action.actNow"), "Alice may act now with her held Aria");
  assert.ok(!labels(alice).includes("INITIATIVE_SIDECAR.action.holdAware"), "GM-only action hidden from her");
  assert.ok(!labels(bob).includes("INITIATIVE_SIDECAR.action.actNow"), "Bob does not own Aria");
  assert.ok(labels(gm).includes("INITIATIVE_SIDECAR.action.holdAware") && labels(gm).includes("INITIATIVE_SIDECAR.action.setInitiative"));
  assertNoDeprecations(world);
});

eachGeneration(test, "with decimals the rule score shows plainly and the GM sets an initiative by hand from the menu", async (generation) => {
  const { world, gm, aria, combatId } = await table(generation);
  const tracker = gm.ui.combat;
  assert.equal(tracker.row(aria).querySelector("input.initiative-input"), null, "Foundry turned the inline input into text (decimals)");
  assert.equal(tracker.row(aria).querySelector('[data-badge="rule-score"]')?.textContent, "13", "Aria's rule score, plainly");
  gm.respond = (kind, config) => {
    assert.equal(kind, "input");
    assert.match(config.content, /rule score 13/);
    return { initiative: "17.5" };
  };
  await tracker.contextMenu.click("INITIATIVE_SIDECAR.action.setInitiative", tracker.row(aria));
  assert.equal(gm.game.combats.get(combatId).combatants.get(aria).initiative, 17.5);
  const edit = world.log.find((e) => e.kind === "updateCombatants" && !e.own);
  assert.ok(edit, "written as Foundry's own edit: the forwarder sends it as the GM's initiative.set");
  assertNoDeprecations(world);
});

eachGeneration(test, "a popped-out tracker gets its badges, built in its own window's document", async (generation) => {
  const { world, gm, aria } = await table(generation);
  const app = gm.ui.combat.popOutWindow();
  const box = app.row(aria)?.querySelector(".initiative-sidecar-badges");
  assert.ok(box, "badges in the popped-out tracker");
  assert.equal(box.ownerDocument, app.element.ownerDocument);
  if (generation >= 14) assert.notEqual(app.element.ownerDocument, gm.document, "v14: another window");
  assertNoDeprecations(world);
});
