/**
 * Reading a plan and turning it into Foundry writes; steering the turn pointer from the
 * flags every client has. Pure: works on plain data (`combat.toObject()`-like sources).
 *
 * Flags kept (scope `initiative-sidecar`):
 * - on each combatant `state = {revision, acts, reaction, tags, detail, rules, actions?,
 *   gm_actions?, formula?}`;
 * - on the combat `plan = {revision, round, current, next_round}`.
 * @module plan
 */

import { MODULE_ID } from "./constants.js";
import { deletion } from "./compat.js";

/**
 * Foundry's own order: initiative descending, null last, ties by `_id` ascending (code points).
 * @template {{_id?:string, id?:string, initiative:number|null}} C
 * @param {C[]} combatants @returns {C[]} a new sorted array
 */
export function foundrySort(combatants) {
  const idOf = (c) => c._id ?? c.id;
  return [...combatants].sort((a, b) => {
    const ia = Number.isFinite(a.initiative) ? a.initiative : -Infinity;
    const ib = Number.isFinite(b.initiative) ? b.initiative : -Infinity;
    if (ia !== ib) return ib - ia;
    const x = idOf(a), y = idOf(b);
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

/**
 * Is this plan older than (or the same as) one already applied?
 * @param {{revision:number}} plan @param {number|undefined} appliedRevision
 */
export function isStale(plan, appliedRevision) {
  return Number.isFinite(appliedRevision) && plan.revision <= appliedRevision;
}

/**
 * The state keys a plan entry may leave out: the sidecar sends `actions`/`gm_actions` only
 * when there are any and `formula` only for a ruleset that rolls its own dice. A key the new
 * state lacks is deleted from the flag (Foundry merges a flag key by key: left alone, the old
 * value would stay).
 */
export const OPTIONAL_STATE_KEYS = Object.freeze(["actions", "gm_actions", "formula"]);

/**
 * The combatant flag state for a plan entry (what every client reads: badges, steering, the
 * actions a combatant's owners may take now and those only a GM may, the dice its ruleset
 * rolls, all from the sidecar). The optional keys are present only when they say something
 * (a non-empty list, a formula), so an empty or null one reads as absent.
 * @param {object} entry plan order entry @param {number} revision
 * @returns {{revision:number, acts:string, reaction:object|null, tags:string[], detail:object, rules:string[], actions?:string[], gm_actions?:string[], formula?:string}}
 */
export function entryState(entry, revision) {
  const state = {
    revision,
    acts: entry.acts,
    reaction: entry.reaction ? { available: Boolean(entry.reaction.available), reason: entry.reaction.reason ?? null } : null,
    tags: [...(entry.tags ?? [])],
    detail: { ...(entry.detail ?? {}) },
    rules: [...(entry.rules ?? [])]
  };
  if (Array.isArray(entry.actions) && entry.actions.length) state.actions = [...entry.actions];
  if (Array.isArray(entry.gm_actions) && entry.gm_actions.length) state.gm_actions = [...entry.gm_actions];
  if (typeof entry.formula === "string" && entry.formula) state.formula = entry.formula;
  return state;
}

/** Does the state carry any optional key (an action, a GM action, a formula)? */
const offersAny = (state) => OPTIONAL_STATE_KEYS.some((k) => hasValue(state[k]));

/** An optional key that says something: absent, null and an empty list say nothing. */
const hasValue = (v) => v !== undefined && v !== null && !(Array.isArray(v) && !v.length) && v !== "";

/** A state that says nothing Foundry does not do itself (no need to write it where none is). */
function isPlainState(state) {
  return state.acts === "full" && state.reaction === null && !state.tags.length && !Object.keys(state.detail).length
    && !state.rules.length && !offersAny(state);
}

/** A state that only restates the document: a defeated combatant that does not act. */
function restatesDefeat(state, c) {
  return Boolean(c.defeated) && state.acts === "none" && same(state.tags, ["defeated"]) && state.reaction === null
    && !Object.keys(state.detail).length && !state.rules.length && !offersAny(state);
}

/**
 * Do two values say the same? Objects compare key by key whatever the keys' order (a merged
 * flag keeps its old keys first and appends new ones); an optional state key that is absent,
 * deleted, null or an empty list is one and the same.
 */
function same(a, b) {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

/** Keys sorted, nothing-saying optional keys dropped (see {@link same}). */
function canonical(v, top = true) {
  if (Array.isArray(v)) return v.map((x) => canonical(x, false));
  if (!v || typeof v !== "object") return v;
  const out = {};
  for (const k of Object.keys(v).sort()) {
    if (v[k] === undefined) continue;
    if (top && OPTIONAL_STATE_KEYS.includes(k) && !hasValue(v[k])) continue;
    out[k] = canonical(v[k], false);
  }
  return out;
}

/**
 * The single `Combat#update` that applies a plan, holding only what a rule changed:
 * - an initiative where the plan's differs (never `null` over a number);
 * - a combatant's plan state where it differs (a plain state is not written where none is; a
 *   state that only restates the document, a defeated combatant not acting, is written only
 *   beside another change);
 * - `round`/`turn` only when the pointer must move: when Foundry, keeping its `turn` index
 *   over the new order, would point at someone else than `plan.current`, or the plan starts a
 *   new round. The index comes from `sortAfter` (the combat's own sort, see turns.js), never
 *   from a comparator of ours. A started combat whose system keeps `turn: null` gets a `turn`
 *   only when a rule moved the pointer: the plan names a current and the last plan applied
 *   (the combat's flag) named another one (documented in docs/module.md);
 * - the combat's plan flag, when anything else is written or its `next_round` tells the
 *   steering something.
 * Rows name only combatants in `source` (a row with an unknown `_id` would create one).
 * A plan that agrees with the combat gives `data: null`.
 * @param {object} source `combat.toObject()`
 * @param {object} plan the sidecar's plan
 * @param {{sortAfter?:(rows:Array<{_id:string, initiative:number|null}>) => string[],
 *   del?:(path:string, key:string) => [string, unknown], skipped?:string[]}} [opts]
 * @returns {{data:object|null, turn:number|null, changedCombatants:number}}
 */
export function planUpdate(source, plan, opts = {}) {
  const del = opts.del ?? ((path, key) => deletion({}, path, key)); // callers pass their generation's
  const byId = new Map((source.combatants ?? []).map((c) => [c._id, c]));
  const combatants = [];
  const passive = []; // rows that only restate the document: written only beside another change
  const moved = [];
  for (const entry of plan.order ?? []) {
    const c = byId.get(entry.combatant_id);
    if (!c) continue;
    const update = { _id: c._id };
    if (Number.isFinite(entry.initiative) && c.initiative !== entry.initiative) {
      update.initiative = entry.initiative;
      moved.push({ _id: c._id, initiative: entry.initiative });
    }
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
      for (const key of Object.keys(oldBody)) {
        if (!(key in newBody)) {
          const [k, v] = del(`flags.${MODULE_ID}.state`, key);
          update[k] = v;
        }
      }
      for (const key of Object.keys(old?.detail ?? {})) {
        if (!(key in state.detail)) {
          const [k, v] = del(`flags.${MODULE_ID}.state.detail`, key);
          update[k] = v;
        }
      }
    }
    if (Object.keys(update).length > 1) (quiet ? passive : combatants).push(update);
  }
  const sortAfter = opts.sortAfter ?? ((rows) => {
    const values = new Map(rows.map((r) => [r._id, r.initiative]));
    return foundrySort((source.combatants ?? []).map((c) => ({ _id: c._id, initiative: values.has(c._id) ? values.get(c._id) : c.initiative }))).map((c) => c._id);
  });
  const data = {};
  if (combatants.length) data.combatants = combatants;
  const oldFlag = source.flags?.[MODULE_ID]?.plan;
  let turn = source.turn ?? null;
  if ((source.round ?? 0) > 0 && plan.current && byId.has(plan.current)) {
    const order = sortAfter(moved);
    const index = order.indexOf(plan.current);
    const newRound = plan.round > source.round;
    const keepsNull = source.turn === null || source.turn === undefined;
    const ruleMoved = keepsNull && Boolean(oldFlag) && oldFlag.current !== plan.current;
    const pointsElsewhere = !keepsNull && order[source.turn] !== plan.current;
    if (index >= 0 && (newRound || pointsElsewhere || ruleMoved)) {
      if (newRound) data.round = plan.round;
      if (!keepsNull || ruleMoved) { turn = index; data.turn = index; }
    }
  }
  const combatFlag = {
    revision: plan.revision, round: plan.round, current: plan.current ?? null,
    next_round: plan.next_round ?? null
  };
  const steers = nextRoundSteers(combatFlag.next_round, byId, opts.skipped ?? []);
  const { revision: _a, ...oldFlagBody } = oldFlag ?? {};
  const { revision: _b, ...newFlagBody } = combatFlag;
  const flagNews = oldFlag ? !same(oldFlagBody, newFlagBody) && (steers || Boolean(oldFlag.next_round)) : steers;
  if (!Object.keys(data).length && !flagNews) return { data: null, turn, changedCombatants: 0 };
  if (passive.length) data.combatants = [...(data.combatants ?? []), ...passive];
  data[`flags.${MODULE_ID}.plan`] = combatFlag;
  return { data, turn, changedCombatants: combatants.length + passive.length };
}

/** Does `next_round` ask for anything Foundry's own next round would not do? */
function nextRoundSteers(next, byId, skipped) {
  if (!next) return false;
  return (next.order ?? []).some((e) => {
    const c = byId.get(e.combatant_id);
    if (!c) return false;
    const skips = skipped.includes(e.acts) && !(e.acts === "none" && c.defeated); // a defeat restates the document
    return skips || (Number.isFinite(e.initiative) && c.initiative !== e.initiative);
  });
}

/**
 * Whether a combatant's turn is skipped, from its flag state (the `acts` values the sidecar
 * says are skipped, from its `welcome`) and Foundry's skipDefeated.
 * @param {{flags?:object, defeated?:boolean}} c @param {{skipDefeated?:boolean, skipped?:string[]}} [opts]
 */
export function isSkipped(c, { skipDefeated = false, skipped = [] } = {}) {
  const acts = c.flags?.[MODULE_ID]?.state?.acts;
  if (acts && skipped.includes(acts)) return true;
  return Boolean(skipDefeated && c.defeated);
}

/** The combat's own order after changing some initiatives (core's sort when none is given). */
function sorterOf(source, opts) {
  if (opts.sortAfter) return opts.sortAfter;
  return (rows) => {
    const values = new Map(rows.map((r) => [r._id, r.initiative]));
    return foundrySort((source.combatants ?? []).map((c) => ({ _id: c._id, initiative: values.has(c._id) ? values.get(c._id) : c.initiative }))).map((c) => c._id);
  };
}

/**
 * Where a forward move of the pointer should really land, from the flags every client has.
 * Skips turns whose `acts` the sidecar lists as skipped; when the round runs out, the new
 * round starts with `next_round.current` (the plan's view of the next round), placed by the
 * next round's initiatives when they are given. Indexes come from `opts.sortAfter` (the
 * combat's own sort, see turns.js).
 *
 * @param {{round:number, turn:number|null, combatants:object[], flags?:object}} source combat source
 * @param {{round?:number, turn?:number|null}} change the proposed `{round, turn}`
 * @param {{skipDefeated?:boolean, skipped?:string[], sortAfter?:(rows:object[]) => string[]}} [opts]
 * @returns {{round:number, turn:number, turnAsIs?:number, combatantId?:string|null,
 *   initiatives:Array<{_id:string, initiative:number}>|null}|null}
 *   the corrected target, or null to leave it alone. When the round flips, `turn` is the index
 *   once `initiatives` (the next round's values) are written and `turnAsIs` the index under the
 *   current values (for a client that may not write other combatants).
 */
export function steerTurn(source, change, opts = {}) {
  const round = source.round ?? 0;
  const newRound = change.round ?? round;
  const newTurn = change.turn ?? source.turn ?? 0;
  if (round === 0) {
    // combat starting (the round explicitly set to 1 or more): land on the first who acts;
    // any other change before the start is not ours to steer
    return change.round !== undefined && change.round >= 1 ? firstActing(source, 1, opts) : null;
  }
  if (newRound < round || (newRound === round && newTurn <= (source.turn ?? 0))) return null; // backwards: not ours
  const byId = new Map((source.combatants ?? []).map((c) => [c._id, c]));
  const turns = sorterOf(source, opts)([]).map((id) => byId.get(id));
  if (newRound === round) {
    for (let i = newTurn; i < turns.length; i++) {
      if (!isSkipped(turns[i], opts)) {
        return i === newTurn ? null : { round, turn: i, turnAsIs: i, combatantId: turns[i]._id, initiatives: null };
      }
    }
    return firstActing(source, round + 1, opts);
  }
  return firstActing(source, newRound, opts);
}

/** The pointer at the start of `round`, from the plan flag's `next_round`. */
function firstActing(source, round, opts) {
  const next = source.flags?.[MODULE_ID]?.plan?.next_round;
  const sortAfter = sorterOf(source, opts);
  const byId = new Map((source.combatants ?? []).map((c) => [c._id, c]));
  const initiatives = [];
  const acts = new Map();
  if (next && next.round === round && Array.isArray(next.order)) {
    for (const e of next.order) {
      const c = byId.get(e.combatant_id);
      if (!c) continue;
      // never null over a number; only what changes
      if (Number.isFinite(e.initiative) && e.initiative !== c.initiative) initiatives.push({ _id: c._id, initiative: e.initiative });
      if (e.acts) acts.set(c._id, e.acts);
    }
  }
  const order = sortAfter(initiatives);
  const skippedNext = (id) => {
    const c = byId.get(id);
    const a = acts.get(id) ?? c.flags?.[MODULE_ID]?.state?.acts;
    return (a && (opts.skipped ?? []).includes(a)) || Boolean(opts.skipDefeated && c.defeated);
  };
  let turn = next?.round === round && next?.current ? order.indexOf(next.current) : -1;
  if (turn < 0) {
    turn = order.findIndex((id) => !skippedNext(id));
    if (turn < 0) turn = 0;
  }
  const id = order[turn];
  const turnAsIs = Math.max(0, sortAfter([]).indexOf(id));
  return { round, turn, turnAsIs, combatantId: id ?? null, initiatives: initiatives.length ? initiatives : null };
}

/**
 * The plan state every client can read from synced data.
 * @param {object} source combat source
 * @returns {{revision:number|null, current:string|null, order:string[], states:Record<string, object>}}
 */
export function readPlan(source) {
  const flag = source.flags?.[MODULE_ID]?.plan ?? null;
  const states = {};
  for (const c of source.combatants ?? []) {
    const s = c.flags?.[MODULE_ID]?.state;
    if (s) states[c._id] = s;
  }
  return {
    revision: flag?.revision ?? null,
    current: flag?.current ?? null,
    order: foundrySort(source.combatants ?? []).map((c) => c._id),
    states
  };
}
