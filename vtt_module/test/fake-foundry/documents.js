// Client-side Combat and Combatant documents of one fake client. Each client holds its own
// copy of the source data (as Foundry clients do); writes go through the world ("server"),
// which sends every client the difference only.

import { deepClone, getProperty, mergeInto } from "./utils.js";
import { sortFor, coreSort } from "./sorting.js";
import { pf2eEncounter } from "./pf2e.js";
import { turnEventMethods, dnd5eCombat, pf2eTurnAutomation } from "./turn-events.js";

export function makeDocumentClasses(client) {
  const world = client.world;
  const v14 = world.generation >= 14;

  class Collection extends Map {
    get contents() { return [...this.values()]; }
    filter(fn) { return this.contents.filter(fn); }
    map(fn) { return this.contents.map(fn); }
    find(fn) { return this.contents.find(fn); }
    some(fn) { return this.contents.some(fn); }
    reduce(fn, init) { return this.contents.reduce(fn, init); }
    [Symbol.iterator]() { return this.values(); }
  }

  class Combatant {
    constructor(source, parent) { this._source = source; this.parent = parent; }
    static get documentName() { return "Combatant"; }
    get documentName() { return "Combatant"; }
    get id() { return this._source._id; }
    get _id() { return this._source._id; }
    get combat() { return this.parent; }
    /**
     * Prepared: a member of a CombatantGroup whose initiative is a number shows and sorts by the
     * group's [research §2; F13 `client/documents/combatant.mjs` `_prepareGroup`].
     */
    get initiative() {
      const group = this._source.group ? this.parent?._source.groups?.find((g) => g._id === this._source.group) : null;
      return Number.isFinite(group?.initiative) ? group.initiative : this._source.initiative;
    }
    get hidden() { return this._source.hidden; }
    get defeated() { return this._source.defeated; }
    get flags() { return this._source.flags; }
    get system() { return this._source.system; }
    get actorId() { return this._source.actorId; }
    get tokenId() { return this._source.tokenId; }
    get sceneId() { return this._source.sceneId; }
    get group() { return this._source.group ?? null; }
    /** v14 only: the round the combatant joined; 1 when created before the start [D14 CombatantData.roundJoined]. */
    get roundJoined() { return v14 ? this._source.roundJoined : undefined; }
    get actor() { return client.game.actors.get(this._source.actorId) ?? null; }
    get token() { return client.tokenDoc(this._source.tokenId) ?? null; }
    /** Prepared name: `name ||= token.name || actor.name` [research §2]. */
    get name() { return this._source.name || this.token?.name || this.actor?.name; }
    get img() { return this._source.img || null; }
    get isOwner() { return client.user.isGM || Boolean(this.actor?.testUserPermission(client.user, "OWNER")); }
    get isNPC() { return !this.actor || !this.actor.hasPlayerOwner; }
    /** The field or the actor's defeated status [F13 `client/documents/combatant.mjs` `isDefeated`; research §2]. */
    get isDefeated() { return Boolean(this._source.defeated) || Boolean(this.actor?.statuses?.has(client.CONFIG.specialStatusEffects.DEFEATED)); }
    get visible() { return this.isOwner || !this.hidden; }
    get players() { return client.game.users.filter((u) => !u.isGM && this.actor?.testUserPermission(u, "OWNER")); }
    getFlag(scope, key) { return getProperty(this._source.flags?.[scope] ?? {}, key); }
    setFlag(scope, key, value) { return this.update({ [`flags.${scope}.${key}`]: value }); }
    unsetFlag(scope, key) {
      const parts = `${scope}.${key}`.split(".");
      const last = parts.pop();
      return this.update(v14 ? { [`flags.${[...parts, last].join(".")}`]: client.env._del } : { [`flags.${parts.join(".")}.-=${last}`]: null });
    }
    toObject() { return deepClone(this._source); }
    /** Core: `String(CONFIG.Combat.initiative.formula || game.system.initiative)` [research §1.3]. */
    _getInitiativeFormula() { return String(client.CONFIG.Combat.initiative.formula || world.initiativeFormula); }
    /**
     * Core: `formula || this._getInitiativeFormula()` with the actor's roll data [research §1.3].
     * dnd5e `Combatant5e.getInitiativeRoll(formula)`: without an actor `formula ?? "1d20"`;
     * with one, the actor's own initiative roll, IGNORING the formula [GitHub foundryvtt/dnd5e
     * release-5.3.3 `module/documents/combatant.mjs` L74-77; research §9, §10].
     */
    getInitiativeRoll(formula) {
      if (world.systemRolls !== "dnd5e") return new client.Roll(formula || this._getInitiativeFormula(), this.actor?.getRollData() ?? {});
      if (!this.actor) return new client.Roll(formula ?? "1d20", {});
      return new client.Roll(this._dnd5eActorFormula(), this.actor.getRollData());
    }
    /**
     * dnd5e `Actor5e.getInitiativeRollConfig` in miniature [dnd5e 5.3.3 `module/documents/actor/
     * actor.mjs` L1794-1830; settings.mjs]: the world's formula for the actor; world setting
     * `dnd5e.initiativeDexTiebreaker` appends the ability score / 100; `dnd5e.initiativeScore`
     * "all" (or "npcs" for a GM rolling an NPC) makes it the fixed score
     * (`system.attributes.init.score`, else 10 + the dex modifier in this double).
     */
    _dnd5eActorFormula() {
      const sys = this.actor.system;
      const scoreMode = client.game.settings.get("dnd5e", "initiativeScore");
      if (scoreMode === "all" || (scoreMode === "npcs" && client.user.isGM && this.isNPC)) return String(sys.attributes?.init?.score ?? 10 + (sys.abilities?.dex?.mod ?? 0));
      let f = this._getInitiativeFormula();
      const dex = sys.abilities?.dex?.value;
      if (client.game.settings.get("dnd5e", "initiativeDexTiebreaker") && Number.isFinite(dex)) f += ` + ${dex / 100}`;
      return f;
    }
    async rollInitiative(formula) { return this.parent.rollInitiative([this.id], { formula }); }
    update(data, options = {}) { return world.updateCombatants(client, this.parent.id, [{ _id: this.id, ...data }], options).then((r) => r[0]); }
    delete(options = {}) { return world.deleteCombatants(client, this.parent.id, [this.id], options).then((r) => r[0]); }
  }

  class Combat {
    constructor(source) {
      this._source = source;
      this.combatants = new Collection();
      /** The cached, sorted turns; refreshed only by `setupTurns()` [research §3]. */
      this.turns = [];
      this.current = { round: null, turn: null, combatantId: null, tokenId: null };
      this.previous = undefined;
      this._rebuild();
      this.setupTurns(); // prepareDerivedData: set up turns when there are none yet [research §3]
    }
    static get documentName() { return "Combat"; }
    get documentName() { return "Combat"; }
    get client() { return client; }
    /** Keep Combatant objects (their identity) across source changes; new rows get new ones. */
    _rebuild() {
      const old = this.combatants;
      this.combatants = new Collection();
      for (const c of this._source.combatants) {
        const doc = old.get(c._id);
        if (doc) { doc._source = c; this.combatants.set(c._id, doc); }
        else this.combatants.set(c._id, new client.CONFIG.Combatant.documentClass(c, this));
      }
    }
    get id() { return this._source._id; }
    get _id() { return this._source._id; }
    get round() { return this._source.round; }
    get turn() { return this._source.turn; }
    get active() { return this._source.active; }
    get flags() { return this._source.flags; }
    get scene() { return this._source.scene; }
    /** v13: `round > 0` [research §2]. */
    get started() { return this.round > 0; }
    /** `turns[turn]` of the cached turns (stale until the next refresh). */
    get combatant() { return Number.isInteger(this.turn) ? this.turns[this.turn] : undefined; }
    get nextCombatant() { return Number.isInteger(this.turn) ? this.turns[this.turn + 1] : undefined; }
    get settings() { return client.game.settings.get("core", "combatTrackerConfig"); }
    get isActive() { return this.active; }
    getFlag(scope, key) { return getProperty(this._source.flags?.[scope] ?? {}, key); }
    setFlag(scope, key, value) { return this.update({ [`flags.${scope}.${key}`]: value }); }
    toObject() { return deepClone(this._source); }

    /** Core's comparator; a system's subclass overrides it (CONFIG.Combat.documentClass). Passed unbound. */
    _sortCombatants(a, b) { return coreSort(a, b); }

    /** `CombatHistoryData` = {round, turn, combatantId, tokenId} [research §1.1]. */
    _getCurrentState(combatant) {
      combatant ??= this.combatant;
      return { round: this.round, turn: this.turn ?? null, combatantId: combatant?.id ?? null, tokenId: combatant?.tokenId ?? null };
    }

    /**
     * Sort the combatants (comparator passed unbound), clamp `turn` (≥ length → 0 and the
     * next round, locally), set `current` [research §3].
     */
    setupTurns() {
      const sort = this._sortCombatants;
      this.turns = this.combatants.contents.sort(sort);
      if (Number.isInteger(this.turn) && this.turn >= this.turns.length && this.turns.length) {
        this._source.turn = 0;
        this._source.round += 1;
      }
      this.current = this._getCurrentState();
      return this.turns;
    }

    // -------------------------------------------------- applied by the world on each client
    /** A combat update arrived (the diff): apply it; `_onUpdate` refreshes turns when `combatants` is in it. */
    _applyUpdate(diff) {
      const { combatants: rows, ...rest } = diff;
      mergeInto(this._source, rest);
      for (const row of rows ?? []) {
        const c = this._source.combatants.find((x) => x._id === row._id);
        if (c) mergeInto(c, row);
        else this._source.combatants.push(world.newCombatantSource(deepClone(row), this._source));
      }
      this._rebuild();
      const prior = this.current;
      if ("combatants" in diff) this.setupTurns();
      else if ("turn" in diff || "round" in diff) this.current = this._getCurrentState();
      if ("turn" in diff || "round" in diff) this.previous = prior;
      return prior;
    }

    /** Combatant rows changed: sources and the collection only — `turns` stays stale until `_onModifyCombatants`. */
    _applyCombatants({ created = [], updated = [], deleted = [] }) {
      for (const row of updated) mergeInto(this._source.combatants.find((x) => x._id === row._id), row);
      this._source.combatants.push(...created.map(deepClone));
      this._source.combatants = this._source.combatants.filter((c) => !deleted.includes(c._id));
      this._rebuild();
    }

    /** `#onModifyCombatants`: take `options.combatTurn` (updateSource({turn})) and re-sort [research §1.2]. */
    _onModifyCombatants(combatTurn) {
      const prior = this.current;
      if (Number.isInteger(combatTurn) && this.round > 0) this._source.turn = combatTurn;
      this.setupTurns();
      return prior;
    }

    /**
     * The seconds between two points of the combat, as core counts them: `roundTime` per round
     * begun, `turnTime` per turn passed over the current `turns` (a null turn counts none), negative
     * going back; a backward step counts the turns back into the round before, never whole rounds
     * beyond it (core's only backward steps are one turn or one round). `world.roundTime`/`turnTime`
     * stand for `CONFIG.time` [research §1.1; F13 `client/documents/combat.mjs` `getTimeDelta`;
     * T13 13.345.1 and types 14.366 `client/documents/combat.d.mts` `getTimeDelta(fromRound,
     * fromTurn, toRound, toTurn): number`; D14 `foundry.documents.Combat` lists it]. The turn
     * hooks' `worldTime.delta` comes from it.
     */
    getTimeDelta(fromRound, fromTurn, toRound, toTurn) {
      const n = this.turns.length;
      const rounds = Math.max(toRound, 1) - Math.max(fromRound, 1);
      let turns = (toTurn ?? 0) - (fromTurn ?? 0);
      if (fromRound < toRound) {
        const rest = fromRound > 0 && Number.isInteger(fromTurn) ? n - fromTurn : 0; // what was left of the old round
        turns = rest + Math.max(rounds - 1, 0) * n + (toTurn ?? 0);
      } else if (fromRound > toRound) {
        const back = Number.isInteger(fromTurn) ? fromTurn + 1 : 0;                   // to before the round's first turn
        const tail = fromRound > 0 && Number.isInteger(toTurn) ? n - (toTurn + 1) : 0;     // and through the end of the old one
        turns = -(back + tail);
      }
      return rounds * world.roundTime + turns * world.turnTime;
    }

    // -------------------------------------------------- the API a module calls
    update(changed, options = {}) { return world.updateCombat(client, this.id, changed, options); }
    delete(options = {}) { return world.deleteCombat(client, this.id, options); }
    updateEmbeddedDocuments(type, updates, options = {}) {
      return type === "CombatantGroup" ? world.updateGroups(client, this.id, updates, options) : world.updateCombatants(client, this.id, updates, options);
    }
    createEmbeddedDocuments(type, data, options = {}) { return world.createCombatants(client, this.id, data, options); }
    deleteEmbeddedDocuments(type, ids, options = {}) { return world.deleteCombatants(client, this.id, ids, options); }
    getEmbeddedDocument(type, id) { return this.combatants.get(id); }

    /** `combatStart(combat, {round: 1, turn: 0})` on the initiating client, before the update [research §1.1]. */
    async startCombat() {
      const updateData = { round: 1, turn: 0 };
      client.Hooks.callAll("combatStart", this, updateData);
      return this.update(updateData);
    }

    /**
     * Round 0 → `nextRound()`; else the first later index (skipping defeated with
     * skipDefeated); none → `nextRound()` [research §3]. `combatTurn` hook before the update,
     * options `{direction, worldTime: {delta}}`, the delta worked out before the hook for the
     * turn proposed [research §1.1; F13 `combat.mjs` `nextTurn`/`nextRound`].
     */
    async nextTurn() {
      if (this.round === 0) return this.nextRound();
      const turn = this.turn ?? -1;
      const skip = this.settings.skipDefeated;
      let next = null;
      for (let i = turn + 1; i < this.turns.length; i++) {
        if (skip && this.turns[i].isDefeated) continue;
        next = i; break;
      }
      if (next === null) return this.nextRound();
      const updateData = { round: this.round, turn: next };
      const updateOptions = { direction: 1, worldTime: { delta: this.getTimeDelta(this.round, this.turn, this.round, next) } };
      client.Hooks.callAll("combatTurn", this, updateData, updateOptions);
      return this.update(updateData, updateOptions);
    }

    /** `turn = 0` (null when there is no current turn); skipDefeated → first non-defeated [research §3]. */
    async nextRound() {
      let turn = this.turn === null ? null : 0;
      if (this.settings.skipDefeated && turn !== null) {
        turn = this.turns.findIndex((t) => !t.isDefeated);
        if (turn === -1) { client.ui.notifications.warn("COMBAT.NoneRemaining"); turn = 0; }
      }
      const updateData = { round: this.round + 1, turn };
      const updateOptions = { direction: 1, worldTime: { delta: this.getTimeDelta(this.round, this.turn, this.round + 1, turn) } };
      client.Hooks.callAll("combatRound", this, updateData, updateOptions);
      return this.update(updateData, updateOptions);
    }

    /** Plain `turn - 1`, no defeated skipping; at 0 → `previousRound()` [research §3]. */
    async previousTurn() {
      if (this.turn === 0 && this.round === 0) return this;
      if (this.turn === null || this.turn === 0) return this.previousRound();
      const updateData = { round: this.round, turn: this.turn - 1 };
      const updateOptions = { direction: -1, worldTime: { delta: this.getTimeDelta(this.round, this.turn, this.round, this.turn - 1) } };
      client.Hooks.callAll("combatTurn", this, updateData, updateOptions);
      return this.update(updateData, updateOptions);
    }

    /** The previous round at its last index (round 0: no turn) [research §3]. */
    async previousRound() {
      const round = Math.max(this.round - 1, 0);
      const turn = round === 0 ? null : Math.max(this.turns.length - 1, 0);
      const updateData = { round, turn };
      const updateOptions = { direction: -1, worldTime: { delta: this.getTimeDelta(this.round, this.turn, round, turn) } };
      client.Hooks.callAll("combatRound", this, updateData, updateOptions);
      return this.update(updateData, updateOptions);
    }

    /**
     * Roll for each owned combatant, ONE `updateEmbeddedDocuments` with `{turnEvents: false}`
     * (plus `combatTurn: this.turn` when `updateTurn` is false), then a chat message each
     * flagged `core.initiativeRoll`; a hidden combatant's roll is private (v13 rollMode
     * `gmroll`, v14 messageMode `gm`) [research §1.3, §10].
     */
    async rollInitiative(ids, { formula = null, updateTurn = true, messageOptions = {} } = {}) {
      ids = typeof ids === "string" ? [ids] : ids;
      const updates = [], messages = [];
      for (const id of ids) {
        const c = this.combatants.get(id);
        if (!c?.isOwner) continue;
        const roll = c.getInitiativeRoll(formula);
        await roll.evaluate();
        updates.push({ _id: id, initiative: roll.total });
        const mode = c.hidden ? (v14 ? { messageMode: "gm" } : { rollMode: "gmroll" }) : {};
        messages.push({ roll, data: { speaker: { actor: c.actorId, token: c.tokenId, alias: c.name }, flags: { core: { initiativeRoll: true } } }, mode: { ...mode, ...messageOptions } });
      }
      if (!updates.length) return this;
      const options = { turnEvents: false };
      if (!updateTurn) options.combatTurn = this.turn;
      await this.updateEmbeddedDocuments("Combatant", updates, options);
      for (const m of messages) await m.roll.toMessage(m.data, m.mode);
      return this;
    }
    /** Owned combatants without initiative [research §1.3]. */
    rollAll(options) {
      return this.rollInitiative(this.combatants.filter((c) => c.isOwner && c.initiative === null).map((c) => c.id), options);
    }
    rollNPC(options) {
      return this.rollInitiative(this.combatants.filter((c) => c.isOwner && c.isNPC && c.initiative === null).map((c) => c.id), options);
    }
    /** Plain `combatant.update({initiative})` [research §1.3]. */
    setInitiative(id, value) { return this.combatants.get(id).update({ initiative: value }); }
    /** All to null in one combat update with `{turnEvents: false, diff: false}` [research §1.3]. */
    resetAll({ updateTurn = true } = {}) {
      const combatants = this.combatants.map((c) => ({ _id: c.id, initiative: null }));
      const data = { combatants };
      if (updateTurn) data.turn = this.started ? 0 : null;
      return this.update(data, { turnEvents: false, diff: false });
    }
  }

  Object.assign(Combat.prototype, turnEventMethods(world));
  if (world.systemRolls === "dnd5e") {
    /**
     * dnd5e `Combatant5e#getGroupingKey`: null for a linked token, a token without base actor or
     * no initiative; else the initiative FLOORED (four digits), the token's disposition and the
     * base actor's id [GitHub foundryvtt/dnd5e `module/documents/combatant.mjs`].
     */
    Combatant.prototype.getGroupingKey = function getGroupingKey() {
      if (this.token?.actorLink || !this.token?.baseActor || this.initiative === null) return null;
      return `${String(Math.floor(this.initiative)).padStart(4, "0")}:${this.token.disposition}:${this.token.baseActor.id}`;
    };
  }

  /** A system's subclass: same API, its own comparator (CONFIG.Combat.documentClass). */
  const sort = sortFor({ sort: world.sortName });
  class SortedCombat extends Combat {
    _sortCombatants(a, b) { return sort(a, b); }
  }
  const SystemCombat = world.systemRolls === "pf2e" ? pf2eTurnAutomation(pf2eEncounter(SortedCombat, client), client)
    : world.systemRolls === "dnd5e" ? dnd5eCombat(SortedCombat, world) : SortedCombat;
  Object.defineProperty(SystemCombat, "name", { value: { dnd5e: "Combat5e", pf2e: "EncounterPF2e" }[world.sortName] ?? "Combat" });

  return { Combat: SystemCombat, BaseCombat: Combat, Combatant, Collection };
}
