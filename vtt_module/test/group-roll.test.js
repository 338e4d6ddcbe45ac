// A CombatantGroup's roll from the real module (dice-pool DP-6): the GM rolls a member of a
// group in the Foundry double; the sidecar's plan handed that member its group's pool, so
// the module forwards the roll as the group's (`roll.group_id`), and every member takes it.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { GM, until, newWorld, bootTable } from "./helpers/table.js";
import { SidecarProcess } from "./helpers/sidecar.js";
import { settle, lastPlan } from "./helpers/play.js";
import { rollingGroup } from "../scripts/payloads.js";

const PACK = "grpPack000000001";

let sidecar;
before(async () => { sidecar = await new SidecarProcess().start(); });
after(async () => { await sidecar?.stop(); });

test("a member's roll is its group's when the plan says it rolls with the group, else its own", () => {
  const member = (group, detail) => ({ group, flags: { "initiative-sidecar": { state: { detail } } } });
  assert.equal(rollingGroup(member(PACK, { group: PACK })), PACK);
  assert.equal(rollingGroup(member({ id: PACK }, { group: PACK })), PACK, "a group document in place of its id");
  assert.equal(rollingGroup(member(PACK, {})), null, "the ruleset does not roll groups");
  assert.equal(rollingGroup(member(null, { group: PACK })), null, "no longer in the group");
  assert.equal(rollingGroup({ group: PACK }), null, "no plan yet");
});

test("dice-pool: the GM rolls one member of a group; the roll goes as the group's and both members take it", async () => {
  const world = newWorld({ id: "dp-group-world" });
  const table = bootTable(world, { url: sidecar.url, token: sidecar.token, ruleset: "dice-pool", record: true });
  const gm = table.clients[GM];
  await until(() => gm.module.state.sidecar?.status === "connected", { what: "the GM to connect" });
  const npcs = [...world.tokens.values()].filter((t) => t.name === "Goblin" || t.name === "Hidden Boss");
  const combat = await world.createCombat(gm, { groups: [{ _id: PACK, type: "base", system: {}, name: "Pack", img: null, initiative: null, ownership: { default: 0 }, flags: {} }] });
  await combat.createEmbeddedDocuments("Combatant", npcs.map((t) => ({ actorId: t.actorId, tokenId: t._id, sceneId: "scene00000000001", group: PACK })));
  await settle(table);
  const members = gm.game.combats.get(combat.id).combatants.contents;
  assert.ok(members.every((c) => c.flags["initiative-sidecar"]?.state?.detail?.group === PACK), "the plan names the group");
  // the group rolls its slowest member's pool (the goblin's 2 dice): 5, 5 = 2 successes
  world.dice.script(5, 5);
  await gm.game.combats.get(combat.id).rollInitiative([members.find((c) => c.name === "Goblin").id]);
  await settle(table);
  const rolls = table.sent.filter((m) => m.data.hook === "initiativeRoll");
  assert.equal(rolls.length, 1);
  assert.equal(rolls[0].data.roll.group_id, PACK);
  assert.equal(rolls[0].data.roll.combatant_id, undefined);
  assert.equal(rolls[0].data.roll.roll.formula, "2d6cs>=4df=1");
  const plan = lastPlan(table, combat.id);
  assert.deepEqual(plan.order.map((e) => e.detail.successes), [2, 2], "both members took the group's roll");
  assert.ok(table.sent.every((m) => m.event !== "intent" || m.data.kind !== "initiative.set"), "no member's number was sent as the GM's edit");
  gm.module.state.sidecar.stop();
});
