/**
 * Plans into Foundry (active GM only), through Foundry's own contracts:
 * - the combatants' initiatives and plan states with `updateEmbeddedDocuments("Combatant", …)`:
 *   core keeps the current combatant current through the write's `combatTurn` without turn
 *   events [research §1.2], `updateCombatant` fires on every client (systems and modules that
 *   watch initiative see each change), and an id that no longer exists is refused instead of
 *   recreated [research §9], so a combatant deleted meanwhile never comes back;
 * - the pointer, only when a rule moved it (the plan's current is not Foundry's), with one
 *   `Combat#update({turn})`: systems see a turn change (`changed.turn`) exactly when one happens;
 * - a round begun by a rule with core's own `Combat#nextRound()`: world time, round events and
 *   `combatRound` as for the Next Round button; steering (turns.js) lands it on the plan's current.
 * Every write carries `options["initiative-sidecar"] = {own: true, revision}` (not forwarded).
 *
 * No plan from the past: a plan answers a message, and the combat may have moved on since
 * (the GM pressed Next again while the sidecar was slow, or a backlog is being replayed after
 * the sidecar was away). Written over the combat as it is now, it would move the pointer back
 * to a turn already played. So a combat's plan waits while the outbox still holds a message
 * about that combat the sidecar has not answered: only the newest plan received is kept, and
 * it is written once the last of those messages is answered ({@link PlanApplier#release}). A
 * plan the sidecar has already replaced by one this client never got (its `welcome` says a
 * higher revision) is dropped: the combat keeps Foundry's state until the next message about
 * it brings the current plan.
 * @module applier
 */

import { MODULE_ID } from "./constants.js";
import { isStale, planUpdate } from "./plan.js";
import { deletion } from "./compat.js";
import { sidecarRules } from "./settings.js";
import * as log from "./log.js";

/** Applies the sidecar's plans to Foundry's combats (active GM only). */
export class PlanApplier {
  /**
   * @param {object} env Foundry globals
   * @param {{onApplied?:(plan:object, old:object|null, writes:number) => void,
   *   awaiting?:(combatId:string) => boolean}} [hooks] `awaiting`: does the outbox still hold a
   *   message about this combat the sidecar has not answered? (none: plans are written at once)
   */
  constructor(env, hooks = {}) {
    this.env = env;
    this.hooks = hooks;
    /** combat id → highest revision applied or being applied */
    this.applied = new Map();
    /** combat id → newest plan waiting (for a write in flight, or for answers still due) */
    this.waiting = new Map();
    this.running = new Map();
    /** combat id → the promise `take` returns: settled once nothing waits or is written for the combat */
    this.parked = new Map();
    /** combat id → the sidecar's revision at its last `welcome` */
    this.theirs = new Map();
    /** combat id → the plan last applied (for announcements) */
    this.last = new Map();
    this.writes = 0;
    /** combat id → the plan whose round the applier is beginning with `nextRound()` */
    this.rounds = new Map();
  }

  /** Is a round of this combat being begun for a rule? (its `combatRound` is our own write) */
  ruleRound(combatId) { return this.rounds.get(combatId) ?? null; }

  /** The revision applied for a combat (memory, else the combat's flag). */
  appliedRevision(combatId) {
    if (this.applied.has(combatId)) return this.applied.get(combatId);
    const combat = this.env.game.combats.get(combatId);
    return combat?.flags?.[MODULE_ID]?.plan?.revision;
  }

  /**
   * On `welcome`: the sidecar's own revision of each combat. A plan revision above it is
   * not ours to keep (a sidecar with a new database numbers plans from 1 again), so what
   * counts as applied comes down to it, and its next plans are not taken for stale ones. A plan
   * still waiting below it is one the sidecar has replaced ({@link drain} drops it).
   * @param {{combat_id:string, revision:number}[]} combats
   */
  align(combats) {
    const theirs = new Map(combats.map((c) => [c.combat_id, c.revision]));
    const ids = new Set([...this.applied.keys(), ...Array.from(this.env.game.combats ?? [], (c) => c.id)]);
    for (const id of ids) {
      const revision = theirs.get(id) ?? 0;
      this.theirs.set(id, revision);
      const mine = this.appliedRevision(id);
      const waiting = this.waiting.get(id);
      if (mine === undefined || mine > revision) {
        // a plan still waiting at or below their revision is not written yet: not taken for applied
        this.applied.set(id, waiting && waiting.revision <= revision ? Math.min(revision, waiting.revision - 1) : revision);
      }
      if (waiting && waiting.revision > revision && mine > revision) { this.waiting.delete(id); this.idle(id); }
    }
  }

  /** Does the outbox still hold a message about this combat the sidecar has not answered? */
  awaiting(combatId) { return Boolean(this.hooks.awaiting?.(combatId)); }

  /**
   * Take a plan (from an ack or a broadcast). Stale ones are ignored; one that comes while
   * answers about its combat are still due waits for them (see the module's comment).
   * @param {object} plan @returns {Promise<void>} resolves once it (or a newer one) is written,
   *   or dropped as replaced
   */
  take(plan) {
    const id = plan.combat_id;
    const waiting = this.waiting.get(id);
    if (isStale(plan, this.appliedRevision(id)) || (waiting && waiting.revision >= plan.revision)) {
      return this.parked.get(id)?.promise ?? Promise.resolve();
    }
    this.waiting.set(id, plan);
    const done = this.park(id);
    this.release(id);
    return done;
  }

  /**
   * Start writing the waiting plan of each combat (or of one) no answer is due for any more.
   * Called after every ack and every `welcome`: an ack may carry no plan (the plan did not
   * change), yet be the last answer a waiting plan needed.
   * @param {string} [combatId]
   */
  release(combatId) {
    if (combatId === undefined) {
      for (const id of [...this.waiting.keys()]) this.release(id);
      return;
    }
    // a write in flight: its loop takes the newest plan next
    if (this.running.has(combatId) || !this.waiting.has(combatId) || this.awaiting(combatId)) return;
    const run = this.drain(combatId).finally(() => {
      this.running.delete(combatId);
      this.release(combatId); // the last answer came while the loop was ending
      this.idle(combatId);
    });
    this.running.set(combatId, run);
  }

  /** The promise that settles once nothing waits or is written for the combat. */
  park(combatId) {
    let parked = this.parked.get(combatId);
    if (!parked) {
      let resolve;
      const promise = new Promise((r) => { resolve = r; });
      parked = { promise, resolve };
      this.parked.set(combatId, parked);
    }
    return parked.promise;
  }

  /** Settle {@link park}'s promise when nothing is left to do for the combat. */
  idle(combatId) {
    if (this.waiting.has(combatId) || this.running.has(combatId)) return;
    this.parked.get(combatId)?.resolve();
    this.parked.delete(combatId);
  }

  /** Apply waiting plans of one combat until none is left, or until answers about it are due again. */
  async drain(combatId) {
    while (this.waiting.has(combatId) && !this.awaiting(combatId)) {
      const plan = this.waiting.get(combatId);
      this.waiting.delete(combatId);
      if (isStale(plan, this.appliedRevision(combatId))) continue;
      const replaced = this.theirs.get(combatId);
      if (Number.isFinite(replaced) && plan.revision < replaced) {
        // the sidecar has a newer plan this client never got (an ack lost with the connection):
        // this one would rewind the combat; the next message about it brings the current plan
        log.warn(`plan revision ${plan.revision} dropped: the sidecar is at revision ${replaced} of that combat`);
        continue;
      }
      this.applied.set(combatId, plan.revision);
      try { await this.write(plan); } catch (e) { log.error(`applying plan revision ${plan.revision} failed`, e); }
      // a change that landed with this write reaches the outbox a microtask after its hook
      // (the forwarder's queue): let it, before asking whether answers are due
      await null;
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
    const old = this.last.get(plan.combat_id) ?? null;
    this.last.set(plan.combat_id, plan);
    const before = this.writes;
    if (data) {
      const { combatants: rows, round, current, ...flag } = data;
      const options = () => ({ [MODULE_ID]: { own: true, revision: plan.revision } });
      const present = (rows ?? []).filter((r) => combat.combatants.get(r._id));
      if (present.length) { await combat.updateEmbeddedDocuments("Combatant", present, options()); this.writes += 1; }
      const index = current ? combat.turns.findIndex((c) => c.id === current) : -1;
      if (!round && index >= 0) {
        // an interrupter placed at or above the current combatant's place: a turn change to a
        // lower index is no turn start for pf2e (`changed.turn > previous.turn`), so the pointer
        // goes through "no one's turn" first, without turn events (docs/module.md)
        if (Number.isInteger(combat.turn) && index <= combat.turn) { await combat.update({ turn: null }, { ...options(), turnEvents: false }); this.writes += 1; }
        flag.turn = index;
      }
      if (Object.keys(flag).length) { await combat.update(flag, options()); this.writes += 1; }
      if (round) await this.beginRound(combat, plan);
    }
    this.hooks.onApplied?.(plan, old, this.writes - before);
  }

  /** A round begun by a rule: core's own Next Round, marked as ours (turns.js lands it). */
  async beginRound(combat, plan) {
    this.rounds.set(combat.id, plan);
    try {
      if (combat.round < plan.round) { await combat.nextRound(); this.writes += 1; }
    } finally {
      this.rounds.delete(combat.id);
    }
  }
}
