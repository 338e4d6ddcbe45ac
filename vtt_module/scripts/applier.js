/**
 * Plans into Foundry (active GM) and turn steering (every client).
 *
 * Applying: one `Combat#update` per plan carrying the initiatives, the pointer and the flags
 * (embedded combatant changes ride in the combat update's `combatants` array), marked
 * `options["initiative-sidecar"] = {own: true, revision}`. Plans older than one applied are
 * ignored; while a write is in flight only the newest waiting plan is applied next.
 *
 * Steering: `combatTurn`/`combatRound` (initiating client, before the update) and
 * `preUpdateCombat` move a forward step past turns whose `acts` the sidecar lists as skipped
 * (its `welcome`), and start a new round on `next_round.current`.
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
  /** @param {object} env Foundry globals @param {{onApplied?:(plan:object, old:object|null, writes:number) => void}} [hooks] */
  constructor(env, hooks = {}) {
    this.env = env;
    this.hooks = hooks;
    /** combat id → highest revision applied or being applied */
    this.applied = new Map();
    /** combat id → newest plan waiting */
    this.waiting = new Map();
    this.running = new Map();
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
   * counts as applied comes down to it, and its next plans are not taken for stale ones.
   * @param {{combat_id:string, revision:number}[]} combats
   */
  align(combats) {
    const theirs = new Map(combats.map((c) => [c.combat_id, c.revision]));
    const ids = new Set([...this.applied.keys(), ...Array.from(this.env.game.combats ?? [], (c) => c.id)]);
    for (const id of ids) {
      const revision = theirs.get(id) ?? 0;
      const mine = this.appliedRevision(id);
      if (mine === undefined || mine > revision) this.applied.set(id, revision);
      const waiting = this.waiting.get(id);
      if (waiting && waiting.revision > revision && mine > revision) this.waiting.delete(id);
    }
  }

  /**
   * Take a plan (from an ack or a broadcast). Stale ones are ignored.
   * @param {object} plan @returns {Promise<void>} resolves once it (or a newer one) is written
   */
  take(plan) {
    const waiting = this.waiting.get(plan.combat_id);
    if (isStale(plan, this.appliedRevision(plan.combat_id)) || (waiting && waiting.revision >= plan.revision)) {
      return this.running.get(plan.combat_id) ?? Promise.resolve();
    }
    this.waiting.set(plan.combat_id, plan);
    if (!this.running.has(plan.combat_id)) {
      const run = this.drain(plan.combat_id).finally(() => this.running.delete(plan.combat_id));
      this.running.set(plan.combat_id, run);
    }
    return this.running.get(plan.combat_id);
  }

  /** Apply waiting plans of one combat until none is left. */
  async drain(combatId) {
    while (this.waiting.has(combatId)) {
      const plan = this.waiting.get(combatId);
      this.waiting.delete(combatId);
      if (isStale(plan, this.appliedRevision(combatId))) continue;
      this.applied.set(combatId, plan.revision);
      try { await this.write(plan); } catch (e) { log.error(`applying plan revision ${plan.revision} failed`, e); }
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
  const onStep = (combat, updateData, updateOptions) => {
    if ((updateOptions?.direction ?? 1) < 0) return;
    const change = { round: updateData.round, turn: updateData.turn };
    if (steer(combat, change, false)) { updateData.round = change.round; updateData.turn = change.turn; }
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
