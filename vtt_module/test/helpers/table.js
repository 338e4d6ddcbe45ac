// A table: a fake Foundry world with a GM and players, the module wired on every client.
import { World } from "../fake-foundry/index.js";
import { wireModule } from "../../scripts/wire.js";
import { assertValid } from "./schemas.js";

// Quiet the module's info lines in test output (warnings and errors still show).
console.info = () => {};
console.debug = () => {};

export const GM = "gmUser0000000001";
export const ALICE = "plAlice000000001";
export const BOB = "plBob00000000001";

/**
 * Boot the module on each client of a world. Settings are set before `ready`.
 * @returns {{world, clients: Record<string, object>, sent: object[], auths: object[]}}
 */
export function bootTable(world, { url = "http://127.0.0.1:9", token = "", ruleset = "foundry-core", users = [GM, ALICE, BOB], storage = {} } = {}) {
  world.sidecarUrl = url; // each GM browser's own setting (bootClient)
  world.worldSettings.set("initiative-sidecar.ruleset", ruleset);
  const sent = [];
  const auths = [];
  const clients = {};
  for (const id of users) clients[id] = bootClient(world, id, { token, storage: storage[id], sent, auths });
  return { world, clients, sent, auths };
}

/** Boot one client (a reload reuses its storage). */
export function bootClient(world, id, { token = "", url = world.sidecarUrl, storage, sent = [], auths = [] } = {}) {
  const store = storage ?? new Map();
  if (token && world.isGM(id)) store.set(`initiative-sidecar.token-${world.id}`, token);
  if (url && world.isGM(id)) store.set(`initiative-sidecar.url-${world.id}`, url);
  const client = world.connect(id, { storage: store });
  const realIo = client.env.io;
  client.env.io = (u, opts) => {
    assertValid("auth", opts.auth);
    // hosted mode: nginx routes by the world in the handshake's query; the token stays in auth
    if (opts.query?.world !== opts.auth.world || Object.keys(opts.query).length !== 1) {
      throw new Error(`the handshake query must be {world} only, got ${JSON.stringify(opts.query)}`);
    }
    auths.push(structuredClone(opts.auth));
    const socket = realIo(u, opts);
    const emitWithAck = socket.emitWithAck.bind(socket);
    socket.emitWithAck = (event, data) => {
      assertValid(event, data);
      sent.push({ event, data: structuredClone(data), user: id });
      return emitWithAck(event, data);
    };
    client.socket = socket;
    return socket;
  };
  client.module = wireModule(client.env);
  // Foundry's start-up: init, setup, the tracker's first render (its menu built then), ready
  if (client.boot) client.boot();
  else for (const hook of ["init", "setup", "ready"]) client.Hooks.callAll(hook);
  client.api = client.module.state.api;
  return client;
}

/** Actors and tokens for a party of two players and two NPCs. */
export function party(extra = {}) {
  const actors = [
    { _id: "actAria000000001", name: "Aria", ownership: { [ALICE]: 3 }, system: { abilities: { dex: { mod: 3 }, int: { mod: 4 } }, skills: { ins: { proficient: 1 }, slt: { proficient: 0 } }, attributes: { reaction: { value: 3 }, wits: { value: 2 }, init: { value: 3 } }, traits: { size: { value: 0 } }, ...extra.aria } },
    { _id: "actTolm000000001", name: "Brother Tolm", ownership: { [BOB]: 3 }, system: { abilities: { dex: { mod: 1 }, int: { mod: 0 } }, skills: {}, attributes: { reaction: { value: 2 }, wits: { value: 3 }, init: { value: 1 } }, traits: { size: { value: 0 } }, ...extra.tolm } },
    { _id: "actGob0000000001", name: "Goblin", ownership: {}, system: { abilities: { dex: { mod: 2 }, int: { mod: -1 } }, skills: {}, attributes: { reaction: { value: 2 }, wits: { value: 1 }, init: { value: 2 } }, traits: { size: { value: 1 } } } },
    { _id: "actBoss000000001", name: "Hidden Boss", ownership: {}, system: { abilities: { dex: { mod: 1 }, int: { mod: 2 } }, skills: {}, attributes: { reaction: { value: 3 }, wits: { value: 3 }, init: { value: 2 } }, traits: { size: { value: 0 } } } }
  ];
  const tokens = actors.map((a, i) => ({ _id: `tok${a._id.slice(3, 7)}00000000${i}`, actorId: a._id, name: a.name }));
  return { actors, tokens };
}

export function newWorld(opts = {}) {
  const { actors, tokens } = party(opts.extra);
  return new World({
    users: [
      { _id: GM, name: "GM", role: World.ROLES.GAMEMASTER },
      { _id: ALICE, name: "Alice", role: World.ROLES.PLAYER },
      { _id: BOB, name: "Bob", role: World.ROLES.PLAYER }
    ],
    actors, tokens, ...opts
  });
}

/**
 * Wait until `check()` is truthy (polling the event loop). The deadline is on the monotonic
 * clock: a wall clock that steps (a fresh CI machine syncing its time) must not end the wait.
 */
export async function until(check, { timeout = 8000, what = "condition" } = {}) {
  const deadline = performance.now() + timeout;
  while (performance.now() < deadline) {
    const v = await check();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}
