// Ready to strike (BI-3) bookkeeping on the GM's machine: the `readyActors` world setting is a
// server round trip (`get` answers the old value until the write comes back, see the double's
// settings and double-writes.test.js), so changes close together must not lose one another.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { ReadyWatch } from "../scripts/ready.js";
import { registerSettings, SETTINGS } from "../scripts/settings.js";
import { MODULE_ID } from "../scripts/constants.js";
import { eachGeneration, makeTable } from "./fake-foundry/index.js";
import { SidecarProcess } from "./helpers/sidecar.js";
import { until, newWorld, bootTable, GM, ALICE, BOB } from "./helpers/table.js";
import { settle } from "./helpers/play.js";

/** Foundry answers a world setting's write after a round trip; 40 ms stands for a slow link. */
const LATENCY = 40;

/** Every write asked for has come back (the promises, then two round trips to be sure). */
const quiet = async (...promises) => { await Promise.all(promises); await new Promise((r) => setTimeout(r, 2 * LATENCY)); };

const watching = (actor_id) => ({ kind: "ready_to_strike", actor_id, state: "watching" });
const broken = (actor_id) => ({ kind: "ready_to_strike", actor_id, state: "broken" });

/** A GM client with the module's settings and a ReadyWatch whose sidecar records intents. */
function gmWatch(generation) {
  const t = makeTable({ generation, settingLatency: LATENCY });
  for (const c of t.clients) registerSettings(c.env);
  const intents = [];
  const watch = new ReadyWatch(t.gm.env, () => ({ intent: (i) => { intents.push(i); return Promise.resolve({ ok: true }); } }));
  const stored = () => t.gm.game.settings.get(MODULE_ID, SETTINGS.READY);
  return { ...t, watch, intents, stored };
}

eachGeneration(test, "two Ready to strike replies close together: the setting ends with both", async (generation) => {
  const { watch, stored, alice } = gmWatch(generation);
  const a = watch.learn([watching("actAria000000001")]);
  const b = watch.learn([watching("actTolm000000001")]); // before the first write came back
  assert.deepEqual(watch.actors, { actAria000000001: "watching", actTolm000000001: "watching" }, "known at once");
  assert.deepEqual(stored(), {}, "the setting has not come back yet");
  await quiet(a, b);
  const both = { actAria000000001: "watching", actTolm000000001: "watching" };
  assert.deepEqual(stored(), both, "the last write holds every update");
  assert.deepEqual(alice.game.settings.get(MODULE_ID, SETTINGS.READY), both, "as every client reads it");
  assert.equal(watch.local, null, "with nothing under way the setting is read again");
});

eachGeneration(test, "a break and a new declaration close together both hold; a break is sent once", async (generation) => {
  const { watch, stored, intents, gm } = gmWatch(generation);
  await watch.learn([watching("actAria000000001")]);
  const r = watch.break("actAria000000001", "moved", "plAlice000000001");
  assert.ok(r, "Aria was watching: ready.break sent");
  const l = watch.learn([watching("actTolm000000001")]);
  assert.equal(watch.break("actAria000000001", "moved", "plAlice000000001"), null, "already broken (before the write came back): not sent twice");
  await l;
  assert.deepEqual(stored(), { actTolm000000001: "watching" });
  assert.deepEqual(intents.map((i) => [i.kind, i.args.actor_id]), [["ready.break", "actAria000000001"]]);
  // many changes in a burst: a write whose change is no longer the latest is skipped
  const { settings } = gm.game;
  const set = settings.set;
  let writes = 0;
  settings.set = (...args) => { writes += 1; return set.apply(settings, args); };
  const burst = ["a1", "a2", "a3", "a4"].map((id) => watch.learn([watching(id)]));
  const last = watch.learn([broken("a2")]);
  await Promise.all([...burst, last]);
  settings.set = set;
  assert.deepEqual(stored(), { actTolm000000001: "watching", a1: "watching", a3: "watching", a4: "watching" });
  assert.equal(writes, 1, "five changes made at once: one write, of the last list");
});

eachGeneration(test, "with nothing under way, a list another GM's client wrote is the one changed", async (generation) => {
  const { watch, stored, world } = gmWatch(generation);
  await watch.learn([watching("actAria000000001")]);
  world.worldSettings.set(`${MODULE_ID}.${SETTINGS.READY}`, { actAria000000001: "watching", actBoss000000001: "watching" });
  await watch.learn([watching("actTolm000000001")]);
  assert.deepEqual(stored(), { actAria000000001: "watching", actBoss000000001: "watching", actTolm000000001: "watching" });
});

eachGeneration(test, "a write that fails is logged, and the list falls back to the setting", async (generation) => {
  const { watch, stored, gm } = gmWatch(generation);
  const set = gm.game.settings.set;
  gm.game.settings.set = async () => { throw new Error("the server refused"); };
  const errors = [];
  const error = console.error;
  console.error = (...args) => errors.push(args.join(" "));
  try {
    await watch.learn([watching("actAria000000001")]);
  } finally {
    console.error = error;
    gm.game.settings.set = set;
  }
  assert.ok(errors.some((e) => e.includes("Ready to strike")), errors.join("\n"));
  assert.deepEqual(watch.actors, stored());
});

// ------------------------------------------------------------------ the real sidecar at the table

let sidecar;
before(async () => { sidecar = await new SidecarProcess().start(); });
after(async () => { await sidecar?.stop(); });

test("Alice and Bob press Ready to strike at the same moment: both are watched, and Aria's move breaks hers", async () => {
  const world = newWorld({ id: "ready-writes", settingLatency: LATENCY });
  const table = bootTable(world, { url: sidecar.url, token: sidecar.token, ruleset: "balanced-d20" });
  const gm = table.clients[GM];
  await until(() => gm.module.state.sidecar?.status === "connected", { what: "connect" });
  await settle(table);
  const tok = (name) => [...world.tokens.values()].find((t) => t.name === name);
  const goblin = tok("Goblin");
  const declare = (client, name) => client.api.readyStart({ id: tok(name)._id, actor: client.game.actors.get(tok(name).actorId) }, { watching: [goblin._id], sees: true, weapon_ready: true });
  const replies = await Promise.all([declare(table.clients[ALICE], "Aria"), declare(table.clients[BOB], "Brother Tolm")]);
  for (const r of replies) assert.equal(r.ok, true, JSON.stringify(r));
  await quiet(gm.module.state.ready.saving);
  const both = { actAria000000001: "watching", actTolm000000001: "watching" };
  assert.deepEqual(gm.game.settings.get(MODULE_ID, SETTINGS.READY), both);
  // Aria moves: the GM sends ready.break for her
  const alice = table.clients[ALICE];
  await alice.tokenDoc(tok("Aria")._id).update({ x: 200 });
  await until(() => table.sent.some((m) => m.data.kind === "ready.break" && m.data.args.actor_id === "actAria000000001"), { what: "ready.break for Aria" });
  await settle(table);
  await quiet(gm.module.state.ready.saving);
  assert.deepEqual(gm.game.settings.get(MODULE_ID, SETTINGS.READY), { actTolm000000001: "watching" });
  gm.module.state.sidecar.stop();
});
