/**
 * Pure builders of what the module sends to the sidecar (wire protocol v1, issue 2).
 * Nothing here touches a Foundry global: callers pass plain data in.
 * @module payloads
 */

import { MODULE_ID, OPTION_WHITELIST, PROTOCOL, DND5E_SKILLS } from "./constants.js";

/** A JSON-safe deep copy (drops functions, undefined and class instances' methods). @template T @param {T} value @returns {T} */
export function plain(value) {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

/** Read a dotted path from an object (`"system.abilities.dex.mod"`). @param {object} obj @param {string} path */
export function readPath(obj, path) {
  return !obj || !path ? undefined : path.split(".").reduce((o, k) => (o == null ? undefined : o[k]), obj);
}

/**
 * The ruleset's inputs read from an actor's data (`{system: …}`) by the stat paths (name → dotted
 * path): numbers only; `proficient` lists proficient skills (dnd5e: `system.skills.<key>.proficient >= 1`).
 */
export function readStats(actorData, paths) {
  const stats = {};
  if (!actorData) return stats;
  for (const [name, path] of Object.entries(paths ?? {})) {
    const value = readPath(actorData, path);
    if (name === "proficient") {
      if (value && typeof value === "object") {
        stats.proficient = Object.entries(DND5E_SKILLS)
          .filter(([key]) => Number(value[key]?.proficient ?? value[key]?.value ?? 0) >= 1)
          .map(([, skill]) => skill);
      } else if (Array.isArray(value)) stats.proficient = value.map(String);
      continue;
    }
    const n = typeof value === "object" && value !== null ? Number(value.value ?? value.total) : Number(value);
    if (value !== undefined && value !== null && Number.isFinite(n)) stats[name] = n;
  }
  return stats;
}

/** Keep only whitelisted, JSON-safe hook options (Foundry passes live Documents in `parent`). @param {object|undefined} options */
export function whitelistOptions(options) {
  const out = {};
  if (!options || typeof options !== "object") return out;
  for (const key of OPTION_WHITELIST) {
    const v = options[key];
    if (v === undefined || typeof v === "function") continue;
    try { out[key] = plain(v); } catch { /* not JSON: leave out */ }
  }
  return out;
}

/** `Combat#toObject()` with each combatant extended by the fields the sidecar reads (`extras` by combatant id). */
export function combatSnapshot(source, extras) {
  const combat = plain(source);
  combat.combatants = (combat.combatants ?? []).map((c) => {
    const x = extras[c._id] ?? {};
    return { ...c, name: x.name ?? c.name ?? "?", owners: x.owners ?? [], is_npc: x.is_npc ?? true, is_defeated: x.is_defeated ?? Boolean(c.defeated), stats: x.stats ?? {} };
  });
  return combat;
}

/** A `hook` payload without its `seq` (the outbox numbers it). @param {{user:string, world_time:number, hook:string, combat:object, current:object, changed?:object, options?:object, roll?:object}} p */
export function hookPayload({ user, world_time, hook, combat, current, changed, options, roll }) {
  const data = { user, world_time: Number(world_time) || 0, hook, combat, current };
  if (changed !== undefined) data.changed = plain(changed);
  if (options !== undefined) data.options = whitelistOptions(options);
  if (roll !== undefined) data.roll = roll;
  return data;
}

/**
 * The `roll` field of an `initiativeRoll` hook: for the combatant, or, with `groupId`, for its
 * CombatantGroup ({@link rollingGroup}). @param {string} combatantId @param {object} rollJSON
 * @param {string} [rerollOf] @param {string|null} [groupId]
 */
export function initiativeRollField(combatantId, rollJSON, rerollOf, groupId = null) {
  const out = groupId ? { group_id: groupId, roll: plain(rollJSON) } : { combatant_id: combatantId, roll: plain(rollJSON) };
  if (rerollOf) out.reroll_of = rerollOf;
  return out;
}

/**
 * The CombatantGroup whose roll a member's roll is (v13 `Combatant#group`, research §2), when the
 * plan says the combatant rolls with it (`detail.group`: dice-pool DP-6, one roll with the slowest
 * member's pool); else null, the roll is the combatant's own. @param {object} combatant
 */
export function rollingGroup(combatant) {
  const group = combatant?.group;
  const id = typeof group === "string" ? group : group?.id ?? null;
  return id && combatant.flags?.[MODULE_ID]?.state?.detail?.group === id ? id : null;
}

/** An `intent` payload without its `seq`. @param {{user:string, world_time:number, kind:string, combat_id?:string|null, combatant_id?:string|null, args?:object}} p */
export function intentPayload({ user, world_time, kind, combat_id, combatant_id, args }) {
  const data = { user, world_time: Number(world_time) || 0, kind };
  if (combat_id) data.combat_id = combat_id;
  if (combatant_id) data.combatant_id = combatant_id;
  data.args = plain(args ?? {});
  return data;
}

/** The socket.io connect `auth`. @param {{token:string, world:string, ruleset:string, settings:object, gm_users:string[], module_version:string, foundry_version:string, system:string}} p */
export function connectAuth({ token, world, ruleset, settings, gm_users, module_version, foundry_version, system }) {
  return {
    token, world, ruleset, settings: plain(settings ?? {}), gm_users: [...gm_users], protocol: PROTOCOL,
    module_version: String(module_version), foundry_version: String(foundry_version), system: String(system)
  };
}
