/**
 * The single forwarder: on the active GM's client, turn Foundry's after-change hooks into
 * `hook` messages (and a manual initiative edit into `initiative.set`). The module's own
 * writes carry `options["initiative-sidecar"].own` and are not forwarded.
 * @module forwarder
 */

import { MODULE_ID } from "./constants.js";
import { initiativeRollField } from "./payloads.js";
import { isActiveGM } from "./foundry-data.js";

/** Keys of a Combatant change that say nothing the sidecar reads. */
const QUIET_COMBATANT_KEYS = Object.freeze(["_id", "_stats", "flags", "initiative"]);

/** Is this an update the module made itself? @param {object} [options] */
export function isOwnWrite(options) { return Boolean(options?.[MODULE_ID]?.own); }

/**
 * What to send for an `updateCombatant` change, decided from the change alone.
 * @param {object} changed the update diff
 * @returns {{kind:"roll", roll:object, rerollOf?:string}|{kind:"set", value:number}|{kind:"hook"}|{kind:"none"}}
 */
export function classifyCombatantChange(changed) {
  const mark = changed.flags?.[MODULE_ID]?.roll;
  if ("initiative" in changed) {
    if (mark?.json && Number.isFinite(changed.initiative)) {
      try { return { kind: "roll", roll: JSON.parse(mark.json), rerollOf: mark.reroll_of ?? undefined }; } catch { /* not a roll */ }
    }
    if (Number.isFinite(changed.initiative)) return { kind: "set", value: changed.initiative };
    return { kind: "hook" }; // reset to null
  }
  return Object.keys(changed).some((k) => !QUIET_COMBATANT_KEYS.includes(k)) ? { kind: "hook" } : { kind: "none" };
}

/**
 * Register the forwarding hooks. Each handler runs on every client and returns at once
 * unless this is the active GM with a live sidecar link.
 * @param {object} env Foundry globals @param {() => import("./sidecar.js").Sidecar|null} sidecar
 */
export function registerForwarder(env, sidecar) {
  const { Hooks } = env;
  const live = () => (isActiveGM(env) ? sidecar() : null);

  Hooks.on("createCombat", (combat, options, userId) => {
    const s = live(); if (!s || isOwnWrite(options)) return;
    s.hook("createCombat", combat, userId, undefined, options);
  });
  Hooks.on("updateCombat", (combat, changed, options, userId) => {
    const s = live(); if (!s || isOwnWrite(options)) return;
    s.hook("updateCombat", combat, userId, changed, options);
  });
  Hooks.on("deleteCombat", (combat, options, userId) => {
    const s = live(); if (!s || isOwnWrite(options)) return;
    s.hook("deleteCombat", combat, userId, undefined, options);
  });
  Hooks.on("createCombatant", (combatant, options, userId) => {
    const s = live(); if (!s || isOwnWrite(options) || !combatant.parent) return;
    s.hook("createCombatant", combatant.parent, userId, { _id: combatant.id }, options);
  });
  Hooks.on("deleteCombatant", (combatant, options, userId) => {
    const s = live(); if (!s || isOwnWrite(options) || !combatant.parent) return;
    s.hook("deleteCombatant", combatant.parent, userId, { _id: combatant.id }, options);
  });
  Hooks.on("updateCombatant", (combatant, changed, options, userId) => {
    const s = live(); if (!s || isOwnWrite(options) || !combatant.parent) return;
    const combat = combatant.parent;
    const what = classifyCombatantChange(changed);
    if (what.kind === "roll") {
      s.hook("initiativeRoll", combat, userId, undefined, options, initiativeRollField(combatant.id, what.roll, what.rerollOf));
    } else if (what.kind === "set") {
      s.intent({ user: userId, kind: "initiative.set", combat_id: combat.id, combatant_id: combatant.id, args: { value: what.value } });
    } else if (what.kind === "hook") {
      s.hook("updateCombatant", combat, userId, changed, options);
    }
  });
}
