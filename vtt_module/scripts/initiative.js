/**
 * Initiative rolls. Foundry has no initiative hook, so every client wraps
 * `Combatant#getInitiativeRoll` (through libWrapper when active [GitHub ruipin/fvtt-lib-wrapper],
 * else on the prototype) to remember the Roll it hands out, and `preUpdateCombatant` (the roller's
 * client) marks the change with it: `flags.initiative-sidecar.roll = {json, reroll_of, nonce,
 * total}`, a nonce per roll since Foundry sends only the diff [research §9]. A change without a new
 * nonce is a manual edit (forwarder.js).
 * pf2e never calls `getInitiativeRoll`: its initiative check card (`flags.pf2e.context.type ===
 * "initiative"`) is created before `setMultipleInitiatives` writes [GitHub foundryvtt/pf2e
 * `src/module/encounter/document.ts`, `actor/initiative.ts`, `system/check/check.ts`], so
 * `preCreateChatMessage` remembers its roll; a reroll card (written after its value) is not.
 * A plan state's `formula` (dice-pool) is rolled by the module: dnd5e ignores a passed one (§9).
 * @module initiative
 */

import { MODULE_ID } from "./constants.js";
import { gmOnlyMessage } from "./compat.js";
import { escapeHTML } from "./html.js";
import * as log from "./log.js";

/**
 * Wrap `getInitiativeRoll` of the Combatant class in use (at `setup`, after the system set `CONFIG.Combatant.documentClass`).
 * @returns {Map<string, object>} combatant id → the last Roll handed out
 */
export function wrapInitiativeRoll(env) {
  const pending = new Map();
  const wrapper = function (wrapped, formula) {
    const wanted = this.flags?.[MODULE_ID]?.state?.formula;
    const roll = wanted ? new env.Roll(wanted, this.actor?.getRollData?.() ?? {}) : wrapped(formula);
    pending.set(this.id, roll);
    return roll;
  };
  if (env.libWrapper?.register) {
    env.libWrapper.register(MODULE_ID, "CONFIG.Combatant.documentClass.prototype.getInitiativeRoll", wrapper, "MIXED");
    return pending;
  }
  const proto = env.CONFIG.Combatant.documentClass.prototype;
  const original = proto.getInitiativeRoll;
  proto.getInitiativeRoll = function getInitiativeRoll(formula) { return wrapper.call(this, (f) => original.call(this, f), formula); };
  return pending;
}

/** The mark of one roll. @param {object} env @param {object} roll an evaluated Roll @param {string|null} [rerollOf] */
export function rollMark(env, roll, rerollOf = null) {
  return { json: JSON.stringify(roll.toJSON()), reroll_of: rerollOf, nonce: env.foundry.utils.randomID(16), total: roll.total };
}

/** The roll of a pf2e initiative check card as a Roll-like `{total, toJSON()}`, else null. @param {object} message a ChatMessage, or its data */
export function pf2eInitiativeRoll(message) {
  const context = message?.flags?.pf2e?.context;
  if (context?.type !== "initiative" || context.isReroll) return null;
  const first = message.rolls?.[0];
  let json;
  try { json = typeof first === "string" ? JSON.parse(first) : (first?.toJSON?.() ?? first); } catch { return null; }
  if (!json || !Number.isFinite(json.total)) return null;
  return { total: json.total, toJSON: () => json };
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
    const speaker = message?.speaker ?? data?.speaker;
    for (const combat of env.game.combats ?? []) {
      for (const c of combat.combatants ?? []) {
        if (speaker?.token ? c.tokenId === speaker.token : (speaker?.actor && c.actorId === speaker.actor)) rolls.set(c.id, roll);
      }
    }
  });
  env.Hooks.on("preUpdateCombatant", (combatant, changed) => {
    const rolls = "initiative" in changed ? pending() : null;
    const roll = rolls?.get(combatant.id);
    if (!roll) return;
    rolls.delete(combatant.id);
    if (roll.total === changed.initiative) env.foundry.utils.setProperty(changed, `flags.${MODULE_ID}.roll`, rollMark(env, roll));
  });
}

/**
 * Roll what a `reroll.roll` prompt asks (the owner's client, or the GM's for NPCs) and post it as
 * the combatant's token speaks (actor, token, scene); a hidden combatant's roll stays with the GMs.
 * @param {object} env @param {object} prompt @returns {Promise<{rollJSON:object, rerollOf:string}>}
 */
export async function rollReroll(env, prompt) {
  const combat = env.game.combats.get(prompt.combat_id);
  const c = combat?.combatants.get(prompt.combatant_id);
  const roll = new env.Roll(prompt.data.formula, c?.actor?.getRollData?.() ?? {});
  await roll.evaluate();
  const speaker = { actor: c?.actorId ?? null, token: c?.tokenId ?? null, scene: c?.sceneId ?? combat?.scene ?? null, alias: c?.name };
  try {
    await roll.toMessage({ speaker, flavor: rerollFlavor(prompt.rule) }, c?.hidden ? gmOnlyMessage(env) : {});
  } catch (e) { log.warn("could not post the reroll to chat", e); }
  return { rollJSON: roll.toJSON(), rerollOf: prompt.data.reroll_of ?? prompt.data.offer_id ?? prompt.prompt_id };
}

/** The chat flavor of a reroll (HTML in Foundry's chat card). @param {string} rule */
export function rerollFlavor(rule) {
  return `${escapeHTML(rule)}: reroll`;
}
