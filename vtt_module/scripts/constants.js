/**
 * Constants of the Initiative Sidecar module, as frozen tables.
 * @module constants
 */

/** The module id (also the flag scope, the settings namespace and the option marker key). */
export const MODULE_ID = "initiative-sidecar";

/** The module socket Foundry relays between clients (needs `"socket": true` in module.json). */
export const SOCKET_NAME = `module.${MODULE_ID}`;

/** Wire protocol version (issue 2). */
export const PROTOCOL = 1;

/**
 * Foundry hooks that fire on every client after a change and are forwarded by the active GM
 * (registerForwarder registers exactly these). `initiativeRoll` is synthesized by the module
 * (Foundry has no initiative hook) from `updateCombatant`.
 *
 * Not forwarded, on purpose: `combatStart` fires only on the client that starts the combat,
 * before the update, with data a later hook may still change; the `updateCombat` carrying
 * `round: 1` that follows on every client says the same, after the fact.
 * `combatTurnChange` carries nothing the `updateCombat` of the same turn change (its diff, the
 * combat's `current`) lacks; it fires before that hook on every client but the active GM, after
 * it there [F13 `client/data/client-backend.mjs`, `combat.mjs` `_manageTurnEvents`;
 * test/fake-foundry/README.md]: forwarding it would send every turn twice.
 */
export const FORWARDED_HOOKS = Object.freeze([
  "createCombat", "updateCombat", "deleteCombat", "createCombatant", "updateCombatant", "deleteCombatant"
]);

/** Hook/operation options that are plain data and worth forwarding (the rest, notably `parent`, a live Document, is dropped). */
export const OPTION_WHITELIST = Object.freeze(["action", "direction", "worldTime", "turnEvents", "combatTurn", "diff", "recursive", "modifiedTime"]);

/** Ack error codes after which the message is sent again (its seq not used up; `superseded`: not stored, another connection writes the world). */
export const RESEND_CODES = Object.freeze(["out_of_order", "rate_limited", "store_unavailable", "served_elsewhere", "superseded"]);

/** Answers to a request that never reached the sidecar (the module's own): a prompt answered so is shown again when repeated. */
export const UNDELIVERED_CODES = Object.freeze(["no_sidecar", "no_gm", "timeout", "rate_limited", "no_ack", "superseded"]);

/** Connect refusals retrying will not fix until a setting changes (`invalid_auth`: e.g. a pasted "token" past 512 characters; `origin_refused`: not in the sidecar's --origins). */
export const FATAL_CONNECT_CODES = Object.freeze(["auth_failed", "origin_refused", "unknown_ruleset", "protocol_mismatch", "invalid_message", "invalid_auth"]);

/** Messages on the module socket (`module.initiative-sidecar`). */
export const SOCKET_TYPES = Object.freeze({
  INTENT: "intent",       // player → active GM: declare an intent
  ROLL: "roll",           // player → active GM: a reroll the player rolled
  PROMPT: "prompt",       // active GM → users: show a sidecar prompt
  RESULT: "result"        // active GM → player: what the sidecar answered to their intent
});

/** Default stat paths per game system (editable in the settings). */
export const DEFAULT_STAT_PATHS = Object.freeze({
  dnd5e: Object.freeze({ dex: "system.abilities.dex.mod", int: "system.abilities.int.mod", initiative_mod: "system.attributes.init.total", proficient: "system.skills" }),
  other: Object.freeze({
    reaction: "system.attributes.reaction.value", wits: "system.attributes.wits.value", size: "system.traits.size.value",
    pool_modifier: "system.attributes.initiativePool.modifier", initiative_mod: "system.attributes.init.value"
  })
});

/** dnd5e skill keys → the names the sidecar uses in `stats.proficient`. */
export const DND5E_SKILLS = Object.freeze({ ins: "insight", slt: "sleight_of_hand", prc: "perception", dec: "deception" });
