/**
 * Initiative rolls. Foundry has no initiative hook, so on every client the module wraps
 * `Combatant#getInitiativeRoll` to remember the Roll it hands out, and in
 * `preUpdateCombatant` (the roller's own client) marks the initiative change with that roll
 * (`flags.initiative-sidecar.roll = {json}`): the GM's forwarder then sends `initiativeRoll`.
 * An initiative change without a mark is a manual edit (`initiative.set`).
 * @module initiative
 */

import { MODULE_ID } from "./constants.js";
import { readPath } from "./payloads.js";
import { getSetting, SETTINGS, statPaths } from "./settings.js";
import { setProperty } from "./foundry-data.js";
import * as log from "./log.js";

/**
 * The dice-pool formula (DP-1, DP-3, DP-7): Reaction + Wits − size (+ modifier) six-sided
 * dice, 4+ succeeds, each 1 takes one away.
 * @param {Record<string, number>} stats @returns {string|null} null when the stats are missing
 */
export function poolFormula(stats) {
  if (!Number.isFinite(stats.reaction) || !Number.isFinite(stats.wits)) return null;
  const pool = stats.reaction + stats.wits - (Number(stats.size) || 0) + (Number(stats.pool_modifier) || 0);
  return `${Math.max(pool, 0)}d6cs>=4df=1`;
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
    let f = formula;
    if (!f && getSetting(env, SETTINGS.RULESET) === "dice-pool") {
      const paths = statPaths(getSetting(env, SETTINGS.STAT_PATHS), env.game.system?.id);
      const stats = {};
      for (const key of ["reaction", "wits", "size", "pool_modifier"]) {
        const v = Number(readPath(this.actor, paths[key]));
        if (paths[key] && Number.isFinite(v)) stats[key] = v;
      }
      f = poolFormula(stats) ?? undefined;
    }
    const roll = original.call(this, f);
    pending.set(this.id, roll);
    return roll;
  };
  wrapped.__initiativeSidecar = true;
  proto.getInitiativeRoll = wrapped;
  return pending;
}

/**
 * Register the marking hook (every client).
 * @param {object} env @param {Map<string, object>} pending from {@link wrapInitiativeRoll}
 */
export function registerRollMarking(env, pending) {
  env.Hooks.on("preUpdateCombatant", (combatant, changed) => {
    if (!("initiative" in changed)) return;
    const roll = pending.get(combatant.id);
    if (!roll) return;
    pending.delete(combatant.id);
    if (roll.total !== changed.initiative) return;
    setProperty(env, changed, `flags.${MODULE_ID}.roll`, { json: JSON.stringify(roll.toJSON()), reroll_of: null });
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
    await roll.toMessage?.({ speaker: { actor: combatant?.actorId, token: combatant?.tokenId, alias: combatant?.name }, flavor: `${prompt.rule}: reroll` },
      combatant?.hidden ? { rollMode: "gmroll" } : {});
  } catch (e) { log.warn("could not post the reroll to chat", e); }
  return { rollJSON: roll.toJSON(), rerollOf: prompt.data.reroll_of ?? prompt.data.offer_id ?? prompt.prompt_id };
}
