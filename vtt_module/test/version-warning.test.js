// The sidecar's connect warnings reach the GM: a module of another version than the real
// sidecar's is welcomed with `version_mismatch`, shown once as a notification in the GM's
// language; a matching module gets none.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { newWorld, bootTable, GM, until } from "./helpers/table.js";
import { SidecarProcess } from "./helpers/sidecar.js";

let sidecar;
before(async () => { sidecar = await new SidecarProcess().start(); });
after(async () => { await sidecar?.stop(); });

async function connectAs(version, id) {
  const world = newWorld({ id });
  const table = bootTable(world, { url: sidecar.url, token: sidecar.token });
  const gm = table.clients[GM];
  await until(() => gm.module.state.sidecar?.status === "connected", { what: "the GM to connect" });
  gm.game.modules.get("initiative-sidecar").version = version;
  gm.notifications.length = 0;
  gm.module.state.sidecar.restart();
  await until(() => gm.module.state.sidecar?.status === "connected", { what: "the GM to reconnect" });
  await new Promise((r) => setTimeout(r, 200));
  gm.module.state.sidecar.stop();
  return gm.notifications.filter((n) => n.level === "warn");
}

test("a module of another version is told so at connect, in the GM's language", async () => {
  const warnings = await connectAs("0.0.9", "version-world-old");
  assert.equal(warnings.length, 1);
  assert.match(warnings[0].message, /this module is version 0\.0\.9, the sidecar \d+\.\d+\.\d+/);
  assert.match(warnings[0].message, /\/module\/module\.json/);
});

test("a module of the sidecar's own version gets no warning", async () => {
  const own = JSON.parse(await (await fetch(`${sidecar.url}/module/module.json`)).text()).version;
  assert.deepEqual(await connectAs(own, "version-world-same"), []);
});
