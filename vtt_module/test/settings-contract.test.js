// One settings contract: the module sends, per ruleset, exactly what schemas/settings.schema.json
// lists; the sidecar reads it (a d10 pool when the GM says so) and refuses a bad one at connect.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { RULESET_SETTINGS, rulesetSettings } from "../scripts/settings.js";
import { invalid } from "./helpers/schemas.js";
import { GM, ALICE, bootTable, newWorld, until } from "./helpers/table.js";
import { SidecarProcess } from "./helpers/sidecar.js";
import { settle } from "./helpers/play.js";

const SCHEMA = JSON.parse(readFileSync(new URL("../../schemas/settings.schema.json", import.meta.url), "utf8"));
const RULESETS = Object.keys(SCHEMA.$defs).filter((k) => k !== "stat_path");

/** A stand-in env whose settings are a map. */
function envWith(values, system = "dnd5e") {
  return { game: { system: { id: system }, settings: { get: (_ns, key) => values[key] } } };
}
const DEFAULTS = { autoApprove: false, statPaths: "", dieFaces: 6, successAt: 4, onesCancel: true };

test("the module's table of what each ruleset reads is the schema's", () => {
  assert.deepEqual(Object.keys(RULESET_SETTINGS).sort(), [...RULESETS].sort());
  for (const ruleset of RULESETS) {
    const def = SCHEMA.$defs[ruleset];
    const keys = Object.keys(def.properties).filter((k) => k !== "stat_paths").sort();
    const stats = Object.keys(def.properties.stat_paths?.properties ?? {}).sort();
    assert.deepEqual([...RULESET_SETTINGS[ruleset].keys].sort(), keys, `${ruleset}: setting keys`);
    assert.deepEqual([...RULESET_SETTINGS[ruleset].stats].sort(), stats, `${ruleset}: stats`);
  }
});

test("the auth settings the module builds fit the contract for every ruleset and system", () => {
  for (const system of ["dnd5e", "pf2e", "worldbuilding"]) {
    for (const ruleset of RULESETS) {
      const settings = rulesetSettings(envWith({ ...DEFAULTS, ruleset }, system), ruleset);
      assert.equal(invalid("settings", { ruleset, settings }), null, `${ruleset} in ${system}`);
      const listed = [...RULESET_SETTINGS[ruleset].keys, ...(RULESET_SETTINGS[ruleset].stats.length ? ["stat_paths"] : [])];
      assert.deepEqual(Object.keys(settings).sort(), listed.sort(), `${ruleset}: exactly what it reads`);
    }
  }
  // the old channel (stat_paths under foundry-core, a dice setting under balanced-d20) is refused
  assert.ok(invalid("settings", { ruleset: "foundry-core", settings: { stat_paths: {} } }));
  assert.ok(invalid("settings", { ruleset: "balanced-d20", settings: { die_faces: 6 } }));
});

let sidecar;
before(async () => { sidecar = await new SidecarProcess().start(); });
after(async () => { await sidecar?.stop(); });

test("dice-pool: the GM's die settings reach the sidecar, whose formula the module rolls", async () => {
  const world = newWorld({ id: "settings-d10" });
  world.worldSettings.set("initiative-sidecar.dieFaces", 10);
  world.worldSettings.set("initiative-sidecar.successAt", 8);
  const table = bootTable(world, { url: sidecar.url, token: sidecar.token, ruleset: "dice-pool" });
  const gm = table.clients[GM];
  await until(() => gm.module.state.sidecar?.status === "connected", { what: "the GM to connect" });
  assert.deepEqual(table.auths[0].settings.die_faces, 10);
  const combat = await world.createCombat(gm, {});
  const aria = [...world.tokens.values()].find((t) => t.name === "Aria");
  await combat.createEmbeddedDocuments("Combatant", [{ actorId: aria.actorId, tokenId: aria._id }]);
  await settle(table);
  world.dice.script(8, 9, 1, 2, 3);
  await table.clients[ALICE].game.combats.get(combat.id).rollAll();
  await settle(table);
  const roll = table.sent.find((m) => m.data.hook === "initiativeRoll");
  assert.equal(roll.data.roll.roll.formula, "5d10cs>=8df=1", "the sidecar's formula, from the GM's settings");
  gm.module.state.sidecar.stop();
});

test("a bad setting is refused at connect with its path, and the GM is told", async () => {
  const world = newWorld({ id: "settings-bad" });
  world.worldSettings.set("initiative-sidecar.dieFaces", 1);
  const table = bootTable(world, { url: sidecar.url, token: sidecar.token, ruleset: "dice-pool" });
  const gm = table.clients[GM];
  await until(() => gm.notifications.some((n) => n.level === "error"), { what: "the GM to be told" });
  const note = gm.notifications.find((n) => n.level === "error").message;
  assert.match(note, /invalid_message/);
  assert.match(note, /\/settings\/die_faces/);
  gm.module.state.sidecar.stop();
});
