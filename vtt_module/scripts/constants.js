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

/** Rulesets the sidecar knows, in the order the setting lists them. */
export const RULESETS = Object.freeze(["foundry-core", "balanced-d20", "dice-pool", "storyteller"]);

/** Plan `acts` values whose turns the module skips when the pointer moves forward. */
export const SKIPPED_ACTS = Object.freeze(["none", "defend_only", "held"]);

/** Every `acts` value of a plan entry. */
export const ACTS = Object.freeze(["full", "movement_or_action", "movement_only", "defend_only", "none", "held"]);

/**
 * Foundry hooks that fire on every client after a change and are forwarded by the active GM.
 * `initiativeRoll` is synthesized by the module (Foundry has no initiative hook).
 */
export const FORWARDED_HOOKS = Object.freeze([
  "createCombat", "updateCombat", "deleteCombat",
  "createCombatant", "updateCombatant", "deleteCombatant",
  "combatTurnChange"
]);

/**
 * Hook/operation options that are plain data and worth forwarding. Everything else (notably
 * `parent`, a live Document) is dropped.
 */
export const OPTION_WHITELIST = Object.freeze([
  "action", "direction", "worldTime", "turnEvents", "combatTurn", "diff", "recursive", "modifiedTime"
]);

/**
 * Intent kinds each ruleset accepts from players (what the tracker menu and token HUD offer).
 * `reaction.use` is offered only where the plan gives reactions (entry.reaction not null).
 */
export const RULESET_ACTIONS = Object.freeze({
  "foundry-core": Object.freeze([]),
  "balanced-d20": Object.freeze(["dash", "reaction.use", "ready.start", "readied.declare", "readied.trigger"]),
  "dice-pool": Object.freeze(["hold", "act"]),
  "storyteller": Object.freeze(["hold", "act"])
});

/** Ack error codes after which the message must be sent again (its seq was not used up). */
export const RESEND_CODES = Object.freeze(["out_of_order", "rate_limited", "store_unavailable"]);

/** Connect refusals that retrying will not fix until a setting changes. */
export const FATAL_CONNECT_CODES = Object.freeze(["auth_failed", "unknown_ruleset", "protocol_mismatch"]);

/** Messages on the module socket (`module.initiative-sidecar`). */
export const SOCKET_TYPES = Object.freeze({
  INTENT: "intent",       // player → active GM: declare an intent
  ROLL: "roll",           // player → active GM: a reroll the player rolled
  PROMPT: "prompt",       // active GM → users: show a sidecar prompt
  RESULT: "result"        // active GM → player: what the sidecar answered to their intent
});

/** Default stat paths per game system (editable in the settings). */
export const DEFAULT_STAT_PATHS = Object.freeze({
  dnd5e: Object.freeze({
    dex: "system.abilities.dex.mod",
    int: "system.abilities.int.mod",
    initiative_mod: "system.attributes.init.total",
    proficient: "system.skills"
  }),
  other: Object.freeze({
    reaction: "system.attributes.reaction.value",
    wits: "system.attributes.wits.value",
    size: "system.traits.size.value",
    pool_modifier: "system.attributes.initiativePool.modifier",
    initiative_mod: "system.attributes.init.value"
  })
});

/** dnd5e skill keys → the names the sidecar uses in `stats.proficient`. */
export const DND5E_SKILLS = Object.freeze({
  ins: "insight", slt: "sleight_of_hand", prc: "perception", dec: "deception"
});
