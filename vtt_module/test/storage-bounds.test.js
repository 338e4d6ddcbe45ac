// The outbox lives in the page's memory (nothing of it in localStorage, which every world of
// the server shares): it is bounded and warns the GM. After it drops what it could not keep,
// the current state is sent once the sidecar is back, and its plans are followed again.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Outbox } from "../scripts/outbox.js";
import { GM, bootTable, newWorld, until } from "./helpers/table.js";
import { SidecarProcess } from "./helpers/sidecar.js";
import { settle, assertClientsFollowPlan } from "./helpers/play.js";

const payload = (i) => ({ user: "u", world_time: 0, hook: "updateCombat", pad: "x".repeat(200), i });

test("a full outbox keeps the message in flight, drops the rest, numbers on without a gap and asks for a resync", () => {
  const full = [];
  const box = new Outbox({ maxChars: 2000, onFull: (n) => full.push(n) });
  box.welcome(10);
  const seqs = [];
  for (let i = 0; i < 20; i++) seqs.push(box.enqueue("hook", payload(i)).data.seq);
  assert.ok(full.length >= 1, "the GM was warned");
  assert.ok(box.chars <= 2400, "what is kept stays near the bound");
  assert.equal(box.peek().data.seq, 11, "the oldest (maybe in flight) is kept");
  const pending = box.state.pending.map((m) => m.data.seq);
  assert.deepEqual(pending, pending.map((_, k) => 11 + k), `numbering continues after it without a gap (${pending})`);
  assert.equal(box.resync, true);
});

test("a long outage: the outbox stays in its bound, nothing of it reaches localStorage, the GM is warned, and the state is resent when the sidecar is back", { timeout: 60000 }, async () => {
  const sidecar = await new SidecarProcess().start();
  await sidecar.stop(); // down while the GM plays
  // a small localStorage: the outbox must not live there
  const world = newWorld({ id: "small-storage", storageQuota: 20_000 });
  const table = bootTable(world, { url: sidecar.url, token: sidecar.token });
  const gm = table.clients[GM];
  gm.module.state.sidecar.outbox.maxChars = 200_000; // reached in a few hundred turns
  const combat = await world.createCombat(gm, {});
  await combat.createEmbeddedDocuments("Combatant", [...world.tokens.values()].map((t) => ({ actorId: t.actorId, tokenId: t._id })));
  await gm.game.combats.get(combat.id).rollAll();
  await gm.game.combats.get(combat.id).startCombat();
  const quotaErrors = [];
  const set = gm.game.settings.set.bind(gm.game.settings);
  gm.game.settings.set = (...args) => set(...args).catch((e) => { quotaErrors.push(e); throw e; });
  for (let i = 0; i < 400 && !gm.notifications.some((n) => /is full/.test(n.message)); i++) await gm.game.combats.get(combat.id).nextTurn();
  await until(() => gm.notifications.some((n) => /is full/.test(n.message)), { what: "the storage warning" });
  assert.deepEqual(quotaErrors, [], "the browser refused no write");
  assert.deepEqual([...gm.storage.keys()].filter((k) => k.startsWith("initiative-sidecar.")).sort(), ["initiative-sidecar.token-small-storage", "initiative-sidecar.unsent", "initiative-sidecar.url-small-storage"]);
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
