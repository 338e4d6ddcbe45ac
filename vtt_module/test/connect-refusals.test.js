// Connect refusals the module cannot fix by retrying: the GM is told the code and the
// sidecar's message (escaped, never the token itself), and the module does not hammer the
// sidecar with 1-second retries as it does for one that is only unreachable.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { wireModule } from "../scripts/wire.js";
import { SidecarProcess } from "./helpers/sidecar.js";
import { GM, newWorld, until } from "./helpers/table.js";

let sidecar;
before(async () => { sidecar = await new SidecarProcess().start(); });
after(async () => { await sidecar?.stop(); });

/** The GM's client alone, with any token (the table helper insists on a valid auth). */
function bootGM(world, token) {
  world.worldSettings.set("initiative-sidecar.ruleset", "foundry-core");
  const store = new Map([[`initiative-sidecar.token-${world.id}`, token], [`initiative-sidecar.url-${world.id}`, sidecar.url]]);
  const gm = world.connect(GM, { storage: store });
  const attempts = [];
  const realIo = gm.env.io;
  gm.env.io = (url, opts) => {
    const socket = realIo(url, opts);
    attempts.push(performance.now());
    socket.io.on("reconnect_attempt", () => attempts.push(performance.now()));
    const connect = socket.connect.bind(socket);
    socket.connect = () => { attempts.push(performance.now()); return connect(); };
    return socket;
  };
  gm.module = wireModule(gm.env);
  gm.boot();
  return { gm, attempts };
}

test("invalid_auth is a refusal shown with its code and message, not 'not reachable', and is not retried every second", async () => {
  const token = "x".repeat(600); // a pasted "token" past the schema's 512 characters
  const world = newWorld({ id: "refusal-world" });
  const { gm, attempts } = bootGM(world, token);
  const errors = () => gm.notifications.filter((n) => n.level === "error");
  await until(() => errors().length >= 1, { what: "the refusal shown to the GM" });
  const shown = errors()[0].message;
  assert.match(shown, /invalid_auth/, "the GM sees the code");
  assert.match(shown, /\/token/, "and the sidecar's message, which names the failing path");
  assert.ok(!shown.includes(token.slice(0, 40)), "the token itself is never shown");
  assert.ok(!gm.notifications.some((n) => /not reachable/.test(n.message)), "not reported as unreachable");
  assert.equal(gm.module.state.sidecar.status, "refused");
  const first = attempts.length;
  await new Promise((r) => setTimeout(r, 2500)); // an unreachable sidecar is tried again after 1 s, then 2 s
  assert.equal(attempts.length, first, "no retry within seconds: the token must change first");
  gm.module.state.sidecar.stop();
});

test("a refusal's message is escaped where it becomes the notification's HTML", async () => {
  const world = newWorld({ id: "<b>" + "w".repeat(200) }); // past the 128 characters of an id: invalid_auth at /world, echoed
  const { gm } = bootGM(world, sidecar.token);
  await until(() => gm.notifications.some((n) => n.level === "error"), { what: "the refusal" });
  const shown = gm.notifications.find((n) => n.level === "error").message;
  assert.match(shown, /\/world/);
  assert.match(shown, /&lt;b&gt;/, "the echoed markup is shown as text");
  assert.ok(!/<b>/.test(shown), `no markup from the wire: ${shown}`);
  gm.module.state.sidecar.stop();
});

test("a refusal's message loses the token it quotes, and nothing else", async () => {
  const { withoutToken } = await import("../scripts/link-status.js");
  const token = "s3cr3t-" + "k".repeat(20);
  assert.equal(withoutToken(`/token: '${token}' is too long`, token), "/token: … is too long");
  assert.equal(withoutToken(`/token: 'a\\\\b' is too long`, "a\\b"), "/token: … is too long", "a value Python's repr escaped is dropped too");
  assert.equal(withoutToken("/world: 'ww' is too long", "t"), "/world: 'ww' is too long", "a short token does not cut words");
});
