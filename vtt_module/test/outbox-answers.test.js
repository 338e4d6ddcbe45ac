// Every request queued in the outbox gets its answer: the ack of the message however the
// welcome renumbered it, or `superseded` when the outbox let it go unanswered (a take-over, a
// sidecar that lost its history, an overflow). A promise that never settles hangs a player's
// request and its prompt.
import { test } from "node:test";
import assert from "node:assert/strict";
import { GM, bootTable, newWorld } from "./helpers/table.js";

/** The GM's Sidecar of a table without a token (it never connects: the test plays the link). */
function gmSidecar(id) {
  const table = bootTable(newWorld({ id }), { users: [GM] });
  return table.clients[GM].module.state.sidecar;
}

/** An intent's promise, and what it settled with so far (microtasks run). */
function request(sidecar) {
  const seen = { ack: undefined };
  sidecar.intent({ user: GM, kind: "initiative.set", combat_id: "cmb0000000000001", combatant_id: "cbt0000000000001", args: { value: 3 } }).then((a) => { seen.ack = a; });
  return seen;
}

const welcome = (lastSeq) => ({ last_seq: lastSeq, ruleset: "foundry-core", intents: [], skipped_acts: [], combats: [] });

test("a request queued before the first welcome gets its ack after the welcome renumbers it", async () => {
  const sidecar = gmSidecar("renumbered-ack-world");
  const seen = request(sidecar);
  sidecar.welcome(welcome(40));
  const message = sidecar.outbox.peek();
  assert.equal(message.data.seq, 41, "numbered on from the sidecar's last_seq");
  sidecar.ack(message, { ok: true, seq: 41 });
  await null;
  assert.deepEqual(seen.ack, { ok: true, seq: 41 });
});

test("a take-over, and a sidecar that lost its history, settle the requests the outbox lets go as superseded", async () => {
  const sidecar = gmSidecar("dropped-ack-world");
  const first = request(sidecar);
  sidecar.status = "superseded";
  sidecar.takeOver();
  await null;
  assert.equal(first.ack?.error?.code, "superseded", "the other page sent or will resend the state");
  sidecar.status = "idle"; // without a token the page does not connect: play the link by hand
  const second = request(sidecar);
  sidecar.outbox.settle(sidecar.outbox.peek().data.seq, { ok: true });
  const third = request(sidecar);
  sidecar.welcome(welcome(0)); // a new database: acked 1, last_seq 0
  await null;
  assert.equal(third.ack?.error?.code, "superseded");
  assert.equal(second.ack, undefined, "an ack the client took itself is left to it");
});
