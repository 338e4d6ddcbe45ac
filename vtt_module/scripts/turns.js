/**
 * Steering: where Foundry's own Begin Combat, Next Turn and Next Round land. Core works out the step (`updateData =
 * {round, turn}`, defeated combatants skipped by `isDefeated`, a null turn kept across rounds) and calls
 * `combatStart`/`combatTurn`/`combatRound` on the initiating client before it writes; both objects may be changed
 * [research §1.1; D14 hookEvents.combatTurn, combatRound]. The module moves that proposal forward past turns the plan
 * says are skipped (`acts` the sidecar's `welcome` lists), and onto the plan's first combatant of a new round, never
 * re-doing core: no plan flag (foundry-core, an unplanned combat), a backward step or no one's turn (null) keep core's
 * proposal. A plain `combat.update({turn})` (a macro, another module) passes no turn hook. A step it moved, or one
 * onto an interrupted turn, carries `turnEvents: false` and gets its turn events from the active GM, once each.
 * @module turns
 */

import { MODULE_ID } from "./constants.js";
import { sidecarRules } from "./settings.js";
import * as log from "./log.js";

/** Was this combatant's turn interrupted in this round (ST-2, `flags.paused`), so that it resumes rather than starts? */
export const resumes = (combat, round, id) => { const p = combat.flags?.[MODULE_ID]?.paused; return p?.round === round && Boolean(p.ids?.includes(id)); };

/**
 * The turn events of a move the module made or steered (sent with `turnEvents: false`: core's would walk every crossed
 * turn), once each: End Turn of `end` ([id, index] or null), End/Start Round when the round grew past `round`, Start Turn
 * of the current combatant if `start`; each as core's private wrappers do it: the protected method, a start clears the
 * token's movement history, then the token's regions get the event [issue-25 review of F13.350 `client/documents/combat.mjs`
 * `#onStartTurn` … `#triggerRegionEvents`; research §1.1; D14 CONST.REGION_EVENTS]. Active GM only, as core's.
 */
export async function fireTurnEvents(env, combat, { end, round, start }) {
  const E = env.CONST.REGION_EVENTS, ctx = (r, t) => ({ round: r, turn: t, skipped: false });
  const regions = (name, data, cs) => void Promise.allSettled([...cs].flatMap((c) => [...(c.token?.regions ?? [])].map((r) => r._triggerEvent(name, { token: c.token, combatant: c, combat, ...data }))));
  const before = end && combat.combatants.get(end[0]);
  if (before) { await combat._onEndTurn(before, ctx(round, end[1])); regions(E.TOKEN_TURN_END, ctx(round, end[1]), [before]); }
  if (combat.round > round) {
    await combat._onEndRound({ round, skipped: false }); regions(E.TOKEN_ROUND_END, { round, skipped: false }, combat.combatants);
    await combat._onStartRound({ round: combat.round, skipped: false }); regions(E.TOKEN_ROUND_START, { round: combat.round, skipped: false }, combat.combatants);
  }
  const now = start && combat.combatant, at = ctx(combat.round, combat.turn);
  if (now) { await combat._onStartTurn(now, at); if (now.token) await combat._clearMovementHistoryOnStartTurn(now, at); regions(E.TOKEN_TURN_START, at, [now]); }
}

/**
 * Where a forward step should land, or null to keep core's proposal.
 * @param {{round:number, turns:Array<{id:string, isDefeated:boolean, flags?:object}>, flags?:object}} combat
 * @param {{round:number, turn:number|null}} proposal core's `updateData`
 * @param {{skipped?:string[], skipDefeated?:boolean}} [opts]
 * @returns {{round:number, turn:number}|null}
 */
export function landing(combat, proposal, { skipped = [], skipDefeated = false } = {}) {
  const flag = combat.flags?.[MODULE_ID]?.plan;
  if (!flag || !Number.isInteger(proposal.turn)) return null;
  const turns = combat.turns;
  const planned = (round) => (flag.next_round?.round === round ? flag.next_round : flag.round === round ? flag : null);
  const skips = (c, round) => {
    const next = round > combat.round ? flag.next_round?.order?.find((e) => e.combatant_id === c.id)?.acts : undefined;
    const acts = next ?? c.flags?.[MODULE_ID]?.state?.acts;
    return Boolean(acts && skipped.includes(acts)) || (skipDefeated && c.isDefeated);
  };
  const firstFrom = (round, from) => { const k = turns.findIndex((c, i) => i >= from && !skips(c, round)); return k < 0 ? null : { round, turn: k }; };
  const startOf = (round, from) => {
    const i = turns.findIndex((c) => c.id === planned(round)?.current);
    if (i >= 0 && !(skipDefeated && turns[i].isDefeated)) return { round, turn: i };
    return firstFrom(round, from) ?? { round, turn: from };
  };
  const to = proposal.round > combat.round ? startOf(proposal.round, proposal.turn)
    : firstFrom(proposal.round, proposal.turn) ?? startOf(proposal.round + 1, 0);
  return to.round === proposal.round && to.turn === proposal.turn ? null : to;
}

/**
 * Register the steering hooks (every client: whoever presses Next steps). @param {object} env
 * @param {{ruleRound:(combatId:string) => ({revision:number}|null)}} [applier] whose rule rounds are the module's own writes
 */
export function registerSteering(env, applier) {
  // Core worked out the step's world time for the turn it proposed, before the hooks [F13
  // `client/documents/combat.mjs` nextTurn/nextRound; D14 hookEvents.combatTurn/combatRound:
  // `updateOptions.worldTime.delta`, mutable]. A step moved elsewhere gets the delta of where it
  // lands from the same method [T13 13.345.1 and types 14.366 `Combat#getTimeDelta`].
  const retime = (combat, options, to) => {
    const time = options?.worldTime;
    if (!time || typeof time !== "object" || !Number.isFinite(time.delta)) return;
    options.worldTime = { ...time, delta: combat.getTimeDelta(combat.round, combat.turn ?? null, to.round, to.turn) };
  };
  const onStep = (combat, updateData, updateOptions) => {
    const rule = applier?.ruleRound(combat.id);
    if (rule && updateOptions) updateOptions[MODULE_ID] = { own: true, revision: rule.revision };
    if ((updateOptions?.direction ?? 1) < 0) return;
    // the tracker's own setting as the combat reads it [research §2: `combat.settings.skipDefeated`]
    const to = landing(combat, updateData, { skipped: sidecarRules(env).skipped_acts, skipDefeated: Boolean(combat.settings?.skipDefeated) });
    const at = to ?? updateData, resumed = resumes(combat, at.round, combat.turns[at.turn]?.id);
    // a step steered past a turn, or onto an interrupted turn, gets its events from the module, once each
    const cur = combat.combatant, events = { end: cur ? [cur.id, combat.turn] : null, round: combat.round, start: !resumed };
    if ((to || resumed) && updateOptions) Object.assign(updateOptions, { turnEvents: false, [MODULE_ID]: { ...updateOptions[MODULE_ID], events } });
    if (!to) return;
    Object.assign(updateData, { round: to.round, turn: to.turn });
    retime(combat, updateOptions, to);
  };
  // `turnEvents: false` silences core's `combatTurnChange` too [research §1.1]: a move of the module's announces it, on every client
  env.Hooks.on("updateCombat", async (combat, _changed, { [MODULE_ID]: { events, moved } = {} } = {}) => {
    if (events && env.game.user?.isActiveGM) await fireTurnEvents(env, combat, events).catch((e) => log.error("turn events failed", e));
    if ((events || moved) && combat.started) env.Hooks.callAll("combatTurnChange", combat, combat.previous, combat.current); });
  env.Hooks.on("combatStart", (combat, updateData) => onStep(combat, updateData, undefined));
  env.Hooks.on("combatTurn", onStep);
  env.Hooks.on("combatRound", onStep);
}
