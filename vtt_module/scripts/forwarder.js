/**
 * The single forwarder: on the active GM's client, turn Foundry's after-change hooks into
 * `hook` messages (and a GM's manual initiative edit into `initiative.set`). The module's own
 * writes carry `options["initiative-sidecar"].own` and are not forwarded.
 * @module forwarder
 */

import { MODULE_ID, FORWARDED_HOOKS } from "./constants.js";
import { initiativeRollField, rollingGroup } from "./payloads.js";
import { isActiveGM } from "./foundry-data.js";
import * as log from "./log.js";

/** Keys of a Combatant change that say nothing the sidecar reads. */
const QUIET_COMBATANT_KEYS = Object.freeze(["_id", "_stats", "flags", "initiative"]);

/** Is this an update the module made itself? @param {object} [options] */
export function isOwnWrite(options) { return Boolean(options?.[MODULE_ID]?.own); }

/**
 * What to send for an `updateCombatant` change. Foundry sends only the diff [research §9], so a
 * roll is recognised by its mark's new `nonce` and read from the document. An unmarked number is
 * a manual edit, `initiative.set`, which only a GM may send: a player's unmarked change is the
 * `updateCombatant` hook it is (`unmarked: true`), and the sidecar keeps its own value.
 * @param {object} changed the diff @param {object} [mark] `flags.<id>.roll` now
 * @param {number|null} [initiative] the initiative now @param {boolean} [byGM] was the change a GM's
 * @returns {{kind:"roll", roll:object, rerollOf?:string}|{kind:"set", value:number}|{kind:"hook", unmarked?:true}|{kind:"none"}}
 */
export function classifyCombatantChange(changed, mark, initiative, byGM = true) {
  const fresh = changed.flags?.[MODULE_ID]?.roll?.nonce;
  if (fresh && mark?.nonce === fresh && mark.json && Number.isFinite(initiative)) {
    try { return { kind: "roll", roll: JSON.parse(mark.json), rerollOf: mark.reroll_of ?? undefined }; } catch { /* not a roll */ }
  }
  if ("initiative" in changed) {
    if (!Number.isFinite(changed.initiative)) return { kind: "hook" }; // reset to null
    return byGM ? { kind: "set", value: changed.initiative } : { kind: "hook", unmarked: true };
  }
  return Object.keys(changed).some((k) => !QUIET_COMBATANT_KEYS.includes(k)) ? { kind: "hook" } : { kind: "none" };
}

/**
 * Register the forwarding hooks ({@link FORWARDED_HOOKS}): each returns at once unless this is the
 * active GM with a sidecar link. Combatant hooks fire before the combat re-sorts [research §9], so
 * every message is built a microtask later, in the order of the hooks.
 * @param {object} env @param {() => import("./sidecar.js").Sidecar|null} sidecar
 */
export function registerForwarder(env, sidecar) {
  const live = (options) => (isActiveGM(env) && !isOwnWrite(options) ? sidecar() : null);
  const later = (send) => queueMicrotask(() => { const s = live(); if (s) send(s); });
  const combatHook = (name) => (combat, a, b, c) => {
    const [changed, options, userId] = name === "updateCombat" ? [a, b, c] : [undefined, a, b];
    if (live(options)) later((s) => s.hook(name, combat, userId, changed, options));
  };
  const combatantHook = (name) => (combatant, options, userId) => {
    if (live(options) && combatant.parent) later((s) => s.hook(name, combatant.parent, userId, { _id: combatant.id }, options));
  };
  const handlers = {
    createCombat: combatHook("createCombat"), updateCombat: combatHook("updateCombat"), deleteCombat: combatHook("deleteCombat"),
    createCombatant: combatantHook("createCombatant"), deleteCombatant: combatantHook("deleteCombatant"),
    updateCombatant: (combatant, changed, options, userId) => {
      if (!live(options) || !combatant.parent) return;
      const combat = combatant.parent;
      const byGM = Boolean(env.game.users.get(userId)?.isGM);
      const what = classifyCombatantChange(changed, combatant.flags?.[MODULE_ID]?.roll, combatant.initiative, byGM);
      if (what.kind === "none") return;
      if (what.unmarked) log.warn(`user ${userId} changed the initiative of combatant ${combatant.id} without a roll the module knows; only a GM may set one by hand, so the rules keep their own value`);
      later((s) => {
        if (what.kind === "roll") s.hook("initiativeRoll", combat, userId, undefined, options, initiativeRollField(combatant.id, what.roll, what.rerollOf, rollingGroup(combatant)));
        else if (what.kind === "set") s.intent({ user: userId, kind: "initiative.set", combat_id: combat.id, combatant_id: combatant.id, args: { value: what.value } });
        else s.hook("updateCombatant", combat, userId, changed, options);
      });
    }
  };
  for (const name of FORWARDED_HOOKS) env.Hooks.on(name, handlers[name]);
}
