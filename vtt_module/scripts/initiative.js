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
 * Register the marking hook (every client).
 * @param {object} env @param {() => Map<string, object>} pending from {@link wrapInitiativeRoll}
 */
export function registerRollMarking(env, pending) {
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
