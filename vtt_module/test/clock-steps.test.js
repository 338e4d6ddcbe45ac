// A wall clock that steps (a fresh machine syncing its time, a GM setting the clock) must not
// end a wait, drop a watch or refill a player's pace: every duration the module and its test
// helpers measure is on the monotonic clock (`performance.now()`). (That clock may pause while
// the machine sleeps: after a wake a step's watch lasts up to a minute more of awake time and a
// player's pace refills from then; both harmless.)
// Found by CI: a settle() of the end-to-end suite "timed out" 384 ms into a test on a fresh
// machine, its Date.now() deadline passed by a clock step.
import { test } from "node:test";
import assert from "node:assert/strict";
import { until } from "./helpers/table.js";
import { Relay, PLAYER_PACE } from "../scripts/relay.js";

const HOUR = 3_600_000;

const realNow = Date.now.bind(Date);

/** The wall clock `ms` away from the real one, for the rest of the test (or the next call). */
function stepWallClock(t, ms) {
  t.mock.restoreAll();
  t.mock.method(Date, "now", () => realNow() + ms);
}

test("until() keeps waiting when the wall clock jumps an hour ahead mid-wait", async (t) => {
  let polls = 0;
  const value = await until(() => {
    polls += 1;
    if (polls === 2) stepWallClock(t, HOUR);
    return polls >= 6 ? "done" : null;
  }, { timeout: 5000, what: "six polls" });
  assert.equal(value, "done");
  assert.equal(polls, 6);
});

test("until() still times out on the monotonic clock", async () => {
  const started = performance.now();
  await assert.rejects(until(() => false, { timeout: 50, what: "nothing" }), /timed out waiting for nothing/);
  assert.ok(performance.now() - started >= 50, "it waited its timeout");
});

test("a player's pace is neither refilled by a clock set forward nor frozen by one set back", async (t) => {
  const users = [{ id: "gm", isGM: true }, { id: "p1", isGM: false }];
  const env = { game: { user: users[0], users: Object.assign(users, { get: (id) => users.find((u) => u.id === id) }) } };
  const relay = new Relay(env, { sidecar: () => null, onPrompt() {} });
  for (let i = 0; i < PLAYER_PACE.burst; i++) assert.equal(relay.paced("p1"), true, `burst message ${i}`);
  assert.equal(relay.paced("p1"), false, "the burst is spent");
  stepWallClock(t, HOUR);
  assert.equal(relay.paced("p1"), false, "an hour on the wall clock is not an hour of pace");
  stepWallClock(t, -HOUR);
  assert.ok(Date.now() < realNow() - HOUR / 2, "the wall clock is an hour behind now");
  relay.buckets.get("p1").at -= 1000; // one real second later
  assert.equal(relay.paced("p1"), true, "a clock set back does not hold the player for an hour");
});
