/**
 * What a plan changes in Foundry, worked out on plain data (`combat.toObject()`-like sources).
 * The writes themselves are the applier's (applier.js), the steering of Next/Previous is
 * turns.js'.
 *
 * Flags kept (scope `initiative-sidecar`):
 * - on each combatant `state = {revision, acts, reaction, tags, detail, rules, actions?,
 *   gm_actions?, formula?}`;
 * - on the combat `plan = {revision, round, current, next_round}`.
 * @module plan
 */

import { MODULE_ID } from "./constants.js";

/**
 * Foundry's own order: initiative descending, null last, ties by `_id` ascending (code points).
 * @template {{_id?:string, id?:string, initiative:number|null}} C
 * @param {C[]} combatants @returns {C[]} a new sorted array
 */
export function foundrySort(combatants) {
  const init = (c) => (Number.isFinite(c.initiative) ? c.initiative : -Infinity);
  const idOf = (c) => c._id ?? c.id;
  return [...combatants].sort((a, b) => (init(b) - init(a)) || (idOf(a) < idOf(b) ? -1 : idOf(a) > idOf(b) ? 1 : 0));
}

/** Is this plan older than (or the same as) one already applied? @param {{revision:number}} plan @param {number|undefined} appliedRevision */
export function isStale(plan, appliedRevision) {
  return Number.isFinite(appliedRevision) && plan.revision <= appliedRevision;
}

/** State keys an entry may leave out (sent only when they say something); one the new state lacks is deleted from the flag. */
export const OPTIONAL_STATE_KEYS = Object.freeze(["actions", "gm_actions", "formula"]);

/**
 * The combatant flag state for a plan entry (badges, steering, the actions its owners and the GM
 * may take, the dice its ruleset rolls); optional keys only when they say something.
 * @param {object} entry plan order entry @param {number} revision
 */
export function entryState(entry, revision) {
  const state = {
    revision, acts: entry.acts,
    reaction: entry.reaction ? { available: Boolean(entry.reaction.available), reason: entry.reaction.reason ?? null } : null,
    tags: [...(entry.tags ?? [])], detail: { ...(entry.detail ?? {}) }, rules: [...(entry.rules ?? [])]
  };
  for (const key of ["actions", "gm_actions"]) if (Array.isArray(entry[key]) && entry[key].length) state[key] = [...entry[key]];
  if (typeof entry.formula === "string" && entry.formula) state.formula = entry.formula;
  return state;
}

/** An optional key that says something: absent, null and an empty list say nothing. */
const hasValue = (v) => v !== undefined && v !== null && !(Array.isArray(v) && !v.length) && v !== "";

/** No reaction, detail, rules or optional key: a state of `acts` and `tags` alone. */
const bare = (state) => state.reaction === null && !Object.keys(state.detail).length && !state.rules.length
  && !OPTIONAL_STATE_KEYS.some((k) => hasValue(state[k]));

/** A state that says nothing Foundry does not do itself (no need to write it where none is). */
const isPlainState = (state) => state.acts === "full" && !state.tags.length && bare(state);

/** A state that only restates the document: a defeated combatant that does not act. */
const restatesDefeat = (state, c) => Boolean(c.defeated) && state.acts === "none" && same(state.tags, ["defeated"]) && bare(state);

/** Do two values say the same, whatever the keys' order, an absent optional key as an empty one? */
const same = (a, b) => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));

/** Keys sorted, nothing-saying optional keys dropped (see {@link same}). */
function canonical(v, top = true) {
  if (Array.isArray(v)) return v.map((x) => canonical(x, false));
  if (!v || typeof v !== "object") return v;
  const out = {};
  for (const k of Object.keys(v).sort()) if (v[k] !== undefined && !(top && OPTIONAL_STATE_KEYS.includes(k) && !hasValue(v[k]))) out[k] = canonical(v[k], false);
  return out;
}

/**
 * What applying a plan changes, only what a rule changed (`data: null` when it agrees):
 * - `combatants`: rows of combatants in `source`: an initiative where the plan's differs (never
 *   null over a number), a plan state where it differs (a plain state not where none is; one
 *   restating a defeat only beside another change); `groups`: CombatantGroup rows;
 * - `current`: the combatant the pointer must move to, when it is not Foundry's current one
 *   (`opts.currentId`); a started combat keeping `turn: null` gets a turn only when the last plan
 *   applied (the combat's flag) named another current (docs/module.md);
 * - `round`: the plan's round, when past the combat's (a round begun by a rule);
 * - the plan flag, when its `next_round` steers, or beside the rest when it changed.
 * @param {object} source `combat.toObject()` @param {object} plan
 * @param {{del?:(path:string, key:string) => [string, unknown], skipped?:string[], currentId?:string|null}} [opts] `del`: the
 *   generation's deletion key (compat.js `deletion`), needed when a state loses a key
 * @returns {{data:object|null, changedCombatants:number}}
 */
export function planUpdate(source, plan, opts = {}) {
  const byId = new Map((source.combatants ?? []).map((c) => [c._id, c]));
  const combatants = [];
  const passive = []; // rows that only restate the document: written only beside another change
  for (const entry of plan.order ?? []) {
    const c = byId.get(entry.combatant_id);
    if (!c) continue;
    const update = { _id: c._id };
    if (Number.isFinite(entry.initiative) && c.initiative !== entry.initiative) update.initiative = entry.initiative;
    const old = c.flags?.[MODULE_ID]?.state;
    const state = entryState(entry, plan.revision);
    const { revision: _r1, ...oldBody } = old ?? {};
    const { revision: _r2, ...newBody } = state;
    let quiet = false;
    if (old ? !same(oldBody, newBody) : !isPlainState(state)) {
      quiet = !old && !("initiative" in update) && restatesDefeat(state, c);
      update[`flags.${MODULE_ID}.state`] = state;
      // Foundry merges the flag key by key: what the new state lacks is deleted explicitly
      // (the top-level keys an entry left out, e.g. `actions` no longer offered, and the
      // `detail` keys), in the generation's form (`-=key` on 13, `_del` on 14)
      const gone = [...Object.keys(oldBody).filter((k) => !(k in newBody)).map((k) => [`flags.${MODULE_ID}.state`, k]),
        ...Object.keys(old?.detail ?? {}).filter((k) => !(k in state.detail)).map((k) => [`flags.${MODULE_ID}.state.detail`, k])];
      for (const [path, key] of gone) { const [k, v] = opts.del(path, key); update[k] = v; }
    }
    if (Object.keys(update).length > 1) (quiet ? passive : combatants).push(update);
  }
  const data = {};
  if (combatants.length) data.combatants = combatants;
  // a CombatantGroup's own initiative overrides its members' [research §2 `_prepareGroup`]: it
  // takes the members' common value, or none when the plan sets them apart
  for (const g of (source.groups ?? []).filter((x) => Number.isFinite(x.initiative))) {
    const values = new Set((plan.order ?? []).filter((e) => byId.get(e.combatant_id)?.group === g._id && Number.isFinite(e.initiative)).map((e) => e.initiative));
    const initiative = values.size === 1 ? [...values][0] : values.size ? null : g.initiative;
    if (initiative !== g.initiative) (data.groups ??= []).push({ _id: g._id, initiative });
  }
  const oldFlag = source.flags?.[MODULE_ID]?.plan;
  if ((source.round ?? 0) > 0 && plan.current && byId.has(plan.current)) {
    const keepsNull = source.turn === null || source.turn === undefined;
    const currentId = opts.currentId !== undefined ? opts.currentId : (keepsNull ? null : foundrySort(source.combatants)[source.turn]?._id ?? null);
    if (plan.round > source.round) data.round = plan.round;
    const ruleMoved = keepsNull && Boolean(oldFlag) && oldFlag.current !== plan.current;
    if (keepsNull ? ruleMoved : currentId !== plan.current) data.current = plan.current;
  }
  const combatFlag = { revision: plan.revision, round: plan.round, current: plan.current ?? null, next_round: plan.next_round ?? null };
  const steers = nextRoundSteers(combatFlag.next_round, byId, opts.skipped ?? []);
  const { revision: _a, ...oldFlagBody } = oldFlag ?? {};
  const { revision: _b, ...newFlagBody } = combatFlag;
  const flagNews = oldFlag ? !same(oldFlagBody, newFlagBody) && (steers || Boolean(oldFlag.next_round)) : steers;
  if (!Object.keys(data).length && !flagNews) return { data: null, changedCombatants: 0 };
  if (passive.length) data.combatants = [...(data.combatants ?? []), ...passive];
  // the flag is the combat's: written beside a pointer move, or when it says something new
  // (beside combatant rows alone, a flag that only restates itself would cost a second write)
  if ("current" in data || "round" in data || !oldFlag || !same(oldFlagBody, newFlagBody)) data[`flags.${MODULE_ID}.plan`] = combatFlag;
  return { data, changedCombatants: combatants.length + passive.length };
}

/** Does `next_round` ask for anything Foundry's own next round would not do? (a defeat not acting restates the document) */
function nextRoundSteers(next, byId, skipped) {
  return (next?.order ?? []).some((e) => {
    const c = byId.get(e.combatant_id);
    return Boolean(c) && ((skipped.includes(e.acts) && !(e.acts === "none" && c.defeated)) || (Number.isFinite(e.initiative) && c.initiative !== e.initiative));
  });
}
