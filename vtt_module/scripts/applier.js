/**
 * Plans into Foundry (active GM) and turn steering (every client).
 *
 * Applying: one `Combat#update` per plan carrying the initiatives, the pointer and the flags
 * (embedded combatant changes ride in the combat update's `combatants` array), marked
 * `options["initiative-sidecar"] = {own: true, revision}`. Plans older than one applied are
 * ignored; while a write is in flight only the newest waiting plan is applied next.
 *
 * No plan from the past: a plan answers a message, and the combat may have moved on since
 * (the GM pressed Next again while the sidecar was slow, or a backlog is being replayed after
 * the sidecar was away). Written over the combat as it is now, it would move the pointer back
 * to a turn already played, with its turn events. So a combat's plan waits while the outbox
 * still holds a message about that combat the sidecar has not answered (queued or in flight):
 * only the newest plan received is kept, and it is written once the last of those messages
 * is answered, whether or not that answer carries a plan ({@link PlanApplier#release}). A
 * plan the sidecar has already replaced by one this client never got (its `welcome` says a
 * higher revision, and no message is left to bring it) is dropped: the combat keeps Foundry's
 * state, which the sidecar saw, until the next message about it brings its current plan.
 *
 * Steering: `combatTurn`/`combatRound` (initiating client, before the update) and
 * `preUpdateCombat` move a forward step past turns whose `acts` the sidecar lists as skipped
 * (its `welcome`), and start a new round on `next_round.current`. A step moved elsewhere gets
 * the world time of where it lands: Foundry works out `worldTime.delta` for the turn it
 * proposed before calling the hooks, so the delta is worked out again with
 * `Combat#getTimeDelta` (a Next Turn turned into a new round advances a round's time).
 *
 * No ghost combatants: a combat update whose row names a combatant that no longer exists
 * creates a new one [F13 `common/data/fields.mjs` EmbeddedCollectionField]. Rows name only
 * combatants present when the update is built; one deleted while the update is in flight
 * (by another client) and recreated by it is deleted again at once. The same holds for the
 * new round's rows that steering adds to a GM's own step (`preUpdateCombat`): that write is
 * watched from the pre-hook until its `updateCombat` comes back to this client.
 * @module applier
 */

import { MODULE_ID } from "./constants.js";
import { isStale, planUpdate, steerTurn } from "./plan.js";
import { sorterFor } from "./turns.js";
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
    /** updates in flight: which combatant rows they carry, which of those got deleted */
    this.inflight = new Set();
  }

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

  /** Write one plan in a single update. */
  async write(plan) {
    const combat = this.env.game.combats.get(plan.combat_id);
    if (!combat) return;
    const { data } = planUpdate(combat.toObject(), plan, {
      sortAfter: sorterFor(combat),
      del: (path, key) => deletion(this.env, path, key),
      skipped: sidecarRules(this.env).skipped_acts
    });
    const old = this.last.get(plan.combat_id) ?? null;
    this.last.set(plan.combat_id, plan);
    let writes = 0;
    if (data) {
      const before = combat.combatant?.id ?? null;
      const options = { [MODULE_ID]: { own: true, revision: plan.revision } };
      if (before === plan.current || !("turn" in data || "round" in data)) options.turnEvents = false;
      const rows = new Set((data.combatants ?? []).map((r) => r._id));
      const watch = { combatId: combat.id, rows, deleted: new Set() };
      this.inflight.add(watch);
      try {
        await combat.update(data, options);
      } finally {
        this.inflight.delete(watch);
      }
      writes = 1;
      this.writes += 1;
      await this.buryGhosts(watch);
    }
    this.hooks.onApplied?.(plan, old, writes);
  }

  /** A combatant was deleted: note it if an update in flight names it. @param {object} combatant */
  deleted(combatant) {
    for (const w of this.inflight) {
      if (w.combatId === combatant.parent?.id && w.rows.has(combatant.id)) w.deleted.add(combatant.id);
    }
  }

  /**
   * Watch a step this client is sending with rows steering added (`preUpdateCombat`): its
   * deletions are noted like those of our own writes until {@link stepDone}.
   * @param {string} combatId @param {Iterable<string>} rows @param {number} round the step's new round
   */
  watchStep(combatId, rows, round) {
    this.dropStaleSteps();
    this.inflight.add({ combatId, rows: new Set(rows), deleted: new Set(), step: { round, at: performance.now() } });
  }

  /**
   * An `updateCombat` of this client came back: if it is the step (it carries the step's new
   * round), bury what it recreated. Another write of ours (a plan) does not close the watch.
   * @param {string} combatId @param {object} changed
   */
  async stepDone(combatId, changed) {
    for (const w of [...this.inflight]) {
      if (!w.step || w.combatId !== combatId || changed?.round !== w.step.round) continue;
      this.inflight.delete(w);
      await this.buryGhosts(w);
    }
  }

  /**
   * A step refused or cancelled never comes back: its watch ends after a minute (on the
   * monotonic clock, which a wall clock set back or forward does not move).
   */
  dropStaleSteps(now = performance.now()) {
    for (const w of [...this.inflight]) if (w.step && now - w.step.at > 60000) this.inflight.delete(w);
  }

  /** Delete the combatants our update recreated after someone deleted them. */
  async buryGhosts(watch) {
    const combat = this.env.game.combats.get(watch.combatId);
    const ghosts = [...watch.deleted].filter((id) => combat?.combatants.get(id));
    if (!ghosts.length) return;
    log.warn(`a plan named ${ghosts.length} combatant(s) deleted meanwhile; removing what the write recreated`);
    await combat.deleteEmbeddedDocuments("Combatant", ghosts, { [MODULE_ID]: { own: true, ghost: true } });
  }
}

/**
 * Register turn steering (every client).
 * @param {object} env Foundry globals
 * @param {PlanApplier|null} [applier] watches the new round rows a step carries (no ghosts)
 */
export function registerSteering(env, applier = null) {
  const skipDefeated = () => Boolean(env.game.settings.get("core", "combatTrackerConfig")?.skipDefeated);
  const steer = (combat, change, canWriteOthers) => {
    const target = steerTurn(combat.toObject(), change, {
      skipDefeated: skipDefeated(), skipped: sidecarRules(env).skipped_acts, sortAfter: sorterFor(combat)
    });
    if (!target) return null;
    change.round = target.round;
    if (target.initiatives && canWriteOthers) {
      change.turn = target.turn;
      return target;
    }
    change.turn = target.turnAsIs ?? target.turn;
    return { ...target, initiatives: null };
  };
  // Foundry worked out the step's world time for the turn it proposed, before the hooks
  // [F13 `client/documents/combat.mjs` nextTurn/nextRound: `worldTime: {delta: getTimeDelta(…)}`;
  // D14 hookEvents.combatTurn/combatRound: `updateOptions.worldTime.delta`, mutable]; the server
  // advances the clock by it [F13 `dist/database/documents/combat.mjs` `_onUpdateOperation`].
  // A steered step gets the delta of where it lands, from the same method (T13 13.345.1 and
  // types 14.366 `Combat#getTimeDelta(fromRound, fromTurn, toRound, toTurn)`; D14 Combat).
  // An update that carries no `worldTime` (a plain `combat.update({turn})`) is left without.
  const retime = (combat, options, to) => {
    const time = options?.worldTime;
    if (!time || typeof time !== "object" || !Number.isFinite(time.delta) || typeof combat.getTimeDelta !== "function") return;
    options.worldTime = { ...time, delta: combat.getTimeDelta(combat.round, combat.turn ?? null, to.round, to.turn ?? null) };
  };
  const onStep = (combat, updateData, updateOptions) => {
    if ((updateOptions?.direction ?? 1) < 0) return;
    const change = { round: updateData.round, turn: updateData.turn };
    if (steer(combat, change, false)) {
      updateData.round = change.round;
      updateData.turn = change.turn;
      retime(combat, updateOptions, change);
    }
  };
  env.Hooks.on("combatTurn", onStep);
  env.Hooks.on("combatRound", onStep);
  env.Hooks.on("preUpdateCombat", (combat, changed, options) => {
    if (options?.[MODULE_ID]?.own || (options?.direction ?? 1) < 0) return;
    if (!("turn" in changed) && !("round" in changed)) return;
    const change = { round: changed.round ?? combat.round, turn: changed.turn ?? combat.turn };
    const target = steer(combat, change, Boolean(env.game.user?.isGM));
    if (!target) return;
    changed.round = change.round;
    changed.turn = change.turn;
    retime(combat, options, change);
    if (target.initiatives) {
      // The new round's initiatives ride in the same update (a GM may write every combatant).
      const rows = new Map((changed.combatants ?? []).map((c) => [c._id, c]));
      for (const { _id, initiative } of target.initiatives) rows.set(_id, { ...rows.get(_id), _id, initiative });
      changed.combatants = [...rows.values()];
      applier?.watchStep(combat.id, rows.keys(), changed.round);
    }
  });
  env.Hooks.on("updateCombat", (combat, changed, _options, userId) => {
    if (applier && userId === env.game.user?.id) applier.stepDone(combat.id, changed);
  });
}
