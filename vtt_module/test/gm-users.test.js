// The sidecar's list of GMs (who may set initiatives and approve) follows users created and
// deleted mid-session, not only role changes: the active GM's client connects again with
// the new `gm_users`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { World } from "./fake-foundry/index.js";
import { bootTable, newWorld, until, GM } from "./helpers/table.js";

test("an assistant GM created mid-session is in the GM list the sidecar gets next", async () => {
  const world = newWorld();
  const table = bootTable(world, { token: "t0ken" });
  await until(() => table.auths.length >= 1, { what: "the first connection" });
  const assistant = world.createUser({ name: "Assistant", role: World.ROLES.ASSISTANT });
  await until(() => table.auths.length >= 2, { what: "a reconnection with the new GMs" });
  assert.deepEqual([...table.auths.at(-1).gm_users].sort(), [GM, assistant._id].sort());
  assert.ok(table.clients[GM].module.state.sidecar, "the GM's client still holds the connection");
});

test("a deleted GM user leaves the GM list; creating or deleting a player changes nothing", async () => {
  const world = newWorld();
  const table = bootTable(world, { token: "t0ken" });
  await until(() => table.auths.length >= 1, { what: "the first connection" });
  const player = world.createUser({ name: "Newcomer", role: World.ROLES.PLAYER });
  world.deleteUser(player._id);
  await world.tick();
  assert.equal(table.auths.length, 1, "a player's coming and going does not reconnect");
  const assistant = world.createUser({ name: "Assistant", role: World.ROLES.ASSISTANT });
  await until(() => table.auths.length >= 2, { what: "a reconnection with the assistant" });
  world.deleteUser(assistant._id);
  await until(() => table.auths.length >= 3, { what: "a reconnection without the assistant" });
  assert.deepEqual(table.auths.at(-1).gm_users, [GM]);
});
