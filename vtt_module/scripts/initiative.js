/**
 * Initiative rolls. Foundry has no initiative hook, so on every client the module wraps
 * `Combatant#getInitiativeRoll` to remember the Roll it hands out, and in
 * `preUpdateCombatant` (the roller's own client) marks the initiative change with that roll:
 * `flags.initiative-sidecar.roll = {json, reroll_of, nonce, total}`. The nonce is new for every
 * roll: Foundry sends only the diff of an update, so a mark carrying only the roll would vanish
 * from the update when a reroll gives the same roll [F13 `client/data/client-backend.mjs`].
 * The GM's forwarder then sends `initiativeRoll`; an initiative change without a new nonce is
 * a manual edit (`initiative.set`).
 *
 * pf2e never calls `getInitiativeRoll`: `EncounterPF2e#rollInitiative` rolls each actor's
 * initiative check, whose chat card (flags `pf2e.context.type === "initiative"`) is created and
 * awaited BEFORE `setMultipleInitiatives` writes the initiatives [GitHub foundryvtt/pf2e
 * `src/module/encounter/document.ts`, `src/module/actor/initiative.ts`,
 * `src/module/system/check/check.ts`; pf2e 7.x on Foundry 13 and 8.x on Foundry 14 alike]. So
 * on the roller's client `preCreateChatMessage` (initiating client only [research §1.2])
 * remembers that card's roll for the speaker's combatants, and the same `preUpdateCombatant`
 * marks it. A pf2e reroll card (`context.isReroll`) is not remembered: pf2e writes a reroll's
 * initiative before its card [check.ts `rerollFromMessage`].
 *
 * Dice: when the sidecar's plan gives a combatant a `formula` (the dice-pool ruleset's pool),
 * the module builds that Roll itself: a system's own initiative roll may ignore the formula it
 * is passed (dnd5e's `Combatant5e.getInitiativeRoll` builds its roll from the actor).
 * @module initiative
 */

import { MODULE_ID } from "./constants.js";
import { setProperty } from "./foundry-data.js";
import { gmOnlyMessage } from "./compat.js";
import { escapeHTML } from "./html.js";
import * as log from "./log.js";

/** A fresh mark id. @param {object} env */
function nonce(env) {
  return env.foundry?.utils?.randomID?.(16) ?? `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;
}

/**
 * Wrap `getInitiativeRoll` on the Combatant class in use (call at `setup`, after the system
 * set `CONFIG.Combatant.documentClass`).
 * @param {object} env @returns {Map<string, object>} combatant id → the last Roll handed out
 */
export function wrapInitiativeRoll(env) {
  const pending = new Map();
  const proto = env.CONFIG.Combatant.documentClass.prototype;
  const original = proto.getInitiativeRoll;
  if (typeof original !== "function" || original.__initiativeSidecar) return pending;
  const wrapped = function getInitiativeRoll(formula) {
    const wanted = this.flags?.[MODULE_ID]?.state?.formula;
    const roll = wanted ? new env.Roll(wanted, this.actor?.getRollData?.() ?? {}) : original.call(this, formula);
    pending.set(this.id, roll);
    return roll;
  };
  wrapped.__initiativeSidecar = true;
  proto.getInitiativeRoll = wrapped;
  return pending;
}

/**
 * The mark of one roll. @param {object} env @param {object} roll an evaluated Roll
 * @param {string|null} [rerollOf]
 */
export function rollMark(env, roll, rerollOf = null) {
  return { json: JSON.stringify(roll.toJSON()), reroll_of: rerollOf, nonce: nonce(env), total: roll.total };
}

/**
 * The roll of a pf2e initiative check card, as a Roll-like `{total, toJSON()}`, or null for any
 * other message (core's own initiative cards come after their update and are marked through
 * `getInitiativeRoll`). @param {object} message a ChatMessage, or its data
 */
export function pf2eInitiativeRoll(message) {
  const context = message?.flags?.pf2e?.context;
  if (context?.type !== "initiative" || context.isReroll) return null;
  const first = message.rolls?.[0];
  let json;
  try { json = typeof first === "string" ? JSON.parse(first) : (first?.toJSON?.() ?? first); } catch { return null; }
  if (!json || !Number.isFinite(json.total)) return null;
  return { total: json.total, toJSON: () => json };
}

/** The combatants a chat card speaks for: its token's, else (no token) its actor's. @param {object} env @param {object} speaker */
function speakerCombatants(env, speaker) {
  const found = [];
  for (const combat of env.game.combats ?? []) {
    for (const c of combat.combatants ?? []) {
      if (speaker?.token ? c.tokenId === speaker.token : (speaker?.actor && c.actorId === speaker.actor)) found.push(c);
    }
  }
  return found;
}

/**
 * Register the marking hooks (every client).
 * @param {object} env @param {() => Map<string, object>} pending from {@link wrapInitiativeRoll}
 */
export function registerRollMarking(env, pending) {
  env.Hooks.on("preCreateChatMessage", (message, data) => {
    const roll = pf2eInitiativeRoll(message?.flags ? message : data);
    const rolls = roll && pending();
    if (!rolls) return;
    for (const c of speakerCombatants(env, message?.speaker ?? data?.speaker)) rolls.set(c.id, roll);
  });
  env.Hooks.on("preUpdateCombatant", (combatant, changed) => {
    if (!("initiative" in changed)) return;
    const rolls = pending();
    const roll = rolls?.get(combatant.id);
    if (!roll) return;
    rolls.delete(combatant.id);
    if (roll.total !== changed.initiative) return;
    setProperty(env, changed, `flags.${MODULE_ID}.roll`, rollMark(env, roll));
  });
}

/**
 * Roll what a `reroll.roll` prompt asks (on the owner's client, or the GM's for NPCs) and
 * post it to chat. @param {object} env @param {object} prompt
 * @returns {Promise<{rollJSON:object, rerollOf:string}>}
 */
export async function rollReroll(env, prompt) {
  const combat = env.game.combats.get(prompt.combat_id);
  const combatant = combat?.combatants.get(prompt.combatant_id);
  const roll = new env.Roll(prompt.data.formula, combatant?.actor?.getRollData?.() ?? {});
  await roll.evaluate();
  try {
    // a hidden combatant's roll stays with the GMs, as Foundry's own initiative rolls do
    await roll.toMessage?.({ speaker: { actor: combatant?.actorId, token: combatant?.tokenId, alias: combatant?.name }, flavor: rerollFlavor(prompt.rule) },
      combatant?.hidden ? gmOnlyMessage(env) : {});
  } catch (e) { log.warn("could not post the reroll to chat", e); }
  return { rollJSON: roll.toJSON(), rerollOf: prompt.data.reroll_of ?? prompt.data.offer_id ?? prompt.prompt_id };
}

/** The chat flavor of a reroll (HTML in Foundry's chat card). @param {string} rule */
export function rerollFlavor(rule) {
  return `${escapeHTML(rule)}: reroll`;
}
