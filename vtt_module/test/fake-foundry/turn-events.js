// What happens after a turn change, on each client: core's turn events (active GM only), the
// order of `combatTurnChange` and `updateCombat`, pf2e's turn automation and dnd5e's
// start-of-turn recovery. Mixed into World (see world.js).
//
// Sources:
// - core: `Combat#_manageTurnEvents` runs inside `Combat#_onUpdate`, which the client backend
//   calls BEFORE `Hooks.callAll("updateCombat")` [F13 `client/data/client-backend.mjs`
//   `#handleUpdateDocuments`; `client/documents/combat.mjs` `_onUpdate`]. On the active GM it
//   first awaits `#triggerTurnEvents` and only then calls `combatTurnChange`, so there the hook
//   comes after `updateCombat`; every other client calls it at once, before `updateCombat`
//   [issue 25, correction 4; F13 combat.mjs `_manageTurnEvents`].
// - `#triggerTurnEvents` walks every turn interval crossed, End Turn → End Round → Start Round →
//   Start Turn, with `context = {round, turn, skipped}`; a passed-over combatant gets its End
//   and Start with `skipped: true` [research §1.1; T13 combat.d.mts `_onStartTurn(combatant,
//   context)` …; D14 keeps `{round, turn, skipped}`, research §10]. Each event goes through a
//   private wrapper that awaits the protected method (`_onStartTurn` …; the base ones do
//   nothing), then, for a start, `_clearMovementHistoryOnStartTurn(combatant, context)` when the
//   combatant has a token, then triggers the Region event on every region of the token
//   (`region._triggerEvent(name, {token, combatant, combat, ...context})`, not awaited):
//   `tokenTurnStart`/`tokenTurnEnd` for the combatant, `tokenRoundStart`/`tokenRoundEnd` for
//   every combatant [issue-25 review of F13.350 `client/documents/combat.mjs` `#onStartTurn`,
//   `#onEndTurn`, `#onStartRound`, `#onEndRound`, `#triggerRegionEvents`; D14 CONST.REGION_EVENTS].
//   So calling `_onStartTurn` itself reaches the system's override only, no region.
// - pf2e `EncounterPF2e#_onUpdate` [GitHub foundryvtt/pf2e `src/module/encounter/document.ts`]:
//   only when the combat has started and `changed.round` or `changed.turn` is a number; a turn
//   is "next" when `changed.turn > previous.turn` (or previous.turn is null), a round when
//   `changed.round > previous.round`; then the previous combatant's `endTurn` (unless its
//   `roundOfLastTurnEnd` is the previous round) and the current one's `startTurn` (unless its
//   `roundOfLastTurn` is this round), on the actor's primary updater's client.
// - dnd5e `Combat5e#_onStartTurn(combatant)` / `_onEndTurn(combatant)` recover uses
//   (`turnStart` / `turnEnd`) without looking at `context.skipped`; `_recoverUses` leaves defeated
//   combatants out [GitHub foundryvtt/dnd5e `module/documents/combat.mjs`].
//
// - Within a round core fires turn events when `previous.turn < current.turn` (a null previous
//   turn compares as 0), walking from `previous.turn + 1` to the current index, or when the
//   index is the same and the combatant is not; a backward move fires none [issue-25 review of
//   F13.350 combat.mjs `#triggerTurnEvents`]. So a move from a null turn to index 0 fires none,
//   and to index n ≥ 2 passes over indices 1..n−1 (`skipped: true`). `previous` is recorded at
//   every turn or round update, `turnEvents: false` included.
//
// Decisions (the sources are silent): every token stands in one region of its own
// (`token.regions`), whose `_triggerEvent` records into `world.regionEvents`; the double has no `primaryUpdater`, so pf2e's automation
// runs on the active GM's client; pf2e's `roundOfLastTurn(End)` flags are kept in
// `world.pf2eTurnFlags` instead of being written (a write would add updates to every test).

import { deepClone } from "./utils.js";

export class TurnEvents {
  /**
   * Another module or a macro writes the pointer itself: a plain `combat.update({turn})`, no
   * `direction`, no turn hook (only core's nextTurn/previousTurn/nextRound/previousRound carry
   * them [research §1.1]) [issue 25 correction 8].
   */
  otherModuleSetsTurn(client, combatId, turn) {
    return client.game.combats.get(combatId).update({ turn });
  }

  /** The client's part of a combat update: hooks and events in Foundry's order (see above). */
  afterCombatUpdate(c, d, sent, options, prior, userId) {
    const activeGM = c.game.user.isActiveGM;
    const opts = { ...deepClone(options), action: "update", modifiedTime: 2, diff: options.diff ?? true, recursive: true, render: true, parent: null };
    d._onUpdate?.(deepClone(sent), opts, userId);
    if (!activeGM) this.turnChange(c, d, prior, options);
    c.Hooks.callAll("updateCombat", d, deepClone(sent), opts, userId);
    if (activeGM) this.turnChange(c, d, prior, options);
  }

  /**
   * `combatTurnChange(combat, prior, current)` when the combat has started, turn events are on
   * and the combatant or round changed [§1.1]; on the active GM after the turn events.
   */
  turnChange(c, d, prior, options) {
    const now = d.current;
    const moved = prior.combatantId !== now.combatantId || prior.round !== now.round;
    if (!moved || !d.started || options.turnEvents === false) return;
    if (c.game.user.isActiveGM) this.triggerTurnEvents(d, prior, now);
    c.Hooks.callAll("combatTurnChange", d, prior, now);
  }

  /**
   * Core's turn events between two states (see the sources above). Within a round, events fire
   * only when the turn index grows, or stays while the combatant changes. A prior null turn
   * counts as index 0 in that comparison (core compares with `<`), so from "no one's turn" the
   * walk starts at index 1: index 0 gets no Start Turn, indices 1..n−1 are passed over (skipped).
   */
  triggerTurnEvents(d, prior, now) {
    const turns = d.turns;
    const r0 = prior.round ?? 0, r1 = now.round ?? 0;
    const t0 = prior.turn, t1 = now.turn;
    if (r1 < r0) return;
    if (r1 === r0) {
      const from = t0 ?? 0;
      const forward = Number.isInteger(t1) && from < t1, same = t0 === t1 && Number.isInteger(t1);
      if (!forward && !same) return;
      const before = d.combatants.get(prior.combatantId);
      if (before) this.endTurn(d, before, { round: r0, turn: t0, skipped: false });
      for (let k = same ? t1 : from + 1; k <= t1; k++) {
        this.startTurn(d, turns[k], { round: r1, turn: k, skipped: k !== t1 });
        if (k !== t1) this.endTurn(d, turns[k], { round: r1, turn: k, skipped: true });
      }
      return;
    }
    if (Number.isInteger(t0)) for (let k = t0; k < turns.length; k++) this.endTurn(d, turns[k], { round: r0, turn: k, skipped: k !== t0 });
    d._onEndRound({ round: r0, turn: t0 ?? null, skipped: false });
    this.regionEvent(d, "tokenRoundEnd", { round: r0, skipped: false }, d.combatants);
    d._onStartRound({ round: r1, turn: t1 ?? null, skipped: false });
    this.regionEvent(d, "tokenRoundStart", { round: r1, skipped: false }, d.combatants);
    if (Number.isInteger(t1)) for (let k = 0; k <= t1; k++) this.startTurn(d, turns[k], { round: r1, turn: k, skipped: k !== t1 });
  }

  /** Core's private wrappers (see the sources): the protected method, then the token's regions. */
  startTurn(d, combatant, context) {
    d._onStartTurn(combatant, context);
    if (combatant.token) d._clearMovementHistoryOnStartTurn(combatant, context);
    this.regionEvent(d, "tokenTurnStart", context, [combatant]);
  }
  endTurn(d, combatant, context) {
    d._onEndTurn(combatant, context);
    this.regionEvent(d, "tokenTurnEnd", context, [combatant]);
  }
  regionEvent(d, name, data, combatants) {
    for (const combatant of combatants) for (const region of combatant.token?.regions ?? []) region._triggerEvent(name, { token: combatant.token, combatant, combat: d, ...data });
  }
}

/** The one region each token stands in (a decision, see above): its events go to `world.regionEvents`. */
export function tokenRegion(world) {
  return { _triggerEvent: async (event, { combatant, token: _t, combat: _c, ...context }) => { world.regionEvents.push({ event, combatantId: combatant.id, ...context }); } };
}

/**
 * Core's protected turn-event methods: each records itself in `world.turnEvents` (what a system's
 * override sees); `_clearMovementHistoryOnStartTurn` records the combatant in `world.movementCleared`.
 */
export function turnEventMethods(world) {
  const note = (event, combatant, context) => world.turnEvents.push({ event, combatantId: combatant?.id ?? null, ...context });
  return {
    _clearMovementHistoryOnStartTurn(combatant) { world.movementCleared.push(combatant.id); },
    _onStartTurn(combatant, context) { note("startTurn", combatant, context); },
    _onEndTurn(combatant, context) { note("endTurn", combatant, context); },
    _onStartRound(context) { note("startRound", null, context); },
    _onEndRound(context) { note("endRound", null, context); }
  };
}

/** dnd5e's recovery on turn events, `skipped` ignored, defeated combatants left out (see the sources). */
export function dnd5eCombat(Base, world) {
  return class Combat5e extends Base {
    expandedGroups = new Set();
    /** Combatants by grouping key, groups of two or more [dnd5e `Combat5e#createGroups`]. */
    createGroups() {
      const groups = new Map();
      for (const c of this.combatants) {
        const key = c.getGroupingKey();
        if (key === null) continue;
        if (!groups.has(key)) groups.set(key, { combatants: [], expanded: this.expandedGroups.has(key) });
        groups.get(key).combatants.push(c);
      }
      for (const [key, g] of groups) if (g.combatants.length <= 1) groups.delete(key);
      return groups;
    }
    _onStartTurn(combatant, context) {
      super._onStartTurn(combatant, context);
      if (combatant && !combatant.isDefeated) world.recoveries.push({ period: "turnStart", combatantId: combatant.id, round: context.round });
    }
    _onEndTurn(combatant, context) {
      super._onEndTurn(combatant, context);
      if (combatant && !combatant.isDefeated) world.recoveries.push({ period: "turnEnd", combatantId: combatant.id, round: context.round });
    }
  };
}

/** pf2e's `_onUpdate` turn automation (see the sources), on the active GM's client. */
export function pf2eTurnAutomation(Base, client) {
  const world = client.world;
  return class extends Base {
    _onUpdate(changed, options, userId) {
      super._onUpdate?.(changed, options, userId);
      if (!this.started || !client.game.user.isActiveGM) return;
      const previous = this.previous ?? { round: null, turn: null, combatantId: null };
      const isRoundChange = typeof changed.round === "number", isTurnChange = typeof changed.turn === "number";
      const isNextRound = isRoundChange && (previous.round === null || changed.round > previous.round);
      const isNextTurn = isTurnChange && (previous.turn === null || changed.turn > previous.turn);
      if (!(isNextRound || isNextTurn)) return;
      const flags = (id) => { if (!world.pf2eTurnFlags.has(id)) world.pf2eTurnFlags.set(id, {}); return world.pf2eTurnFlags.get(id); };
      const before = previous.combatantId && this.combatants.get(previous.combatantId);
      if (before && typeof previous.round === "number" && flags(before.id).roundOfLastTurnEnd !== previous.round) {
        flags(before.id).roundOfLastTurnEnd = previous.round;
        world.pf2eTurns.push({ kind: "endTurn", combatantId: before.id, round: previous.round });
      }
      const now = this.combatant;
      if (now && flags(now.id).roundOfLastTurn !== this.round) {
        flags(now.id).roundOfLastTurn = this.round;
        world.pf2eTurns.push({ kind: "startTurn", combatantId: now.id, round: this.round });
      }
    }
  };
}
