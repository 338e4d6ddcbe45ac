// The fake Foundry "server": one world shared by several clients (a GM and players).
// Writes: pre-hooks run on the initiating client only (and may mutate or cancel), the
// world applies the change, then every client updates its own copy and runs the post hooks
// (`updateCombat`, `updateCombatant`, ...; `combatTurnChange` when the turn moved and turn
// events are on). Combatant writes keep the current combatant via `options.combatTurn`
// (v13), applied without an `updateCombat`. `updates` counts database writes.

import { deepClone, expandObject, mergeInto, randomID, isObject } from "./utils.js";
import { sortCombatants } from "./documents.js";
import { Dice } from "./roll.js";
import { makeClient } from "./client.js";

const ROLES = { NONE: 0, PLAYER: 1, TRUSTED: 2, ASSISTANT: 3, GAMEMASTER: 4 };
const PLAYER_COMBAT_KEYS = ["_id", "round", "turn", "combatants"];
const PLAYER_COMBATANT_KEYS = ["_id", "initiative", "flags", "defeated", "system"];

export class World {
  constructor({ id = "test-world", system = "dnd5e", users = [], actors = [], tokens = [], initiativeFormula = "1d20 + @abilities.dex.mod", seed = 42 } = {}) {
    this.id = id;
    this.system = system;
    this.users = users.map((u) => ({ active: true, role: ROLES.PLAYER, ...u }));
    this.actors = new Map(actors.map((a) => [a._id, { ownership: {}, system: {}, ...a }]));
    this.tokens = new Map(tokens.map((t) => [t._id, { x: 0, y: 0, ...t }]));
    this.combats = new Map();
    this.worldSettings = new Map();
    this.dice = new Dice(seed);
    this.initiativeFormula = initiativeFormula;
    this.turnTime = 0;
    this.roundTime = 6;
    this.worldTime = 0;
    this.clients = [];
    this.updates = 0;
    this.log = [];
    this.chat = [];
  }

  static ROLES = ROLES;

  gmIds() { return this.users.filter((u) => u.role >= ROLES.ASSISTANT).map((u) => u._id); }

  /** A client for a user (its `storage` stands for the browser's localStorage). */
  connect(userId, { storage = new Map() } = {}) {
    const client = makeClient(this, userId, storage);
    this.clients.push(client);
    return client;
  }

  disconnect(client) { this.clients = this.clients.filter((c) => c !== client); }

  /** Mark a user (in)active and fire `userConnected` on every client. */
  setActive(userId, active) {
    const u = this.users.find((x) => x._id === userId);
    u.active = active;
    for (const c of this.clients) c.Hooks.callAll("userConnected", c.game.users.get(userId), active);
  }

  user(id) { return this.users.find((u) => u._id === id); }
  isGM(id) { return (this.user(id)?.role ?? 0) >= ROLES.ASSISTANT; }
  owns(userId, actorId) { return this.isGM(userId) || (this.actors.get(actorId)?.ownership?.[userId] ?? 0) >= 3; }

  async tick() { await new Promise((r) => setImmediate(r)); }

  record(kind, data) { this.log.push({ kind, ...data }); }

  // ---------------------------------------------------------------- combats
  async createCombat(client, data = {}, options = {}) {
    const source = {
      _id: data._id ?? randomID(), type: "base", system: {}, scene: data.scene ?? null, groups: [],
      combatants: [], active: true, round: 0, turn: null, sort: 0, flags: {},
      _stats: { coreVersion: "13.350", systemId: this.system, systemVersion: "5.1.2", createdTime: 1, modifiedTime: 1, lastModifiedBy: client.userId, compendiumSource: null, duplicateSource: null, exportSource: null }
    };
    if (client.Hooks.call("preCreateCombat", null, source, options, client.userId) === false) return null;
    await this.tick();
    this.combats.set(source._id, source);
    this.updates += 1;
    this.record("createCombat", { user: client.userId });
    for (const c of this.clients) {
      c.addCombat(deepClone(source));
      c.Hooks.callAll("createCombat", c.game.combats.get(source._id), { ...options, action: "create" }, client.userId);
    }
    return client.game.combats.get(source._id);
  }

  async deleteCombat(client, id, options = {}) {
    const doc = client.game.combats.get(id);
    if (client.Hooks.call("preDeleteCombat", doc, options, client.userId) === false) return null;
    await this.tick();
    this.combats.delete(id);
    this.updates += 1;
    for (const c of this.clients) {
      const d = c.game.combats.get(id);
      c.removeCombat(id);
      c.Hooks.callAll("deleteCombat", d, { ...options, action: "delete" }, client.userId);
    }
    return doc;
  }

  async updateCombat(client, id, changed, options = {}) {
    const doc = client.game.combats.get(id);
    changed = expandObject(changed);
    options = { ...options };
    if (client.Hooks.call("preUpdateCombat", doc, changed, options, client.userId) === false) return null;
    changed = expandObject(changed);
    this.checkCombatWrite(client.userId, id, changed);
    await this.tick();
    const master = this.combats.get(id);
    const prior = this.currentOf(master);
    const { combatants: rows, ...rest } = changed;
    mergeInto(master, rest);
    for (const row of rows ?? []) {
      const c = master.combatants.find((x) => x._id === row._id);
      if (c) mergeInto(c, row);
    }
    const now = this.currentOf(master);
    this.updates += 1;
    this.record("updateCombat", { user: client.userId, own: Boolean(options["initiative-sidecar"]?.own), changed: Object.keys(changed) });
    const diff = { ...deepClone(changed), _id: id, _stats: { modifiedTime: 2, lastModifiedBy: client.userId } };
    const turnMoved = ("turn" in changed || "round" in changed) && (prior.combatantId !== now.combatantId || prior.round !== now.round);
    for (const c of this.clients) {
      c.replaceCombat(deepClone(master));
      const d = c.game.combats.get(id);
      c.Hooks.callAll("updateCombat", d, deepClone(diff), { ...deepClone(options), action: "update", diff: true, recursive: true, render: true, parent: null, modifiedTime: 2 }, client.userId);
      if (turnMoved && master.round > 0 && options.turnEvents !== false) c.Hooks.callAll("combatTurnChange", d, prior, now);
    }
    return client.game.combats.get(id);
  }

  checkCombatWrite(userId, combatId, changed) {
    if (this.isGM(userId)) return;
    const bad = Object.keys(changed).filter((k) => !PLAYER_COMBAT_KEYS.includes(k));
    if (bad.length) throw new Error(`user ${userId} may not update combat keys ${bad}`);
    const master = this.combats.get(combatId);
    for (const row of changed.combatants ?? []) this.checkCombatantWrite(userId, master, row);
  }

  checkCombatantWrite(userId, master, row) {
    if (this.isGM(userId)) return;
    const c = master.combatants.find((x) => x._id === row._id);
    if (!c || !this.owns(userId, c.actorId)) throw new Error(`user ${userId} may not update combatant ${row._id}`);
    const bad = Object.keys(row).filter((k) => !PLAYER_COMBATANT_KEYS.includes(k));
    if (bad.length) throw new Error(`user ${userId} may not update combatant keys ${bad}`);
  }

  currentOf(source) {
    const turns = [...source.combatants].map((c) => ({ id: c._id, initiative: c.initiative, tokenId: c.tokenId })).sort(sortCombatants);
    const c = Number.isInteger(source.turn) ? turns[source.turn] : null;
    return { round: source.round, turn: source.turn, combatantId: c?.id ?? null, tokenId: c?.tokenId ?? null };
  }

  /** v13: the index the current combatant will have after a combatant change. */
  keepTurn(master, mutate) {
    const before = this.currentOf(master);
    mutate();
    if (!(master.round > 0) || before.combatantId === null) return master.turn;
    const turns = [...master.combatants].map((c) => ({ id: c._id, initiative: c.initiative })).sort(sortCombatants);
    const i = turns.findIndex((t) => t.id === before.combatantId);
    return i >= 0 ? i : Math.min(master.turn ?? 0, turns.length - 1);
  }

  async updateCombatants(client, combatId, updates, options = {}) {
    const doc = client.game.combats.get(combatId);
    options = { turnEvents: false, ...options };
    const accepted = [];
    for (const raw of updates) {
      const changed = expandObject(raw);
      const cd = doc.combatants.get(changed._id);
      if (client.Hooks.call("preUpdateCombatant", cd, changed, options, client.userId) === false) continue;
      accepted.push(expandObject(changed));
    }
    if (!accepted.length) return [];
    const master = this.combats.get(combatId);
    for (const row of accepted) this.checkCombatantWrite(client.userId, master, row);
    await this.tick();
    const explicit = options.combatTurn;
    const turn = this.keepTurn(master, () => {
      for (const row of accepted) mergeInto(master.combatants.find((x) => x._id === row._id), row);
    });
    if (master.round > 0) master.turn = Number.isInteger(explicit) ? explicit : turn;
    const opts = { ...options, combatTurn: master.turn };
    this.updates += 1;
    this.record("updateCombatants", { user: client.userId, own: Boolean(options["initiative-sidecar"]?.own), n: accepted.length });
    for (const c of this.clients) {
      c.replaceCombat(deepClone(master));
      const d = c.game.combats.get(combatId);
      for (const row of accepted) {
        c.Hooks.callAll("updateCombatant", d.combatants.get(row._id), { ...deepClone(row), _stats: { modifiedTime: 2, lastModifiedBy: client.userId } }, { ...deepClone(opts), action: "update", parent: d }, client.userId);
      }
    }
    return accepted;
  }

  async createCombatants(client, combatId, data, options = {}) {
    const master = this.combats.get(combatId);
    const rows = [];
    for (const d of data) {
      const row = { _id: d._id ?? randomID(), type: "base", system: {}, actorId: null, tokenId: null, sceneId: null, img: null, initiative: null, hidden: false, defeated: false, group: null, flags: {}, _stats: { coreVersion: "13.350", systemId: this.system, systemVersion: "5.1.2", createdTime: 1, modifiedTime: 1, lastModifiedBy: client.userId, compendiumSource: null, duplicateSource: null, exportSource: null }, ...deepClone(d) };
      if (client.Hooks.call("preCreateCombatant", null, row, options, client.userId) === false) continue;
      rows.push(row);
    }
    await this.tick();
    const turn = this.keepTurn(master, () => master.combatants.push(...rows));
    if (master.round > 0) master.turn = turn;
    this.updates += 1;
    for (const c of this.clients) {
      c.replaceCombat(deepClone(master));
      const d = c.game.combats.get(combatId);
      for (const row of rows) c.Hooks.callAll("createCombatant", d.combatants.get(row._id), { ...options, action: "create", parent: d, combatTurn: master.turn, turnEvents: false }, client.userId);
    }
    return rows;
  }

  async deleteCombatants(client, combatId, ids, options = {}) {
    const master = this.combats.get(combatId);
    await this.tick();
    const gone = {};
    for (const c of this.clients) gone[c.userId] = ids.map((id) => c.game.combats.get(combatId)?.combatants.get(id));
    const turn = this.keepTurn(master, () => { master.combatants = master.combatants.filter((c) => !ids.includes(c._id)); });
    if (master.round > 0) master.turn = turn;
    this.updates += 1;
    for (const c of this.clients) {
      c.replaceCombat(deepClone(master));
      const d = c.game.combats.get(combatId);
      for (const doc of gone[c.userId]) if (doc) { doc.parent = d; c.Hooks.callAll("deleteCombatant", doc, { ...options, action: "delete", parent: d }, client.userId); }
    }
  }

  // ---------------------------------------------------------------- tokens, chat, socket
  async updateToken(client, tokenId, changed) {
    await this.tick();
    const token = this.tokens.get(tokenId);
    Object.assign(token, changed);
    this.updates += 1;
    for (const c of this.clients) c.Hooks.callAll("updateToken", c.tokenDoc(tokenId), { ...changed, _id: tokenId }, { action: "update" }, client.userId);
  }

  async createChatMessage(client, data) {
    await this.tick();
    const message = { id: randomID(), rolls: [], whisper: [], content: "", flags: {}, speaker: {}, author: client.userId, ...deepClone(data) };
    this.chat.push(message);
    for (const c of this.clients) {
      if (message.whisper.length && !message.whisper.includes(c.userId) && !this.isGM(c.userId)) continue;
      c.Hooks.callAll("createChatMessage", deepClone(message), {}, client.userId);
    }
    return message;
  }

  /** The module socket: to `recipients` (sender included if listed) or to every other client. */
  relay(sender, event, data, { recipients } = {}) {
    const targets = recipients ? this.clients.filter((c) => recipients.includes(c.userId)) : this.clients.filter((c) => c !== sender);
    this.record("socket", { from: sender.userId, to: targets.map((c) => c.userId), type: data?.type });
    for (const c of targets) setImmediate(() => c.deliver(event, deepClone(data), sender.userId));
  }
}

export { isObject };
