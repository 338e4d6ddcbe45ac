// A user's role changes while the sidecar is connected: the sidecar's list of GMs (who may
// approve) follows, and a demoted active GM hands the connection over.
import { test } from "node:test";
import assert from "node:assert/strict";
import { World } from "./fake-foundry/index.js";
import { bootTable, newWorld, until, GM, ALICE } from "./helpers/table.js";

test("a player promoted to assistant GM is in the GM list the sidecar gets next", async () => {
  const world = newWorld();
  const table = bootTable(world, { token: "t0ken" });
  await until(() => table.auths.length >= 1, { what: "the first connection" });
  assert.deepEqual(table.auths[0].gm_users, [GM]);
  world.setRole(ALICE, World.ROLES.ASSISTANT);
  await until(() => table.auths.length >= 2, { what: "a reconnection with the new GMs" });
  assert.deepEqual([...table.auths.at(-1).gm_users].sort(), [ALICE, GM].sort());
  assert.ok(table.clients[GM].module.state.sidecar, "the GM's client still holds the connection");
  assert.equal(table.clients[ALICE].module.state.sidecar, null, "the highest role stays the active GM");
});

test("a change that is not a role leaves the connection alone", async () => {
  const world = newWorld();
  const table = bootTable(world, { token: "t0ken" });
  await until(() => table.auths.length >= 1, { what: "the first connection" });
  for (const c of world.clients) c.Hooks.callAll("updateUser", c.game.users.get(ALICE), { name: "Alicia", _id: ALICE }, { action: "update" }, GM);
  await world.tick();
  assert.equal(table.auths.length, 1);
});

test("a demoted GM's client lets the connection go", async () => {
  const world = newWorld();
  const table = bootTable(world, { token: "t0ken" });
  await until(() => table.auths.length >= 1, { what: "the first connection" });
  world.setRole(ALICE, World.ROLES.GAMEMASTER);
  world.setRole(GM, World.ROLES.PLAYER, { by: ALICE });
  assert.equal(table.clients[GM].module.state.sidecar, null, "no longer the active GM");
  assert.ok(table.clients[ALICE].module.state.sidecar, "the new active GM's client takes over (it connects once its own token is set)");
});

test("an assistant GM who changes the Sidecar URL sends the GM's token nowhere: the URL is each GM browser's own", async () => {
  const world = newWorld();
  world.setRole(ALICE, World.ROLES.ASSISTANT);
  const table = bootTable(world, { token: "t0ken" });
  await until(() => table.auths.length >= 1, { what: "the first connection" });
  const theirs = table.clients[ALICE].game.settings;
  for (const key of ["url", `url-${world.id}`]) await theirs.set("initiative-sidecar", key, "http://collector.example:80").catch(() => null);
  await world.tick();
  assert.equal(table.auths.length, 1, "no connection carrying the token to another address");
  assert.equal(table.clients[GM].game.settings.get("initiative-sidecar", `url-${world.id}`), "http://127.0.0.1:9");
});
