// Issue 25, fault 1: Foundry keeps client settings in the browser's localStorage under
// `namespace.key`, shared by every world of the server. A GM who switches between two worlds
// in one browser, any number of times, is warned of nothing, resends nothing and loses
// nothing: the outbox lives in each page's memory, and a world whose page closed with
// messages unsent gets its current state at its next welcome.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { browser } from "./fake-foundry/index.js";
import { SidecarProcess, freePort } from "./helpers/sidecar.js";
import { GM, newWorld, bootTable, until } from "./helpers/table.js";
import { settle } from "./helpers/play.js";

let sidecar;
before(async () => { sidecar = await new SidecarProcess().start(); });
after(async () => { await sidecar?.stop(); });

/** Open a world in the GM's browser (one page), run `body`, close the page. */
async function visit(world, origin, url, body) {
  const table = bootTable(world, { url, token: sidecar.token, users: [GM], storage: { [GM]: origin } });
  const gm = table.clients[GM];
  try {
    await body(table, gm);
  } finally {
    gm.module.state.sidecar?.stop();
    world.disconnect(gm);
  }
  return { sent: table.sent, warnings: gm.notifications.filter((n) => n.level !== "info").map((n) => n.message) };
}

const about = (sent, combatId) => sent.filter((m) => (m.data.combat?._id ?? m.data.combat_id) === combatId);

test("two worlds in one browser, switched back and forth: nothing warned, nothing resent, nothing lost", { timeout: 90000 }, async () => {
  const origin = browser();
  const a = newWorld({ id: "switch-world-a" }), b = newWorld({ id: "switch-world-b" });
  const closed = `http://127.0.0.1:${await freePort()}`;
  let combatA, combatB;
  // world A while the sidecar cannot be reached: a combat is made and rolled, nothing is sent
  const first = await visit(a, origin, closed, async (_t, gm) => {
    const combat = await a.createCombat(gm, {});
    await combat.createEmbeddedDocuments("Combatant", [...a.tokens.values()].map((t) => ({ actorId: t.actorId, tokenId: t._id })));
    await gm.game.combats.get(combat.id).rollAll();
    combatA = combat.id;
    await until(() => gm.module.state.sidecar.outbox.size >= 5, { what: "world A's messages to wait" });
  });
  assert.deepEqual(first.sent, [], "the sidecar was away");
  // world B, the sidecar up: it sends only its own
  const second = await visit(b, origin, sidecar.url, async (table, gm) => {
    await until(() => gm.module.state.sidecar.status === "connected", { what: "world B to connect" });
    const combat = await b.createCombat(gm, {});
    await combat.createEmbeddedDocuments("Combatant", [...b.tokens.values()].slice(0, 2).map((t) => ({ actorId: t.actorId, tokenId: t._id })));
    combatB = combat.id;
    await settle(table);
  });
  assert.deepEqual(about(second.sent, combatA), [], "world A's messages are never sent as world B's");
  assert.ok(about(second.sent, combatB).length >= 3, "world B's own are");
  assert.deepEqual(second.warnings, [], "world B warns nothing (no 'lost history')");
  // back to world A, the sidecar up: what its closed page never sent arrives now, as its current state
  const third = await visit(a, origin, sidecar.url, async (table, gm) => {
    await until(() => gm.module.state.sidecar.status === "connected", { what: "world A to connect" });
    await settle(table);
  });
  assert.deepEqual(third.warnings, []);
  const rolls = about(third.sent, combatA).filter((m) => m.data.hook === "initiativeRoll");
  assert.ok(about(third.sent, combatA).some((m) => m.data.hook === "createCombat"), "world A's combat reached the sidecar");
  assert.equal(rolls.length, a.tokens.size, "with every roll made while the sidecar was away");
  assert.deepEqual(about(third.sent, combatB), []);
  // and back and forth again: each page finds its world as it left it
  for (const [world, id] of [[b, combatB], [a, combatA], [b, combatB]]) {
    const again = await visit(world, origin, sidecar.url, async (table, gm) => {
      await until(() => gm.module.state.sidecar.status === "connected", { what: `${world.id} to connect` });
      await settle(table);
    });
    assert.deepEqual(again.sent, [], `${world.id}: nothing resent (${id})`);
    assert.deepEqual(again.warnings, [], `${world.id}: nothing warned`);
  }
  assert.deepEqual([...origin.keys()].filter((k) => k.startsWith("initiative-sidecar.")).sort(),
    ["initiative-sidecar.token-switch-world-a", "initiative-sidecar.token-switch-world-b", "initiative-sidecar.unsent", "initiative-sidecar.url-switch-world-a", "initiative-sidecar.url-switch-world-b"],
    "the browser holds a token and a URL per world and the flags, no queue");
});

test("each world keeps its own token: setting one world's never changes the other's", async () => {
  const origin = browser();
  const a = newWorld({ id: "token-world-a" }), b = newWorld({ id: "token-world-b" });
  const pageA = a.connect(GM, { storage: origin });
  const pageB = b.connect(GM, { storage: origin });
  const { wireModule } = await import("../scripts/wire.js");
  for (const page of [pageA, pageB]) { wireModule(page.env); page.Hooks.callAll("init"); }
  const tokenSetting = (page) => [...page.game.settings.registry.entries()].find(([id, c]) => id.startsWith("initiative-sidecar.token") && c.scope === "client")[0];
  await pageA.game.settings.set("initiative-sidecar", tokenSetting(pageA).slice("initiative-sidecar.".length), "token-of-a");
  await pageB.game.settings.set("initiative-sidecar", tokenSetting(pageB).slice("initiative-sidecar.".length), "token-of-b");
  assert.equal(pageA.game.settings.get("initiative-sidecar", tokenSetting(pageA).slice("initiative-sidecar.".length)), "token-of-a");
});

test("the entries 0.1.0 left in the browser (the token in plain text, the outbox, the recording) are removed at ready", () => {
  const origin = browser();
  const world = newWorld({ id: "old-entries-world" });
  for (const key of ["token", "outbox", "recording"]) origin.set(`initiative-sidecar.${key}`, key === "token" ? "0ld-t0ken" : [{ seq: 1 }]);
  const table = bootTable(world, { token: "t0ken", users: [GM], storage: { [GM]: origin } });
  assert.deepEqual([...origin.keys()].filter((k) => k.startsWith("initiative-sidecar.")).sort(),
    ["initiative-sidecar.token-old-entries-world", "initiative-sidecar.url-old-entries-world"]);
  table.clients[GM].module.state.sidecar?.stop();
});
