// Client-side Combat and Combatant documents of one fake client. Each client holds its own
// copy of the source data (as Foundry clients do); writes go through the world ("server").

import { deepClone, getProperty } from "./utils.js";

/** Foundry's _sortCombatants: initiative descending, null last, ties by _id. */
export function sortCombatants(a, b) {
  const ia = Number.isFinite(a.initiative) ? a.initiative : -Infinity;
  const ib = Number.isFinite(b.initiative) ? b.initiative : -Infinity;
  return (ib - ia) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

export function makeDocumentClasses(client) {
  const world = client.world;

  class Collection extends Map {
    get contents() { return [...this.values()]; }
    filter(fn) { return this.contents.filter(fn); }
    map(fn) { return this.contents.map(fn); }
    find(fn) { return this.contents.find(fn); }
    some(fn) { return this.contents.some(fn); }
    [Symbol.iterator]() { return this.values(); }
  }

  class Combatant {
    constructor(source, parent) { this._source = source; this.parent = parent; }
    get id() { return this._source._id; }
    get _id() { return this._source._id; }
    get initiative() { return this._source.initiative; }
    get hidden() { return this._source.hidden; }
    get defeated() { return this._source.defeated; }
    get flags() { return this._source.flags; }
    get actorId() { return this._source.actorId; }
    get tokenId() { return this._source.tokenId; }
    get actor() { return client.game.actors.get(this._source.actorId) ?? null; }
    get token() { return world.tokens.get(this._source.tokenId) ?? null; }
    get name() { return this._source.name ?? this.token?.name ?? this.actor?.name; }
    get isOwner() { return client.user.isGM || Boolean(this.actor?.testUserPermission(client.user, "OWNER")); }
    get isNPC() { return !this.actor || !this.actor.hasPlayerOwner; }
    get isDefeated() { return Boolean(this._source.defeated); }
    get visible() { return this.isOwner || !this.hidden; }
    getFlag(scope, key) { return getProperty(this._source.flags?.[scope] ?? {}, key); }
    toObject() { return deepClone(this._source); }
    _getInitiativeFormula() { return world.initiativeFormula; }
    getInitiativeRoll(formula) {
      return new client.Roll(formula || this._getInitiativeFormula(), this.actor?.getRollData() ?? {});
    }
    async rollInitiative(formula) { return this.parent.rollInitiative([this.id], { formula }); }
    update(data, options = {}) { return this.parent.updateEmbeddedDocuments("Combatant", [{ _id: this.id, ...data }], options); }
  }

  class Combat {
    constructor(source) {
      this._source = source;
      this.combatants = new Collection();
      this.rebuild();
    }
    rebuild() {
      const old = this.combatants;
      this.combatants = new Collection();
      for (const c of this._source.combatants) this.combatants.set(c._id, old.get(c._id) && (old.get(c._id)._source = c, old.get(c._id)) || new Combatant(c, this));
    }
    get id() { return this._source._id; }
    get _id() { return this._source._id; }
    get round() { return this._source.round; }
    get turn() { return this._source.turn; }
    get active() { return this._source.active; }
    get flags() { return this._source.flags; }
    get started() { return this.round > 0; }
    get turns() { return [...this.combatants.values()].sort(sortCombatants); }
    get combatant() { return Number.isInteger(this.turn) ? this.turns[this.turn] : undefined; }
    get current() {
      const c = this.combatant;
      return { round: this.round, turn: this.turn, combatantId: c?.id ?? null, tokenId: c?.tokenId ?? null };
    }
    get settings() { return client.game.settings.get("core", "combatTrackerConfig"); }
    getFlag(scope, key) { return getProperty(this._source.flags?.[scope] ?? {}, key); }
    toObject() { return deepClone(this._source); }

    update(changed, options = {}) { return world.updateCombat(client, this.id, changed, options); }
    delete(options = {}) { return world.deleteCombat(client, this.id, options); }
    updateEmbeddedDocuments(type, updates, options = {}) { return world.updateCombatants(client, this.id, updates, options); }
    createEmbeddedDocuments(type, data, options = {}) { return world.createCombatants(client, this.id, data, options); }
    deleteEmbeddedDocuments(type, ids, options = {}) { return world.deleteCombatants(client, this.id, ids, options); }

    async startCombat() {
      const updateData = { round: 1, turn: 0 };
      client.Hooks.callAll("combatStart", this, updateData);
      return this.update(updateData);
    }
    async nextTurn() {
      const turn = this.turn ?? -1;
      const skip = this.settings.skipDefeated;
      let next = null;
      for (const [i, c] of this.turns.entries()) {
        if (i <= turn) continue;
        if (skip && c.isDefeated) continue;
        next = i; break;
      }
      if (next === null) return this.nextRound();
      const updateData = { round: this.round, turn: next };
      const updateOptions = { direction: 1, worldTime: { delta: world.turnTime } };
      client.Hooks.callAll("combatTurn", this, updateData, updateOptions);
      return this.update(updateData, updateOptions);
    }
    async nextRound() {
      let turn = this.turn === null ? null : 0;
      if (this.settings.skipDefeated && turn !== null) {
        turn = this.turns.findIndex((t) => !t.isDefeated);
        if (turn === -1) turn = 0;
      }
      const updateData = { round: this.round + 1, turn };
      const updateOptions = { direction: 1, worldTime: { delta: world.roundTime } };
      client.Hooks.callAll("combatRound", this, updateData, updateOptions);
      return this.update(updateData, updateOptions);
    }
    async previousTurn() {
      const updateData = { round: this.round, turn: Math.max((this.turn ?? 0) - 1, 0) };
      const updateOptions = { direction: -1, worldTime: { delta: -world.turnTime } };
      client.Hooks.callAll("combatTurn", this, updateData, updateOptions);
      return this.update(updateData, updateOptions);
    }
    async rollInitiative(ids, { formula = null, updateTurn = true } = {}) {
      ids = typeof ids === "string" ? [ids] : ids;
      const updates = [], messages = [];
      for (const id of ids) {
        const c = this.combatants.get(id);
        if (!c?.isOwner) continue;
        const roll = c.getInitiativeRoll(formula);
        await roll.evaluate();
        updates.push({ _id: id, initiative: roll.total });
        messages.push({ speaker: { actor: c.actorId, token: c.tokenId, alias: c.name }, rolls: [roll.toJSON()], flags: { core: { initiativeRoll: true } }, whisper: c.hidden ? world.gmIds() : [] });
      }
      if (!updates.length) return this;
      const options = { turnEvents: false };
      if (!updateTurn) options.combatTurn = this.turn;
      await this.updateEmbeddedDocuments("Combatant", updates, options);
      for (const m of messages) await client.ChatMessage.create(m);
      return this;
    }
    rollAll(options) {
      const ids = this.combatants.filter((c) => c.isOwner && c.initiative === null).map((c) => c.id);
      return this.rollInitiative(ids, options);
    }
    setInitiative(id, value) { return this.combatants.get(id).update({ initiative: value }); }
  }

  return { Combat, Combatant, Collection };
}
