/**
 * Glue that reads Foundry objects into the plain data the pure helpers take.
 * Every function receives `env` (Foundry's globals: `game`, `CONFIG`, `foundry`, ...).
 * @module foundry-data
 */

import { MODULE_ID } from "./constants.js";
import { combatSnapshot, readStats } from "./payloads.js";
import { rulesetStatPaths } from "./settings.js";

/** Is this client the active GM (the only one that talks to the sidecar)? [F13 `User#isActiveGM`] @param {object} env */
export function isActiveGM(env) {
  return Boolean(env.game.user?.isActiveGM);
}

/** Ids of users with GM rights. @param {object} env @returns {string[]} */
export function gmIds(env) {
  return env.game.users.filter((u) => u.isGM).map((u) => u.id);
}

/** The world clock in seconds. @param {object} env */
export function worldTime(env) { return Number(env.game.time?.worldTime ?? 0); }

/** Non-GM users owning an actor (the ones a prompt about it goes to). @param {object} env @param {object|null} actor @returns {string[]} */
export function ownersOf(env, actor) {
  return actor ? env.game.users.filter((u) => !u.isGM && (actor.testUserPermission?.(u, "OWNER") ?? false)).map((u) => u.id) : [];
}

/**
 * `combat.toObject()` with each combatant's name, owners, NPC status, `isDefeated` (field or actor status, §2) and
 * stats; the tracker's Skip Defeated (`combat.settings.skipDefeated`, §2); Foundry's own order (`turn_order`: ids of
 * `combat.turns`, the system's sort, §3; sent after the refresh, §9). @param {object} env @param {object} combat
 */
export function snapshotOf(env, combat) {
  const paths = rulesetStatPaths(env);
  const extras = {};
  for (const c of combat.combatants) {
    extras[c.id] = { name: c.name ?? c.token?.name ?? c.actor?.name ?? null, owners: ownersOf(env, c.actor), is_npc: Boolean(c.isNPC), is_defeated: Boolean(c.isDefeated), stats: readStats(c.actor, paths) };
  }
  return { ...combatSnapshot(combat.toObject(), extras), skip_defeated: Boolean(combat.settings?.skipDefeated), turn_order: (combat.turns ?? []).map((c) => c.id) };
}

/** Foundry's `combat.current` (`CombatHistoryData`, research §1.1), each field null when unset. @param {object} combat */
export function currentOfCombat(combat) {
  const { round, turn, combatantId, tokenId } = combat.current ?? {};
  return { round: round ?? null, turn: turn ?? null, combatantId: combatantId ?? null, tokenId: tokenId ?? null };
}

/** The plan state of each combatant, from its flags (every client has them). @param {object} combat @returns {Record<string, object>} */
export function statesOf(combat) {
  return Object.fromEntries([...(combat?.combatants ?? [])].filter((c) => c.flags?.[MODULE_ID]?.state).map((c) => [c.id, c.flags[MODULE_ID].state]));
}
