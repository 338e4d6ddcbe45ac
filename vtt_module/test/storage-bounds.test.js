// The outbox and the recorder live in localStorage (client settings): they are bounded, warn the
// GM, and never make the browser refuse a write. After the outbox drops what it could not keep,
// the current state is sent once the sidecar is back, and its plans are followed again.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Outbox, memoryStore } from "../scripts/outbox.js";
import { Recorder } from "../scripts/recorder.js";
import { GM, bootTable, newWorld, until } from "./helpers/table.js";
import { SidecarProcess } from "./helpers/sidecar.js";
import { settle, assertClientsFollowPlan } from "./helpers/play.js";

const payload = (i) => ({ user: "u", world_time: 0, hook: "updateCombat", pad: "x".repeat(200), i });

test("a full outbox keeps the message in flight, drops the rest, numbers on without a gap and asks for a resync", () => {
  const store = memoryStore({ seq: 10, acked: 10, pending: [] });
  const full = [];
  const box = new Outbox(store, { maxChars: 2000, onFull: (n) => full.push(n) });
  const seqs = [];
  for (let i = 0; i < 20; i++) seqs.push(box.enqueue("hook", payload(i)).data.seq);
  assert.ok(full.length >= 1, "the GM was warned");
  assert.ok(JSON.stringify(store.state).length <= 2400, "what is stored stays near the bound");
  assert.equal(box.peek().data.seq, 11, "the oldest (maybe in flight) is kept");
  const pending = box.state.pending.map((m) => m.data.seq);
  assert.deepEqual(pending, pending.map((_, k) => 11 + k), `numbering continues after it without a gap (${pending})`);
  assert.equal(box.needsResync, true);
  box.resynced();
  assert.equal(new Outbox(store).needsResync, false, "the resync is remembered across a reload");
});

test("a save the browser refuses keeps the messages in memory, warns once, and asks for a resync", () => {
  let refuse = false;
  const store = { state: null, load() { return null; }, save(s) { if (refuse) { const e = new Error("quota"); e.name = "QuotaExceededError"; throw e; } this.state = s; } };
  const full = [];
  const box = new Outbox(store, { onFull: (n) => full.push(n) });
  box.enqueue("hook", payload(1));
  box.enqueue("hook", payload(2));
  refuse = true;
  box.enqueue("hook", payload(3));
  box.enqueue("hook", payload(4));
  assert.deepEqual(full, [3], "warned once");
  assert.deepEqual(box.state.pending.map((m) => m.data.seq), [1, 2, 3, 4], "still sent from memory");
  assert.equal(box.needsResync, true);
  refuse = false;
  box.settle(1, { ok: true });
  assert.equal(store.state.pending.length, 3, "saved again once the browser accepts");
});

test("a recording stops at its bound, keeps what it has, and warns once", () => {
  const store = memoryStore();
  const full = [];
  const rec = new Recorder({ load: () => null, save: (l) => { store.state = [...l]; } }, { maxChars: 3000, onFull: (n) => full.push(n) });
  rec.enabled = true;
  rec.session({ token: "t", world: "w", ruleset: "foundry-core", gm_users: ["g"], protocol: 1 });
  for (let seq = 1; seq <= 40; seq++) rec.record({ event: "hook", data: { seq, ...payload(seq) } });
  assert.equal(full.length, 1);
  assert.ok(rec.text().length <= 3000);
  assert.equal(store.state.length, rec.lines.length);
  assert.ok(rec.lines.length > 2, "what fitted is kept for download");
});

test("a long outage: the outbox stays in its bound (no refused write), the GM is warned, and the state is resent when the sidecar is back", { timeout: 60000 }, async () => {
  const sidecar = await new SidecarProcess().start();
  await sidecar.stop(); // down while the GM plays
  // 3.5 MB of localStorage: room for the module's bounds (1 MB outbox, 2 MB recording), not more
  const world = newWorld({ id: "small-storage", storageQuota: 3_500_000 });
  const table = bootTable(world, { url: sidecar.url, token: sidecar.token, record: true });
  const gm = table.clients[GM];
  const combat = await world.createCombat(gm, {});
  await combat.createEmbeddedDocuments("Combatant", [...world.tokens.values()].map((t) => ({ actorId: t.actorId, tokenId: t._id })));
  await gm.game.combats.get(combat.id).rollAll();
  await gm.game.combats.get(combat.id).startCombat();
  const quotaErrors = [];
  const set = gm.game.settings.set.bind(gm.game.settings);
  gm.game.settings.set = (...args) => set(...args).catch((e) => { quotaErrors.push(e); throw e; });
  for (let i = 0; i < 400 && !gm.notifications.some((n) => /is full/.test(n.message)); i++) await gm.game.combats.get(combat.id).nextTurn();
  await until(() => gm.notifications.some((n) => /is full/.test(n.message)), { what: "the storage warning" });
  assert.deepEqual(quotaErrors, [], "the module's own bound came first: the browser refused no write");
  assert.deepEqual(gm.Hooks.errors, [], "no hook failed");
  try {
    await sidecar.start();
    await settle(table, { timeout: 20000 });
    if (process.env.DEBUG_BOUNDS) console.error(JSON.stringify(table.sent.map((m) => [m.data.seq, m.data.hook ?? m.data.kind, m.data.combat?.combatants?.length])), gm.notifications, sidecar.output.slice(-2000));
    assertClientsFollowPlan(table, combat.id);
    const hooks = table.sent.filter((m) => m.event === "hook").map((m) => m.data.hook);
    assert.ok(hooks.includes("createCombat"), "the current state was sent");
  } finally {
    gm.module.state.sidecar.stop();
    await sidecar.stop();
  }
});
