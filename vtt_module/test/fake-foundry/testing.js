// Test helpers of the double: run a test body under each Foundry generation, and a table of
// a GM and two players, each client with its own copy of the world.

import { World } from "./world.js";
import { GENERATIONS } from "./generation.js";

export const GM = "gmUser0000000001";
export const ALICE = "plAlice000000001";
export const BOB = "plBob00000000001";

/**
 * The generations `eachGeneration` runs: `FAKE_FOUNDRY_GENERATIONS` ("13", "14" or "13,14");
 * else the one `FAKE_FOUNDRY_GENERATION` names (so `npm run test:both` runs each once);
 * else both.
 */
export function selectedGenerations() {
  const raw = process.env.FAKE_FOUNDRY_GENERATIONS ?? process.env.FAKE_FOUNDRY_GENERATION;
  if (!raw) return [...GENERATIONS];
  const list = raw.split(",").map((s) => Number(s.trim()));
  for (const g of list) if (!GENERATIONS.includes(g)) throw new Error(`FAKE_FOUNDRY_GENERATION(S): ${g} is not one of ${GENERATIONS}`);
  return list;
}

/**
 * One browser origin's localStorage, where Foundry keeps client-scope settings under
 * `namespace.key` with no world in the key [F13 `client/helpers/client-settings.mjs`: client
 * scope maps to `window.localStorage`, `get` reads `storage.getItem(setting.id)`; research §9].
 * Pass the same one to `world.connect(id, {storage})` of two worlds: two worlds of one Foundry
 * server opened in one browser, which share every client setting.
 * @returns {Map<string, unknown>}
 */
export function browser() { return new Map(); }

/**
 * Register one node:test per generation: `eachGeneration(test, "name", async (generation, t) => …)`
 * (options may come third: `eachGeneration(test, "name", {timeout}, body)`). The test names
 * end in ` [v13]` / ` [v14]`.
 */
export function eachGeneration(test, name, optionsOrBody, maybeBody) {
  const [options, body] = typeof optionsOrBody === "function" ? [{}, optionsOrBody] : [optionsOrBody, maybeBody];
  for (const generation of selectedGenerations()) test(`${name} [v${generation}]`, options, (t) => body(generation, t));
}

/** Actors and tokens with name ties built in: two "Goblin" tokens of one actor, and a party. */
export function cast() {
  const actors = [
    { _id: "actAria000000001", name: "Aria", ownership: { [ALICE]: 3 }, system: { abilities: { dex: { mod: 3, value: 16 } }, attributes: { initiative: { tiebreakPriority: 2 } } } },
    { _id: "actTolm000000001", name: "Brother Tolm", ownership: { [BOB]: 3 }, system: { abilities: { dex: { mod: 1, value: 12 } }, attributes: { initiative: { tiebreakPriority: 2 } } } },
    { _id: "actGob0000000001", name: "Goblin", ownership: {}, system: { abilities: { dex: { mod: 2, value: 14 } }, attributes: { initiative: { tiebreakPriority: 1 } } } },
    { _id: "actBoss000000001", name: "Hidden Boss", ownership: {}, system: { abilities: { dex: { mod: 1, value: 12 } } } }
  ];
  const tokens = [
    { _id: "tokAria000000001", actorId: "actAria000000001", name: "Aria" },
    { _id: "tokTolm000000001", actorId: "actTolm000000001", name: "Brother Tolm" },
    { _id: "tokGobA000000001", actorId: "actGob0000000001", name: "Goblin B" },
    { _id: "tokGobB000000001", actorId: "actGob0000000001", name: "Goblin A" },
    { _id: "tokBoss000000001", actorId: "actBoss000000001", name: "Hidden Boss" }
  ];
  return { actors, tokens };
}

/**
 * A world of a GM and two players (Alice owns Aria, Bob owns Brother Tolm), each connected
 * with its own client (its own copy of every document; changes reach it as diffs).
 * `boot: true` runs each client's Foundry start-up (`client.boot()`).
 * @returns {{world: World, gm: object, alice: object, bob: object, clients: object[]}}
 */
export function makeTable({ generation, system = "dnd5e", sort, rolls, boot = false, ...rest } = {}) {
  const { actors, tokens } = cast();
  const world = new World({
    id: `table-${system}-${generation ?? "default"}`, system, sort, rolls, generation,
    users: [
      { _id: GM, name: "GM", role: World.ROLES.GAMEMASTER },
      { _id: ALICE, name: "Alice", role: World.ROLES.PLAYER },
      { _id: BOB, name: "Bob", role: World.ROLES.PLAYER }
    ],
    actors, tokens, ...rest
  });
  const gm = world.connect(GM), alice = world.connect(ALICE), bob = world.connect(BOB);
  if (boot) for (const c of [gm, alice, bob]) c.boot();
  return { world, gm, alice, bob, clients: [gm, alice, bob] };
}

/** A combat of every token (the boss hidden), created by the GM; initiatives set when given (by token id). */
export async function addCombat(table, initiatives = {}) {
  const { world, gm } = table;
  const combat = await world.createCombat(gm, {});
  await combat.createEmbeddedDocuments("Combatant", [...world.tokens.values()].map((t) => ({ actorId: t.actorId, tokenId: t._id, hidden: t.name === "Hidden Boss" })));
  const updates = combat.combatants.filter((c) => c.tokenId in initiatives).map((c) => ({ _id: c.id, initiative: initiatives[c.tokenId] }));
  if (updates.length) await combat.updateEmbeddedDocuments("Combatant", updates);
  return combat;
}
