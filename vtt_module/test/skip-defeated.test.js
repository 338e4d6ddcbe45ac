// Core's Skip Defeated travels to the sidecar: every combat snapshot the module forwards carries
// the tracker's setting as `skip_defeated` (research §2: `combat.settings.skipDefeated`), and
// under foundry-core Next Turn then lands where a world without the module lands: on a defeated
// combatant with the setting off (core's default), past it with the setting on, the module
// writing nothing either way. Run against the real sidecar.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { GM } from "./helpers/table.js";
import { SidecarProcess } from "./helpers/sidecar.js";
import { setupCombat, settle, lastPlan } from "./helpers/play.js";

let sidecar;
before(async () => { sidecar = await new SidecarProcess().start(); });
after(async () => { await sidecar?.stop(); });

/** The `skip_defeated` of every hook the GM's module sent since `from`. */
const sentSettings = (table, from) => table.sent.slice(from).filter((m) => m.event === "hook").map((m) => m.data.combat.skip_defeated);

for (const skipDefeated of [false, true]) {
  test(`foundry-core, Skip Defeated ${skipDefeated ? "on" : "off"}: the hooks carry it and Next Turn lands where core lands`, async () => {
    const { world, table, gm, combatId } = await setupCombat(sidecar, "foundry-core", `skip-defeated-${skipDefeated}`);
    await gm.game.settings.set("core", "combatTrackerConfig", { resource: "", skipDefeated });
    const combat = gm.game.combats.get(combatId);
    world.dice.script(18, 15, 12, 9);
    await combat.rollAll();
    await settle(table);
    await combat.startCombat();
    await settle(table);
    const second = combat.turns[1];
    await second.update({ defeated: true });
    await settle(table);
    const from = table.sent.length;
    const writes = world.log.filter((e) => e.own).length;
    await combat.nextTurn();
    await settle(table);
    assert.deepEqual([...new Set(sentSettings(table, from))], [skipDefeated], "every hook states the tracker's setting");
    const landed = skipDefeated ? combat.turns[2].id : second.id;
    assert.equal(combat.combatant.id, landed, skipDefeated ? "core passes the defeated one over" : "core gives the defeated one its turn");
    assert.equal(lastPlan(table, combatId).current, landed, "the sidecar plans that very turn");
    assert.equal(world.log.filter((e) => e.own).length, writes, "the module wrote nothing");
  });
}

test("a snapshot without a combat tracker setting states Skip Defeated off, core's default", async () => {
  const { snapshotOf } = await import("../scripts/foundry-data.js");
  const { table, combatId } = await setupCombat(sidecar, "foundry-core", "skip-defeated-default");
  const combat = table.clients[GM].game.combats.get(combatId);
  assert.equal(snapshotOf(table.clients[GM].env, combat).skip_defeated, false);
});
