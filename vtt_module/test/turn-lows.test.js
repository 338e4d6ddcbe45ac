// Issue 25's lows of the turns half outside steering: the roll patch goes through libWrapper when
// it is active; the reroll card speaks as the combatant's token (actor, token, scene); a ruling
// that names a hidden combatant is whispered to the GMs, never posted in public.
import { test } from "node:test";
import assert from "node:assert/strict";
import { World, eachGeneration } from "./fake-foundry/index.js";
import { bootTable, party, GM, ALICE } from "./helpers/table.js";
import { wrapInitiativeRoll, rollReroll } from "../scripts/initiative.js";
import { announce } from "../scripts/announce.js";

async function table(generation) {
  const { actors, tokens } = party();
  const world = new World({ id: `lows-${generation}`, generation, system: "core", users: [{ _id: GM, name: "GM", role: World.ROLES.GAMEMASTER }, { _id: ALICE, name: "Alice", role: World.ROLES.PLAYER }], actors, tokens });
  const t = bootTable(world, { users: [GM, ALICE] });
  const gm = t.clients[GM];
  const combat = await world.createCombat(gm, { scene: "scnReal000000001" });
  await combat.createEmbeddedDocuments("Combatant", tokens.map((tk) => ({ actorId: tk.actorId, tokenId: tk._id, sceneId: "scnReal000000001", hidden: tk.name === "Hidden Boss" })));
  return { world, gm, combat };
}

test("the initiative roll patch goes through libWrapper when it is active (MIXED), the prototype untouched", () => {
  const registered = [];
  const original = function (formula) { return { formula, id: this.id }; };
  class Combatant {}
  Combatant.prototype.getInitiativeRoll = original;
  const env = { CONFIG: { Combatant: { documentClass: Combatant } }, libWrapper: { register: (...args) => registered.push(args) }, Roll: class {} };
  const pending = wrapInitiativeRoll(env);
  assert.equal(Combatant.prototype.getInitiativeRoll, original, "not patched by hand");
  assert.deepEqual(registered.map(([pkg, target, , type]) => [pkg, target, type]), [["initiative-sidecar", "CONFIG.Combatant.documentClass.prototype.getInitiativeRoll", "MIXED"]]);
  const wrapper = registered[0][2];
  const me = { id: "c1", flags: {} };
  const roll = wrapper.call(me, (f) => original.call(me, f), "1d20");
  assert.deepEqual(roll, { formula: "1d20", id: "c1" });
  assert.equal(pending.get("c1"), roll, "the roll handed out is remembered");
});

eachGeneration(test, "the reroll card speaks as the combatant's token: actor, token and scene", async (generation) => {
  const { world, gm, combat } = await table(generation);
  const aria = combat.combatants.find((c) => c.name === "Aria");
  await rollReroll(gm.env, { prompt_id: "p1", rule: "clever_reroll", combat_id: combat.id, combatant_id: aria.id, data: { formula: "1d20" } });
  const speaker = world.chat.at(-1).speaker;
  assert.deepEqual([speaker.actor, speaker.token, speaker.scene], [aria.actorId, aria.tokenId, "scnReal000000001"]);
});

eachGeneration(test, "a ruling whose text names a hidden combatant is whispered to the GMs", async (generation) => {
  const { world, gm, combat } = await table(generation);
  const aria = combat.combatants.find((c) => c.name === "Aria");
  await announce(gm.env, [{ kind: "act.after", text: "Aria acts after Hidden Boss", combatant_id: aria.id }], { data: { combat_id: combat.id } });
  assert.deepEqual(world.chat.at(-1).whisper, [GM]);
  await announce(gm.env, [{ kind: "act.after", text: "Aria acts after Brother Tolm", combatant_id: aria.id }], { data: { combat_id: combat.id } });
  assert.deepEqual(world.chat.at(-1).whisper ?? [], [], "a ruling naming only visible combatants stays public");
});

eachGeneration(test, "under dnd5e's grouped tracker, the order shown is the turn order: a group split by a tie-break is taken apart", async (generation) => {
  const { actors, tokens } = party();
  tokens.push({ _id: "tokGob2000000009", actorId: "actGob0000000001", name: "Goblin 2" });
  const world = new World({ id: `groups-${generation}`, generation, system: "dnd5e", users: [{ _id: GM, name: "GM", role: World.ROLES.GAMEMASTER }, { _id: ALICE, name: "Alice", role: World.ROLES.PLAYER }], actors, tokens });
  const gm = bootTable(world, { users: [GM, ALICE] }).clients[GM];
  const combat = await world.createCombat(gm, {});
  await combat.createEmbeddedDocuments("Combatant", tokens.map((tk) => ({ actorId: tk.actorId, tokenId: tk._id })));
  const init = { Aria: 15.4, Goblin: 15.6, "Goblin 2": 15.2, "Brother Tolm": 9, "Hidden Boss": 12 };
  await combat.updateEmbeddedDocuments("Combatant", combat.combatants.map((c) => ({ _id: c.id, initiative: init[c.name] })));
  const list = gm.ui.combat.element.querySelector(".combat-tracker");
  const shown = [...list.querySelectorAll("li.combatant[data-combatant-id]")].map((li) => li.dataset.combatantId);
  assert.deepEqual(shown, combat.turns.map((c) => c.id), "Goblin, Aria, Goblin 2, Boss, Tolm");
  assert.equal(list.querySelector("li.combatant-group"), null);
  await combat.updateEmbeddedDocuments("Combatant", [{ _id: combat.combatants.find((c) => c.name === "Aria").id, initiative: 17 }]);
  assert.equal(list.ownerDocument, gm.ui.combat.element.ownerDocument);
  assert.equal(gm.ui.combat.element.querySelectorAll("li.combatant-group").length, 1, "goblins side by side in the turns: dnd5e's group stays");
});

eachGeneration(test, "members of a CombatantGroup follow the plan: the group's own initiative takes their common value", async (generation) => {
  const { world, gm, combat } = await table(generation);
  const gob = combat.combatants.filter((c) => c.name === "Goblin" || c.name === "Hidden Boss");
  const group = "grpGob0000000001";
  await combat.update({ groups: [{ _id: group, type: "base", name: "Pack", initiative: 4, flags: {} }] });
  await combat.updateEmbeddedDocuments("Combatant", gob.map((c) => ({ _id: c.id, group })));
  const rest = combat.combatants.filter((c) => !gob.includes(c));
  await combat.updateEmbeddedDocuments("Combatant", rest.map((c, i) => ({ _id: c.id, initiative: 10 - i })));
  assert.deepEqual(gob.map((c) => c.initiative), [4, 4], "members show the group's 4");
  const applier = gm.module.state.applier;
  applier.hooks.awaiting = () => false;
  const entry = (c, initiative) => ({ combatant_id: c.id, initiative, acts: "full", reaction: null, tags: [], detail: {}, rules: [] });
  await applier.take({ combat_id: combat.id, revision: 1, round: 0, current: null, next_round: null, order: [...gob.map((c) => entry(c, 14)), ...rest.map((c, i) => entry(c, 10 - i))] });
  assert.deepEqual(gob.map((c) => c.initiative), [14, 14]);
  assert.deepEqual(combat.turns.slice(0, 2).map((c) => c.id).sort(), gob.map((c) => c.id).sort(), "the pack first, as the plan says");
  assert.ok(world.log.some((e) => e.kind === "updateGroups" && e.own));
});
