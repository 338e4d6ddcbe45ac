/**
 * Reading a plan and turning it into Foundry writes; steering the turn pointer from the
 * flags every client has. Pure: works on plain data (`combat.toObject()`-like sources).
 *
 * Flags kept (scope `initiative-sidecar`):
 * - on each combatant `state = {revision, acts, reaction, tags, detail, rules}`;
 * - on the combat `plan = {revision, round, current, next_round}`.
 * @module plan
 */

import { MODULE_ID, SKIPPED_ACTS } from "./constants.js";

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
 * The combatant flag state for a plan entry.
 * @param {object} entry plan order entry @param {number} revision
 * @returns {{revision:number, acts:string, reaction:object|null, tags:string[], detail:object, rules:string[]}}
 */
export function entryState(entry, revision) {
  return {
    revision,
    acts: entry.acts,
    reaction: entry.reaction ? { available: Boolean(entry.reaction.available), reason: entry.reaction.reason ?? null } : null,
    tags: [...(entry.tags ?? [])],
    detail: { ...(entry.detail ?? {}) },
    rules: [...(entry.rules ?? [])]
  };
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The single `Combat#update` that applies a plan: every changed initiative, each changed
 * combatant's plan state (flags), the combat's plan flag, and `round`/`turn` so the pointer
 * sits on `plan.current` under Foundry's sort of the new initiatives.
 *
 * Keys of `detail` that disappeared are deleted with Foundry's `-=key` syntax (flag objects merge).
 * @param {object} source `combat.toObject()`
 * @param {object} plan the sidecar's plan
 * @returns {{data:object|null, turn:number|null, changedCombatants:number}} `data` null: nothing to write
 */
export function planUpdate(source, plan) {
  const byId = new Map((source.combatants ?? []).map((c) => [c._id, c]));
  const combatants = [];
  const after = new Map([...byId].map(([id, c]) => [id, { _id: id, initiative: c.initiative }]));
  for (const entry of plan.order ?? []) {
    const c = byId.get(entry.combatant_id);
    if (!c) continue;
    const update = { _id: c._id };
    if (c.initiative !== entry.initiative) {
      update.initiative = entry.initiative;
      after.get(c._id).initiative = entry.initiative;
    }
    const old = c.flags?.[MODULE_ID]?.state;
    const state = entryState(entry, plan.revision);
    const { revision: _r1, ...oldBody } = old ?? {};
    const { revision: _r2, ...newBody } = state;
    if (!old || !same(oldBody, newBody)) {
      update[`flags.${MODULE_ID}.state`] = state;
      for (const key of Object.keys(old?.detail ?? {})) {
        if (!(key in state.detail)) update[`flags.${MODULE_ID}.state.detail.-=${key}`] = null;
      }
    }
    if (Object.keys(update).length > 1) combatants.push(update);
  }
  const sorted = foundrySort([...after.values()]);
  const index = plan.current ? sorted.findIndex((c) => c._id === plan.current) : -1;
  const data = {};
  if (combatants.length) data.combatants = combatants;
  const started = (source.round ?? 0) > 0;
  let turn = source.turn ?? null;
  if (started && index >= 0) {
    turn = index;
    if (plan.round > source.round) data.round = plan.round;
    if (turn !== source.turn || data.round !== undefined) data.turn = turn;
  }
  const combatFlag = {
    revision: plan.revision, round: plan.round, current: plan.current ?? null,
    next_round: plan.next_round ?? null
  };
  const oldFlag = source.flags?.[MODULE_ID]?.plan;
  const { revision: _a, ...oldFlagBody } = oldFlag ?? {};
  const { revision: _b, ...newFlagBody } = combatFlag;
  const meaningful = Object.keys(data).length > 0 || !oldFlag || !same(oldFlagBody, newFlagBody);
  if (!meaningful) return { data: null, turn, changedCombatants: 0 };
  data[`flags.${MODULE_ID}.plan`] = combatFlag;
  return { data, turn, changedCombatants: combatants.length };
}

/**
 * Whether a combatant's turn is skipped, from its flag state (and Foundry's skipDefeated).
 * @param {{flags?:object, defeated?:boolean}} c @param {boolean} [skipDefeated]
 */
export function isSkipped(c, skipDefeated = false) {
  const acts = c.flags?.[MODULE_ID]?.state?.acts;
  if (acts && SKIPPED_ACTS.includes(acts)) return true;
  return Boolean(skipDefeated && c.defeated);
}

/**
 * Where a forward move of the pointer should really land, from the flags every client has.
 * Skips turns whose `acts` is `none`, `defend_only` or `held`; when the round runs out, the
 * new round starts with `next_round.current` (the plan's view of the next round), placed by
 * the next round's initiatives when they are given.
 *
 * @param {{round:number, turn:number|null, combatants:object[], flags?:object}} source combat source
 * @param {{round?:number, turn?:number|null}} change the proposed `{round, turn}`
 * @param {{skipDefeated?:boolean}} [opts]
 * @returns {{round:number, turn:number, turnAsIs?:number, combatantId?:string|null,
 *   initiatives:Array<{_id:string, initiative:number|null}>|null}|null}
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
    // any other change before the start (v12 writes `turn` after rolls) is not ours to steer
    return change.round !== undefined && change.round >= 1 ? firstActing(source, 1, opts) : null;
  }
  if (newRound < round || (newRound === round && newTurn <= (source.turn ?? 0))) return null; // backwards: not ours
  const turns = foundrySort(source.combatants ?? []);
  if (newRound === round) {
    for (let i = newTurn; i < turns.length; i++) {
      if (!isSkipped(turns[i], opts.skipDefeated)) {
        return i === newTurn ? null : { round, turn: i, turnAsIs: i, combatantId: turns[i]._id, initiatives: null };
      }
    }
    return firstActing(source, round + 1, opts);
  }
  return firstActing(source, newRound, opts);
}

/** The pointer at the start of `round`, from the plan flag's `next_round`. */
function firstActing(source, round, opts) {
  const planFlag = source.flags?.[MODULE_ID]?.plan;
  const next = planFlag?.next_round;
  let combatants = source.combatants ?? [];
  let initiatives = null;
  if (next && next.round === round && Array.isArray(next.order)) {
    const byId = new Map(next.order.map((e) => [e.combatant_id, e]));
    initiatives = [];
    combatants = combatants.map((c) => {
      const e = byId.get(c._id);
      if (!e) return c;
      if (e.initiative !== c.initiative) initiatives.push({ _id: c._id, initiative: e.initiative });
      const acts = e.acts ?? c.flags?.[MODULE_ID]?.state?.acts;
      return { ...c, initiative: e.initiative, flags: { ...c.flags, [MODULE_ID]: { ...c.flags?.[MODULE_ID], state: { ...c.flags?.[MODULE_ID]?.state, acts } } } };
    });
  }
  const turns = foundrySort(combatants);
  let turn = next?.current ? turns.findIndex((c) => c._id === next.current) : -1;
  if (turn < 0) {
    turn = turns.findIndex((c) => !isSkipped(c, opts.skipDefeated));
    if (turn < 0) turn = 0;
  }
  const id = turns[turn]?._id;
  const turnAsIs = Math.max(0, foundrySort(source.combatants ?? []).findIndex((c) => c._id === id));
  return { round, turn, turnAsIs, combatantId: id ?? null, initiatives: initiatives?.length ? initiatives : null };
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
