// The same GM with Foundry open in two pages (two tabs, or two browsers on the sidecar's
// machine): the page opened last takes the connection over and the first one gets
// `superseded`. The first page then stays quiet while the other holds the connection (no
// two pages taking it from each other in a loop), and takes it back once the other page is
// closed. A message refused `superseded` was not stored: it stays in the outbox.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Outbox, memoryStore } from "../scripts/outbox.js";
import { SidecarProcess } from "./helpers/sidecar.js";
import { GM, ALICE, newWorld, bootTable, bootClient, until } from "./helpers/table.js";

let sidecar;
before(async () => { sidecar = await new SidecarProcess().start(); });
after(async () => { await sidecar?.stop(); });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const status = (client) => client.module.state.sidecar?.status;

test("an ack refused superseded is not settled: the message stays for the resend", () => {
  const outbox = new Outbox(memoryStore());
  const m = outbox.enqueue("hook", { hook: "updateCombat" });
  assert.equal(outbox.settle(m.data.seq, { ok: false, seq: m.data.seq, error: { code: "superseded", message: "another connection took over this world" } }), "resend");
  assert.equal(outbox.size, 1, "kept");
  assert.equal(outbox.state.acked, 0, "acked does not pass a seq the sidecar did not store");
});

test("a page superseded by another page of the same GM stays quiet while that page holds the connection, and takes it back once it is closed", async () => {
  const world = newWorld({ id: "two-tabs-world" });
  const table = bootTable(world, { url: sidecar.url, token: sidecar.token, users: [GM, ALICE] });
  const first = table.clients[GM];
  await until(() => status(first) === "connected", { what: "the first page to connect" });
  Object.assign(first.module.state.sidecar.probe ?? {}, { everyMs: 200, waitMs: 300 }); // ask often: a loop would show here
  // the GM opens a second page (its own browser storage, the same token)
  const second = bootClient(world, GM, { token: sidecar.token, sent: table.sent, auths: table.auths });
  await until(() => status(second) === "connected" && status(first) === "superseded", { what: "the second page to take over" });
  assert.equal(first.notifications.filter((n) => /took over/.test(n.message)).length, 1, "the first page's GM is told once");
  // quiet: several rounds of asking, and nobody takes the connection from anybody
  await sleep(1500);
  assert.equal(table.auths.length, 2, "no page connected again: no fight over the world");
  assert.equal(status(second), "connected");
  assert.equal(status(first), "superseded");
  // a combat made meanwhile is the holder's to send: sent once, by the second page's link
  const combat = await world.createCombat(first, {});
  await until(() => table.sent.some((m) => m.data.combat?._id === combat.id), { what: "the combat sent" });
  await sleep(600);
  assert.equal(table.sent.filter((m) => m.data.hook === "createCombat" && m.data.combat._id === combat.id).length, 1, "sent once");
  // the second page is closed: its link goes with it
  second.module.state.sidecar.stop();
  world.disconnect(second);
  await until(() => status(first) === "connected", { what: "the first page to take the connection back", timeout: 5000 });
  assert.equal(table.auths.length, 3);
  // and it forwards again: a hook now reaches the sidecar
  await combat.createEmbeddedDocuments("Combatant", [{ actorId: "actAria000000001", tokenId: [...world.tokens.values()][0]._id }]);
  await until(() => table.sent.some((m) => m.data.hook === "createCombatant" && m.data.combat._id === combat.id), { what: "the new combatant sent" });
  first.module.state.sidecar.stop();
});

test("a player's declaration while the GM has two pages open is answered by the page holding the connection, never refused no_sidecar by the other", async () => {
  const world = newWorld({ id: "two-tabs-player-world" });
  const table = bootTable(world, { url: sidecar.url, token: sidecar.token, ruleset: "balanced-d20", users: [GM, ALICE] });
  const first = table.clients[GM];
  await until(() => status(first) === "connected", { what: "the first page to connect" });
  const second = bootClient(world, GM, { token: sidecar.token, sent: table.sent, auths: table.auths });
  await until(() => status(second) === "connected" && status(first) === "superseded", { what: "the second page to take over" });
  const alice = table.clients[ALICE];
  const token = [...world.tokens.values()].find((t) => t.name === "Aria");
  for (let i = 0; i < 3; i++) {
    const r = await alice.api.readyStart({ id: token._id, actor: alice.game.actors.get(token.actorId) }, { watching: [], sees: true, weapon_ready: true });
    assert.notEqual(r.error?.code, "no_sidecar", `answered by the superseded page: ${JSON.stringify(r)}`);
  }
  assert.ok(table.sent.some((m) => m.data.kind === "ready.start" && m.data.user === ALICE), "the declaration reached the sidecar");
  second.module.state.sidecar.stop();
  first.module.state.sidecar.stop();
});

test("a hook made between the other page's closing and this page's return reaches the sidecar", async () => {
  const world = newWorld({ id: "gap-world" });
  const table = bootTable(world, { url: sidecar.url, token: sidecar.token, users: [GM, ALICE] });
  const first = table.clients[GM];
  await until(() => status(first) === "connected", { what: "the first page to connect" });
  Object.assign(first.module.state.sidecar.probe ?? {}, { everyMs: 60000, waitMs: 300 }); // only a hook makes it ask
  const second = bootClient(world, GM, { token: sidecar.token, sent: table.sent, auths: table.auths });
  await until(() => status(first) === "superseded", { what: "the second page to take over" });
  second.module.state.sidecar.stop();
  world.disconnect(second);
  const combat = await world.createCombat(first, {}); // nobody holds the connection now
  await until(() => status(first) === "connected", { what: "the hook to bring the first page back" });
  await until(() => table.sent.some((m) => m.data.hook === "createCombat" && m.data.combat._id === combat.id), { what: "the combat sent by the first page" });
  first.module.state.sidecar.stop();
});

test("a message acked superseded (in flight when another page took over) stays in the outbox and closes the link", async () => {
  const { SidecarClient } = await import("../scripts/sidecar-client.js");
  const handlers = {};
  const socket = {
    connected: true, active: true,
    on(event, fn) { handlers[event] = fn; return socket; },
    timeout() { return socket; },
    async emitWithAck(_event, data) { return { ok: false, seq: data.seq, error: { code: "superseded", message: "this connection is no longer the world's writer" } }; },
    removeAllListeners() {}, disconnect() { socket.connected = false; return socket; }
  };
  const outbox = new Outbox(memoryStore());
  outbox.enqueue("hook", { hook: "updateCombat" });
  const statuses = [];
  const client = new SidecarClient({
    io: () => socket, url: "http://127.0.0.1:9", auth: { world: "w" }, outbox,
    events: { onWelcome() {}, onAck() {}, onPlan() {}, onPrompt() {}, onStatus: (s) => statuses.push(s) }
  }).connect();
  handlers.welcome({ last_seq: 0 });
  await until(() => client.closed, { what: "the link to close" });
  assert.deepEqual(statuses, ["connected", "superseded"]);
  assert.equal(outbox.size, 1, "the message waits for the resend");
  assert.equal(socket.connected, false);
});
