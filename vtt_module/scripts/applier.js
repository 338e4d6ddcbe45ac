/**
 * Plans into Foundry (active GM only), through Foundry's own contracts:
 * - initiatives and plan states with `updateEmbeddedDocuments("Combatant", …)`: core keeps the current combatant current
 *   (`combatTurn`, no turn events) [research §1.2], `updateCombatant` fires on every client, an id that no longer exists
 *   is refused, never recreated [research §9];
 * - the pointer, only when a rule moved it, with one `Combat#update({turn})` (`changed.turn` exactly when a turn changes)
 *   whose turn events the module fires itself, once each (turns.js `fireTurnEvents`);
 * - a round begun by a rule with core's `Combat#nextRound()` (world time, round events, `combatRound`); steering
 *   (turns.js) lands it on the plan's current.
 * Every write carries `options["initiative-sidecar"] = {own: true, revision}` (not forwarded).
 *
 * No plan from the past: a plan answers a message, and the table may have moved on since (Next pressed again while the
 * sidecar was slow, a backlog replayed). So a combat's plan waits while the outbox holds a message about that combat the
 * sidecar has not answered; only the newest is kept and written once the last answer comes ({@link PlanApplier#release}).
 * A plan the sidecar has replaced by one this client never got (its `welcome` says a higher revision) is dropped.
 * @module applier
 */

import { MODULE_ID } from "./constants.js";
import { isStale, planUpdate } from "./plan.js";
import { deletion } from "./compat.js";
import { sidecarRules } from "./settings.js";
import { fireTurnEvents, resumes } from "./turns.js";
import * as log from "./log.js";

/** Applies the sidecar's plans to Foundry's combats (active GM only). */
export class PlanApplier {
  /**
   * @param {object} env Foundry globals @param {{awaiting?:(combatId:string) => boolean}} [hooks] `awaiting`: does the
   *   outbox still hold a message about this combat the sidecar has not answered? (none: plans are written at once)
   */
  constructor(env, hooks = {}) {
    this.env = env;
    this.hooks = hooks;
    this.applied = new Map();  // combat id → highest revision applied or being applied
    this.waiting = new Map();  // combat id → newest plan waiting (a write in flight, or answers due)
    this.running = new Map();  // combat id → the write loop in progress
    this.parked = new Map();   // combat id → {promise, resolve}: settled once nothing waits or is written
    this.theirs = new Map();   // combat id → the sidecar's revision at its last `welcome`
    this.last = new Map();     // combat id → the plan last applied
    this.rounds = new Map();   // combat id → the plan whose round is being begun with `nextRound()`
    this.writes = 0;
  }

  /** Is a round of this combat being begun for a rule? (its `combatRound` is our own write) */
  ruleRound(combatId) { return this.rounds.get(combatId) ?? null; }

  /** The revision applied for a combat (memory, else the combat's flag). */
  appliedRevision(combatId) {
    if (this.applied.has(combatId)) return this.applied.get(combatId);
    return this.env.game.combats.get(combatId)?.flags?.[MODULE_ID]?.plan?.revision;
  }

  /**
   * On `welcome`: the sidecar's own revision of each combat. A revision of ours above it is not
   * ours to keep (a sidecar with a new database numbers plans from 1 again): what counts as
   * applied comes down to it. A plan still waiting below it has been replaced ({@link drain}).
   * @param {{combat_id:string, revision:number}[]} combats
   */
  align(combats) {
    const theirs = new Map(combats.map((c) => [c.combat_id, c.revision]));
    for (const id of new Set([...this.applied.keys(), ...Array.from(this.env.game.combats ?? [], (c) => c.id)])) {
      const revision = theirs.get(id) ?? 0;
      this.theirs.set(id, revision);
      const mine = this.appliedRevision(id);
      const waiting = this.waiting.get(id);
      // a plan still waiting at or below their revision is not written yet: not taken for applied
      if (mine === undefined || mine > revision) this.applied.set(id, waiting && waiting.revision <= revision ? Math.min(revision, waiting.revision - 1) : revision);
      if (waiting && waiting.revision > revision && mine > revision) { this.waiting.delete(id); this.idle(id); }
    }
  }

  /**
   * Take a plan (from an ack or a broadcast): stale ones are ignored, one that comes while answers about its combat
   * are due waits for them. @returns {Promise<void>} once it (or a newer one) is written, or dropped as replaced
   */
  take(plan) {
    const id = plan.combat_id;
    const waiting = this.waiting.get(id);
    if (isStale(plan, this.appliedRevision(id)) || (waiting && waiting.revision >= plan.revision)) {
      return this.parked.get(id)?.promise ?? Promise.resolve();
    }
    this.waiting.set(id, plan);
    if (!this.parked.has(id)) {
      let resolve;
      const promise = new Promise((r) => { resolve = r; });
      this.parked.set(id, { promise, resolve });
    }
    const done = this.parked.get(id).promise;
    this.release(id);
    return done;
  }

  /**
   * Start writing the waiting plan of each combat (or of `combatId`) no answer is due for any more.
   * Called after every ack and `welcome`: an ack without a plan may be the last answer due.
   */
  release(combatId) {
    if (combatId === undefined) { for (const id of [...this.waiting.keys()]) this.release(id); return; }
    if (this.running.has(combatId) || !this.waiting.has(combatId) || this.hooks.awaiting?.(combatId)) return; // a loop takes the newest next
    this.running.set(combatId, this.drain(combatId).finally(() => {
      this.running.delete(combatId);
      this.release(combatId); // the last answer came while the loop was ending
      this.idle(combatId);
    }));
  }

  /** Settle `take`'s promise when nothing is left to do for the combat. */
  idle(combatId) {
    if (this.waiting.has(combatId) || this.running.has(combatId)) return;
    this.parked.get(combatId)?.resolve();
    this.parked.delete(combatId);
  }

  /** Apply waiting plans of one combat until none is left, or until answers about it are due again. */
  async drain(combatId) {
    while (this.waiting.has(combatId) && !this.hooks.awaiting?.(combatId)) {
      const plan = this.waiting.get(combatId);
      this.waiting.delete(combatId);
      if (isStale(plan, this.appliedRevision(combatId))) continue;
      const replaced = this.theirs.get(combatId);
      if (Number.isFinite(replaced) && plan.revision < replaced) {
        // the sidecar has a newer plan this client never got: this one would rewind the combat
        log.warn(`plan revision ${plan.revision} dropped: the sidecar is at revision ${replaced} of that combat`);
        continue;
      }
      this.applied.set(combatId, plan.revision);
      try { await this.write(plan); } catch (e) { log.error(`applying plan revision ${plan.revision} failed`, e); }
      await null; // a change that landed with this write reaches the outbox a microtask after its hook
    }
  }

  /** Write one plan: rows, then the pointer or a new round, then nothing else. */
  async write(plan) {
    const combat = this.env.game.combats.get(plan.combat_id);
    if (!combat) return;
    const { data } = planUpdate(combat.toObject(), plan, {
      del: (path, key) => deletion(this.env, path, key),
      skipped: sidecarRules(this.env).skipped_acts,
      currentId: combat.combatant?.id ?? null
    });
    this.last.set(plan.combat_id, plan);
    if (data) {
      const { combatants: rows, groups, round, current, ...flag } = data;
      const options = () => ({ [MODULE_ID]: { own: true, revision: plan.revision } });
      const present = (rows ?? []).filter((r) => combat.combatants.get(r._id));
      if (present.length) { await combat.updateEmbeddedDocuments("Combatant", present, options()); this.writes += 1; }
      if (groups) { await combat.updateEmbeddedDocuments("CombatantGroup", groups, options()); this.writes += 1; }
      const index = current ? combat.turns.findIndex((c) => c.id === current) : -1;
      let events = null;
      if (!round && index >= 0) {
        // its turn events come from the module, once each (turns.js): an interrupter placed above the current combatant
        // starts, the interrupted turn is `paused` (not ended), later resumes without a start (docs/module.md); pf2e
        // starts a turn only on a higher index: the pointer goes through "no one's turn" first
        const was = combat.combatant, paused = combat.flags?.[MODULE_ID]?.paused;
        const interrupts = Boolean(was) && index < combat.turn;
        events = { end: was && !interrupts ? [was.id, combat.turn] : null, round: combat.round, start: !resumes(combat, combat.round, current) };
        if (interrupts) flag[`flags.${MODULE_ID}.paused`] = { round: combat.round, ids: [...(paused?.round === combat.round ? paused.ids : []), was.id] };
        if (interrupts && this.env.game.system?.id === "pf2e") { await combat.update({ turn: null }, { ...options(), turnEvents: false }); this.writes += 1; }
        flag.turn = index;
      }
      const moved = events && { [MODULE_ID]: { ...options()[MODULE_ID], moved: true }, turnEvents: false };
      if (Object.keys(flag).length) { await combat.update(flag, moved || options()); this.writes += 1; }
      if (events && flag.turn === combat.turn && this.env.game.user?.isActiveGM) await fireTurnEvents(this.env, combat, events);
      if (round) await this.beginRound(combat, plan);
    }
  }

  /** A round begun by a rule: core's own Next Round, marked as ours (turns.js lands it). */
  async beginRound(combat, plan) {
    this.rounds.set(combat.id, plan);
    try { if (combat.round < plan.round) { await combat.nextRound(); this.writes += 1; } } finally { this.rounds.delete(combat.id); }
  }
}
