// The relay on the GM's client: what it vouches for when it forwards a player's declaration.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Relay, PLAYER_PACE } from "../scripts/relay.js";

/** A GM client's env with players p1 and p2 (both owning actor a1) and a GM. */
function gmClient() {
  const users = [{ id: "gm", isGM: true }, { id: "p1", isGM: false }, { id: "p2", isGM: false }, { id: "p3", isGM: false }];
  const actor = { id: "a1", testUserPermission: (u) => u.id === "p1" || u.id === "p2" };
  return {
    game: {
      user: users[0],
      users: Object.assign(users, { get: (id) => users.find((u) => u.id === id), activeGM: users[0] }),
      actors: { get: (id) => (id === "a1" ? actor : null) },
      combats: { get: () => null },
      socket: { on() {}, emit() {} },
    },
  };
}

function relayTo(sidecar) {
  return new Relay(gmClient(), { sidecar: () => sidecar, onPrompt() {} });
}

const readyStart = (owners) => ({
  type: "intent",
  intent: { kind: "ready.start", args: { actor_id: "a1", owners, watching: [], sees: true, weapon_ready: true } },
});

test("a Ready to strike's owners are Foundry's, whatever list the player's client sent", async () => {
  const sent = [];
  const relay = relayTo({ status: "connected", intent: async (i) => { sent.push(i); return { ok: true, seq: 1 }; } });
  await relay.handle(readyStart(["p1", "p3-not-an-owner"]), "p1");
  assert.equal(sent.length, 1);
  assert.deepEqual([...sent[0].args.owners].sort(), ["p1", "p2"]);
  assert.equal(sent[0].user, "p1");
});

test("a declaration while the sidecar is away is refused at once, not queued to apply later", async () => {
  const sent = [];
  const relay = relayTo({ status: "unreachable", intent: async (i) => { sent.push(i); return new Promise(() => {}); } });
  const answer = await relay.handle(readyStart(["p1", "p2"]), "p1");
  assert.equal(answer.ok, false);
  assert.equal(answer.error.code, "no_sidecar");
  assert.equal(sent.length, 0);
});

test("one player's flood is paced on the GM's client; other players and the GM are not held back", async () => {
  const sent = [];
  const emitted = [];
  const env = gmClient();
  env.game.user.isActiveGM = true;
  env.game.socket.emit = (_name, data) => emitted.push(data);
  const relay = new Relay(env, { sidecar: () => ({ status: "connected", serving: true, intent: async (i) => { sent.push(i.user); return { ok: true, seq: sent.length }; } }), onPrompt() {} });
  let clock = 1_000_000;
  relay.now = () => clock;
  const declare = (user, ref) => relay.receive({ type: "intent", ref, intent: { kind: "reroll.decide", args: {} } }, user);
  for (let i = 0; i < 15; i++) await declare("p1", `p1.${i}`);
  const refused = emitted.filter((d) => d.result.ok === false);
  assert.equal(sent.filter((u) => u === "p1").length, PLAYER_PACE.burst, "a burst goes through");
  assert.equal(refused.length, 15 - PLAYER_PACE.burst);
  assert.ok(refused.every((d) => d.result.error.code === "rate_limited" && d.to[0] === "p1"), "the sender is told why");
  await declare("p2", "p2.0");
  await declare("gm", "gm.0");
  assert.deepEqual(sent.slice(-2), ["p2", "gm"], "another player and the GM go through");
  clock += 1000; // one second later: perSecond more
  for (let i = 0; i < 5; i++) await declare("p1", `p1.late.${i}`);
  assert.equal(sent.filter((u) => u === "p1").length, PLAYER_PACE.burst + PLAYER_PACE.perSecond);
});
