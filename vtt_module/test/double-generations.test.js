// What differs between the double's Foundry 13 and 14 worlds, and the helpers that run a
// test under both (fake-foundry/README.md lists the sources).
import { test } from "node:test";
import assert from "node:assert/strict";
import { makeTable, addCombat, eachGeneration, selectedGenerations, assertNoDeprecations, World, GM } from "./fake-foundry/index.js";

const ARIA = "tokAria000000001", BOSS = "tokBoss000000001";
const byToken = (combat, tokenId) => combat.combatants.find((c) => c.tokenId === tokenId);

test("game.release and game.version by generation and build", () => {
  const v13 = makeTable({ generation: 13 }).gm.game;
  assert.deepEqual([v13.release.generation, v13.release.build, v13.version], [13, 350, "13.350"]);
  const v14 = makeTable({ generation: 14 }).gm.game;
  assert.deepEqual([v14.release.generation, v14.release.build, v14.version], [14, 369, "14.369"]);
  const w = new World({ generation: 13, build: 351, users: [{ _id: GM, name: "GM", role: World.ROLES.GAMEMASTER }] });
  assert.equal(w.connect(GM).game.version, "13.351");
  assert.throws(() => new World({ generation: 12 }), /generation must be one of 13,14/);
});

test("eachGeneration registers one test per generation, named after it", () => {
  const names = [];
  eachGeneration((name, _opts, fn) => names.push([name, typeof fn]), "x", () => {});
  assert.deepEqual(names, selectedGenerations().map((g) => [`x [v${g}]`, "function"]));
  const raw = process.env.FAKE_FOUNDRY_GENERATIONS ?? process.env.FAKE_FOUNDRY_GENERATION;
  assert.deepEqual(selectedGenerations(), raw ? raw.split(",").map(Number) : [13, 14]);
});

eachGeneration(test, "DialogV2 has confirm, prompt, input and wait; the answer comes from the test's respond()", async (generation) => {
  const { gm } = makeTable({ generation });
  const { DialogV2 } = gm.env.foundry.applications.api;
  for (const k of ["confirm", "prompt", "input", "wait", "query"]) assert.equal(typeof DialogV2[k], "function", k);
  gm.respond = (kind, config) => ({ kind, title: config.window.title });
  assert.deepEqual(await DialogV2.input({ window: { title: "T" } }), { kind: "input", title: "T" });
  assert.equal(gm.dialogs.length, 1);
});

eachGeneration(test, "the V1 Dialog global is recorded as deprecated (since 13)", async (generation) => {
  const t = makeTable({ generation });
  await t.gm.env.Dialog.confirm({ title: "old" });
  assert.throws(() => assertNoDeprecations(t.world), /Dialog class which is deprecated/);
});

test("v13 hides a roll with rollMode; messageMode means nothing there (the message goes public)", async () => {
  const t = makeTable({ generation: 13 });
  const seen = { alice: 0 };
  t.alice.Hooks.on("createChatMessage", () => { seen.alice += 1; });
  const roll = new t.gm.env.Roll("1d20");
  await roll.toMessage({}, { rollMode: "gmroll" });
  assert.deepEqual(t.world.chat.at(-1).whisper, t.world.gmIds());
  assert.equal(seen.alice, 0);
  await new t.gm.env.Roll("1d20").toMessage({}, { messageMode: "gm" });
  assert.deepEqual(t.world.chat.at(-1).whisper, []);
  assert.equal(seen.alice, 1);
  assert.deepEqual(t.world.deprecations, []);
  assert.equal(t.gm.game.settings.get("core", "rollMode"), "publicroll");
  assert.throws(() => t.gm.game.settings.get("core", "messageMode"), /not a registered game setting/, "no messageMode on 13");
  assert.equal(t.gm.env.CONFIG.ChatMessage.modes, undefined);
});

test("v14 hides a roll with messageMode; rollMode still hides but is recorded as deprecated", async () => {
  const t = makeTable({ generation: 14 });
  await new t.gm.env.Roll("1d20").toMessage({}, { messageMode: "gm" });
  assert.deepEqual(t.world.chat.at(-1).whisper, t.world.gmIds());
  assert.deepEqual(t.world.deprecations, []);
  await new t.gm.env.Roll("1d20").toMessage({}, { rollMode: "gmroll" });
  assert.deepEqual(t.world.chat.at(-1).whisper, t.world.gmIds());
  assert.match(t.world.deprecations[0].message, /rollMode option of Roll#toMessage is deprecated/);
  assert.equal(t.gm.game.settings.get("core", "messageMode"), "public");
  assert.ok(t.gm.env.CONFIG.ChatMessage.modes.gm);
  t.world.deprecations.length = 0;
  await t.gm.game.settings.set("core", "messageMode", "gm");
  assert.equal(t.gm.game.settings.get("core", "rollMode"), "gmroll", "the old setting answers, mapped");
  assert.ok(t.gm.env.CONFIG.Dice.rollModes.gmroll);
  assert.deepEqual(t.world.deprecations.map((d) => d.message), ["The core.rollMode setting is deprecated in favor of core.messageMode", "CONFIG.Dice.rollModes is deprecated in favor of CONFIG.ChatMessage.modes"]);
});

eachGeneration(test, "core's initiative roll of a hidden combatant is whispered to the GMs, in the generation's own terms", async (generation) => {
  const t = makeTable({ generation, system: "worldbuilding" });
  const combat = await addCombat(t);
  await combat.rollInitiative([byToken(combat, BOSS).id]);
  const card = t.world.chat.at(-1);
  assert.equal(card.flags.core.initiativeRoll, true);
  assert.deepEqual(card.whisper, t.world.gmIds());
  assertNoDeprecations(t.world);
});

test("v14 combatants carry roundJoined (1 before the start, else the round); v13 has none", async () => {
  const t14 = makeTable({ generation: 14 });
  const c14 = await addCombat(t14, { [ARIA]: 5 });
  assert.equal(byToken(c14, ARIA).roundJoined, 1);
  await c14.startCombat();
  await c14.nextRound();
  const [late] = await c14.createEmbeddedDocuments("Combatant", [{ actorId: "actGob0000000001", name: "Late" }]);
  assert.equal(late.roundJoined, 2);
  assert.equal(byToken(t14.bob.game.combats.get(c14.id), ARIA).toObject().roundJoined, 1, "in the source every client holds");
  const t13 = makeTable({ generation: 13 });
  const c13 = await addCombat(t13);
  assert.equal(byToken(c13, ARIA).roundJoined, undefined);
  assert.ok(!("roundJoined" in byToken(c13, ARIA).toObject()));
});

eachGeneration(test, "dnd5e's getInitiativeRoll ignores a formula argument; core's uses it", async (generation) => {
  const dnd = makeTable({ generation, system: "dnd5e" });
  const c1 = await addCombat(dnd);
  assert.equal(byToken(c1, ARIA).getInitiativeRoll("3d6cs>=4").formula, "1d20 + 3");
  const core = makeTable({ generation, system: "worldbuilding" });
  const c2 = await addCombat(core);
  assert.equal(byToken(c2, ARIA).getInitiativeRoll("3d6cs>=4").formula, "3d6cs>=4");
});

test("FAKE_FOUNDRY_GENERATION picks the default generation of a World", async () => {
  const { execFileSync } = await import("node:child_process");
  const code = `import { World } from "./test/fake-foundry/index.js"; console.log(new World().generation);`;
  const run = (env) => execFileSync(process.execPath, ["--input-type=module", "-e", code], { cwd: new URL("..", import.meta.url), env: { ...process.env, ...env } }).toString().trim();
  assert.equal(run({ FAKE_FOUNDRY_GENERATION: "14" }), "14");
  assert.equal(run({ FAKE_FOUNDRY_GENERATION: "13" }), "13");
});

eachGeneration(test, "User#query runs CONFIG.queries on the target's client; an unregistered query or inactive user fails", async (generation) => {
  const t = makeTable({ generation });
  t.gm.CONFIG.queries["mod.ask"] = async (data) => ({ got: data.n * 2 });
  const gmUser = t.alice.game.users.activeGM;
  assert.deepEqual(await gmUser.query("mod.ask", { n: 21 }), { got: 42 });
  await assert.rejects(gmUser.query("mod.nope", {}), /not registered/);
  t.world.setActive(GM, false);
  await assert.rejects(t.alice.game.users.get(GM).query("mod.ask", { n: 1 }), /not active/);
  t.gm.respond = (kind) => kind === "confirm";
  t.world.setActive(GM, true);
  assert.equal(await t.alice.env.foundry.applications.api.DialogV2.query(GM, "confirm", { content: "?" }), true);
});

eachGeneration(test, "dnd5e's initiative settings: the dex tiebreaker adds score/100, a fixed score replaces the roll", async (generation) => {
  const t = makeTable({ generation, system: "dnd5e" });
  const combat = await addCombat(t);
  t.world.worldSettings.set("dnd5e.initiativeDexTiebreaker", true);
  const aria = byToken(combat, ARIA);
  assert.equal(aria.getInitiativeRoll().formula, "1d20 + 3 + 0.16");
  t.world.dice.script(11);
  await combat.rollInitiative([aria.id]);
  assert.equal(aria.initiative, 14.16, "a total with decimals of its own");
  t.world.worldSettings.set("dnd5e.initiativeScore", "all");
  assert.equal(aria.getInitiativeRoll().formula, "13");
  const noActor = (await combat.createEmbeddedDocuments("Combatant", [{ name: "Trap" }]))[0];
  assert.equal(noActor.getInitiativeRoll("2d6").formula, "2d6", "without an actor the formula is used");
});

test("a module whose compatibility excludes the running core is not active, and boot refuses it", async () => {
  const { packageCompatible, releaseOf } = await import("./fake-foundry/index.js");
  const r13 = releaseOf(13, 350), r14 = releaseOf(14, 369);
  assert.equal(packageCompatible({ minimum: "12", maximum: "13" }, r13).ok, true);
  assert.match(packageCompatible({ minimum: "12", maximum: "13" }, r14).reason, /maximum 13 is below the running core 14.369/);
  assert.equal(packageCompatible({ minimum: "13", verified: "14.369", maximum: "14" }, r14).ok, true);
  assert.equal(packageCompatible({ minimum: "13.351" }, r13).ok, false, "build-level minimum");
  assert.equal(packageCompatible({ maximum: "14.360" }, r14).ok, false, "build-level maximum");
  const off = makeTable({ generation: 14, manifest: { compatibility: { minimum: "12", maximum: "13" } } });
  assert.equal(off.gm.game.modules.get("initiative-sidecar").active, false);
  assert.throws(() => off.gm.boot(), /cannot activate module initiative-sidecar: compatibility.maximum 13/);
  const on = makeTable({ generation: 14, manifest: { compatibility: { minimum: "13", maximum: "14" } } });
  assert.equal(on.gm.game.modules.get("initiative-sidecar").active, true);
});

eachGeneration(test, "dialog content and chat content/flavor become markup in the page, so a hostile name is visible as an element", async (generation) => {
  const t = makeTable({ generation });
  const evil = `<img src=x onerror="alert(1)">`;
  let seen = null;
  t.gm.respond = (_kind, _config, element) => { seen = element.querySelectorAll(".window-content img").length; return true; };
  await t.gm.env.foundry.applications.api.DialogV2.confirm({ content: `<p>${evil}</p>` });
  assert.equal(seen, 1, "the dialog's content is HTML (cleaned: the element stays, its handler goes)");
  assert.equal(t.gm.dialogs[0].element.querySelectorAll(".window-content img").length, 1);
  await t.gm.env.ChatMessage.create({ content: `<p>${evil}</p>`, flavor: "ok" });
  for (const c of t.clients) assert.equal(c.chatLog.querySelectorAll(".message-content img[onerror]").length, 1, c.userId);
  await t.gm.env.ChatMessage.create({ content: "secret", flavor: evil }, generation >= 14 ? { messageMode: "gm" } : { rollMode: "gmroll" });
  assert.equal(t.gm.chatLog.querySelectorAll(".flavor-text img[onerror]").length, 1);
  assert.equal(t.alice.chatLog.querySelectorAll(".flavor-text img").length, 0, "a whisper to the GMs is not in a player's log");
});
