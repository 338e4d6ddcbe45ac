// The same GM with Foundry open in two pages (two tabs, or two browsers): the page opened
// last takes the connection over and the first one gets `superseded`. No arbitration between
// pages: the first page stops, tells its GM once, offers "Take over", and never comes back by
// itself. Only the page holding the connection answers players. A message refused
// `superseded` was not stored: it stays in the outbox.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Outbox } from "../scripts/outbox.js";
import { SidecarProcess } from "./helpers/sidecar.js";
import { GM, ALICE, newWorld, bootTable, bootClient, until } from "./helpers/table.js";

let sidecar;
before(async () => { sidecar = await new SidecarProcess().start(); });
after(async () => { await sidecar?.stop(); });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const status = (client) => client.module.state.sidecar?.status;

test("an ack refused superseded is not settled: the message stays for the resend", () => {
  const outbox = new Outbox();
  const m = outbox.enqueue("hook", { hook: "updateCombat" });
  assert.equal(outbox.settle(m.data.seq, { ok: false, seq: m.data.seq, error: { code: "superseded", message: "another connection took over this world" } }), "resend");
  assert.equal(outbox.size, 1, "kept");
  assert.equal(outbox.state.acked, 0, "acked does not pass a seq the sidecar did not store");
});

test("a page another page of its GM took over stops, says so once, offers Take over, and comes back only when asked", async () => {
  const world = newWorld({ id: "two-tabs-world" });
  const table = bootTable(world, { url: sidecar.url, token: sidecar.token, users: [GM, ALICE] });
  const first = table.clients[GM];
  await until(() => status(first) === "connected", { what: "the first page to connect" });
  // the GM opens a second page (its own browser storage, the same token)
  const second = bootClient(world, GM, { token: sidecar.token, sent: table.sent, auths: table.auths });
  await until(() => status(second) === "connected" && status(first) === "superseded", { what: "the second page to take over" });
  await until(() => first.dialogs.length === 1, { what: "the offer" });
  assert.equal(first.notifications.filter((n) => /took over/.test(n.message)).length, 1, "the first page's GM is told once");
  assert.deepEqual([...first.dialogs[0].element.querySelectorAll("footer button")].map((b) => b.textContent), ["Take over", "Not now"]);
  // dismissed: it stays stopped; nobody takes the connection from anybody
  await sleep(1000);
  assert.equal(table.auths.length, 2, "no page connected again by itself");
  // a combat made meanwhile is the holder's to send: sent once, by the second page's link
  const combat = await world.createCombat(first, {});
  await until(() => table.sent.some((m) => m.data.combat?._id === combat.id), { what: "the combat sent" });
  await sleep(300);
  assert.equal(table.sent.filter((m) => m.data.hook === "createCombat" && m.data.combat._id === combat.id).length, 1, "sent once");
  assert.equal(first.module.state.sidecar.outbox.size, 0, "the stopped page queues nothing");
  // the GM takes over on the first page: it connects, the second page stops and offers the same
  second.respond = () => null;
  first.api.takeOver();
  await until(() => status(first) === "connected" && status(second) === "superseded", { what: "the first page to take over" });
  assert.equal(table.auths.length, 3);
  await until(() => second.dialogs.length === 1, { what: "the second page's offer" });
  await combat.createEmbeddedDocuments("Combatant", [{ actorId: "actAria000000001", tokenId: [...world.tokens.values()][0]._id }]);
  await until(() => table.sent.some((m) => m.data.hook === "createCombatant" && m.data.combat._id === combat.id), { what: "the new combatant sent" });
  await sleep(300);
  assert.equal(table.sent.filter((m) => m.data.hook === "createCombatant").length, 1, "by the holder only");
  first.module.state.sidecar.stop();
  second.module.state.sidecar.stop();
});

test("two pages of the GM, one without the token: only the page holding the connection answers a player", async () => {
  const world = newWorld({ id: "tokenless-page-world" });
  const table = bootTable(world, { url: sidecar.url, token: sidecar.token, ruleset: "balanced-d20", users: [GM, ALICE] });
  const first = table.clients[GM];
  await until(() => status(first) === "connected", { what: "the first page to connect" });
  // the GM on another machine's browser, where the token was never pasted
  const other = bootClient(world, GM, { sent: table.sent, auths: table.auths });
  const alice = table.clients[ALICE];
  const token = [...world.tokens.values()].find((t) => t.name === "Aria");
  for (let i = 0; i < 3; i++) {
    const r = await alice.api.readyStart({ id: token._id, actor: alice.game.actors.get(token.actorId) }, { watching: [], sees: true, weapon_ready: true });
    assert.notEqual(r.error?.code, "no_sidecar", `answered by the page without the token: ${JSON.stringify(r)}`);
  }
  await sleep(200);
  assert.equal(alice.received.filter((m) => m.data?.type === "result").length, 3, "one answer per declaration");
  assert.ok(table.sent.some((m) => m.data.kind === "ready.start" && m.data.user === ALICE), "the declaration reached the sidecar");
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
  const outbox = new Outbox();
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
