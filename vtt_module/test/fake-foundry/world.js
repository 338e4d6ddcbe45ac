// The fake Foundry "server": one world shared by several clients (a GM and players), of one
// generation (13 or 14) and one system's turn order. Every behaviour cites its source; the
// facts are in ../shared/research/foundry-api.md (sections are "§n") and the
// fake-foundry/README.md table lists each with its test.
//
// A write: the initiating client runs the pre-hooks (which may mutate or cancel), then
// sends only the DIFFERENCE from its copy (nothing at all for a no-op: no write, no hook)
// [§9]; the world applies it, then every client applies the same diff to its own copy and
// runs the post hooks. Combatant writes carry `options.combatTurn` computed by the
// initiating client on a clone (v13 `Combatant._preUpdateOperation`) and applied without an
// `updateCombat` [§1.2]; the combatant post hooks run BEFORE the combat re-sorts its
// cached `turns` [§9]. `updates` counts database writes; `log` lists them.

import { deepClone, expandObject, mergeInto, randomID, isObject, diffObject, deletionsIn, overTheWire } from "./utils.js";
import { Dice } from "./roll.js";
import { makeClient } from "./client.js";
import { defaultGeneration, DEFAULT_BUILDS, releaseOf, recordDeprecation } from "./generation.js";

const ROLES = { NONE: 0, PLAYER: 1, TRUSTED: 2, ASSISTANT: 3, GAMEMASTER: 4 };
/** A non-GM may update a Combat only for these keys [§3 Permissions, F13 common combat.mjs #canUpdate]. */
const PLAYER_COMBAT_KEYS = ["_id", "round", "turn", "combatants"];
/** A non-GM owner may update a Combatant only for these keys [§2, F13 common combatant.mjs #canUpdate]. */
const PLAYER_COMBATANT_KEYS = ["_id", "initiative", "flags", "defeated", "system"];

/** Foundry's error for an embedded id that does not exist (update/delete). */
export function missingId(id) {
  return new Error(`undefined id [${id}] does not exist in the EmbeddedCollection collection`);
}

export class World {
  /**
   * @param {object} o
   * @param {13|14} [o.generation] Foundry generation (default: FAKE_FOUNDRY_GENERATION or 13)
   * @param {number} [o.build] build number (13 → 350, 14 → 369)
   * @param {string} [o.system] `game.system.id`; also picks the turn order ("dnd5e", "pf2e", else core)
   * @param {"core"|"dnd5e"|"pf2e"} [o.sort] turn order, overriding the system's
   * @param {"core"|"dnd5e"} [o.rolls] initiative roll behaviour (dnd5e ignores a passed formula); default from system
   * @param {number} [o.storageQuota] bytes of localStorage per client (default 5 MiB)
   * @param {object} [o.manifest] a manifest whose `compatibility` decides activation (default: vtt_module/module.json)
   */
  constructor({ id = "test-world", system = "dnd5e", users = [], actors = [], tokens = [], initiativeFormula = "1d20 + @abilities.dex.mod", seed = 42,
    generation = defaultGeneration(), build, sort, rolls, lang = "en", storageQuota = 5 * 1024 * 1024, manifest } = {}) {
    this.id = id;
    this.system = system;
    this.generation = generation;
    this.release = releaseOf(generation, build ?? DEFAULT_BUILDS[generation]);
    this.sortName = sort ?? (["dnd5e", "pf2e"].includes(system) ? system : "core");
    this.systemRolls = rolls ?? (system === "dnd5e" ? "dnd5e" : "core");
    this.lang = lang;
    /** Bytes of localStorage per client (browsers give an origin about 5 MiB). */
    this.storageQuota = storageQuota;
    /** A manifest to judge instead of vtt_module/module.json (tests of the double). */
    this.manifest = manifest;
    this.users = users.map((u) => ({ active: true, role: ROLES.PLAYER, ...u }));
    this.actors = new Map(actors.map((a) => [a._id, { ownership: {}, system: {}, ...a }]));
    this.tokens = new Map(tokens.map((t) => [t._id, { x: 0, y: 0, ...t }]));
    this.combats = new Map();
    this.worldSettings = new Map();
    this.userSettings = new Map();
    this.dice = new Dice(seed);
    this.initiativeFormula = initiativeFormula;
    this.turnTime = 0;
    this.roundTime = 6;
    this.worldTime = 0;
    this.clients = [];
    this.updates = 0;
    this.log = [];
    this.chat = [];
    this.deprecations = [];
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

  stats(userId) {
    return { coreVersion: this.release.version, systemId: this.system, systemVersion: "5.1.2", createdTime: 1, modifiedTime: 1, lastModifiedBy: userId, compendiumSource: null, duplicateSource: null, exportSource: null };
  }

  /**
   * A new Combatant's source [§2 key order; F13 common combatant.mjs]. v14 adds
   * `roundJoined`: the combat's round when created, 1 before the start [D14 CombatantData].
   */
  newCombatantSource(data, combatSource, userId = null) {
    const row = { _id: data._id ?? randomID(), type: "base", system: {}, actorId: null, tokenId: null, sceneId: null, img: null, initiative: null, hidden: false, defeated: false, group: null, flags: {}, _stats: this.stats(userId), ...deepClone(data) };
    if (this.generation >= 14) row.roundJoined ??= combatSource.round > 0 ? combatSource.round : 1;
    else delete row.roundJoined;
    return row;
  }

  /** v14: a `-=key` in update data is deprecated (since 14, until 16) [§10; rqg issue #890; dnd5e 5.3.3 item.mjs]. */
  noteDeletions(client, changes) {
    if (this.generation < 14) return;
    for (const path of deletionsIn(changes).legacy) {
      recordDeprecation(client, `The "-=" deletion syntax is deprecated (${path}): use foundry.data.operators.ForcedDeletion (_del)`, { since: 14, until: 16 });
    }
  }

  /** Re-render every client's rendered tracker after a change (Foundry re-renders the combat tracker on combat changes). */
  renderTrackers() { for (const c of this.clients) c.ui.combat.refresh(); }

  // ---------------------------------------------------------------- combats
  async createCombat(client, data = {}, options = {}) {
    const source = {
      _id: data._id ?? randomID(), type: "base", system: {}, scene: data.scene ?? null, groups: [],
      combatants: [], active: true, round: 0, turn: null, sort: 0, flags: {}, _stats: this.stats(client.userId), ...deepClone(data)
    };
    source.combatants = (source.combatants ?? []).map((c) => this.newCombatantSource(c, source, client.userId));
    if (client.Hooks.call("preCreateCombat", null, source, options, client.userId) === false) return null;
    await this.tick();
    this.combats.set(source._id, source);
    this.updates += 1;
    this.record("createCombat", { user: client.userId });
    for (const c of this.clients) {
      c.addCombat(deepClone(source));
      c.Hooks.callAll("createCombat", c.game.combats.get(source._id), { ...options, action: "create" }, client.userId);
    }
    this.renderTrackers();
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
    this.renderTrackers();
    return doc;
  }

  /**
   * The difference a combat update sends [§9]: top-level keys by `diffObject`; `combatants`
   * rows by `_id`, each reduced to its own difference (empty rows dropped); a row whose `_id`
   * is unknown is kept whole — the world will CREATE it [§9, F13 common/data/fields.mjs
   * EmbeddedCollectionField._updateDiff/_updateCommit].
   */
  combatDiff(source, changed) {
    const { combatants: rows, ...rest } = changed;
    const diff = diffObject(source, rest);
    if (rows) {
      const kept = [];
      for (const row of rows) {
        const existing = source.combatants.find((c) => c._id === row._id);
        if (!existing) { kept.push(deepClone(row)); continue; }
        const d = diffObject(existing, row);
        if (Object.keys(d).length) kept.push({ _id: row._id, ...d });
      }
      if (kept.length) diff.combatants = kept;
    }
    return diff;
  }

  async updateCombat(client, id, changed, options = {}) {
    const doc = client.game.combats.get(id);
    changed = expandObject(changed);
    options = { ...options };
    this.noteDeletions(client, changed);
    if (client.Hooks.call("preUpdateCombat", doc, changed, options, client.userId) === false) return undefined;
    changed = expandObject(changed);
    // diff after the pre-hook [§1.2]; `diff: false` sends the data as given [§1.3 resetAll]
    const diff = options.diff === false ? deepClone(changed) : this.combatDiff(doc._source, changed);
    if (!Object.keys(diff).length) return undefined; // a no-op sends nothing and fires no hook [§9]
    this.checkCombatWrite(client.userId, id, diff);
    await this.tick();
    const master = this.combats.get(id);
    const { combatants: rows, ...rest } = diff;
    mergeInto(master, rest);
    const created = [];
    for (const row of rows ?? []) {
      const c = master.combatants.find((x) => x._id === row._id);
      if (c) mergeInto(c, row);
      else { const fresh = this.newCombatantSource(row, master, client.userId); master.combatants.push(fresh); created.push(fresh._id); }
    }
    this.updates += 1;
    this.record("updateCombat", { user: client.userId, own: Boolean(options["initiative-sidecar"]?.own), changed: Object.keys(diff), created });
    const sent = overTheWire({ ...diff, _id: id, _stats: { modifiedTime: 2, lastModifiedBy: client.userId } });
    if (sent.combatants) sent.combatants = sent.combatants.map((r) => (created.includes(r._id) ? this.newCombatantSource(r, master, client.userId) : r));
    for (const c of this.clients) {
      const d = c.game.combats.get(id);
      const prior = d._applyUpdate(deepClone(sent));
      c.Hooks.callAll("updateCombat", d, deepClone(sent), { ...deepClone(options), action: "update", modifiedTime: 2, diff: options.diff ?? true, recursive: true, render: true, parent: null }, client.userId);
      this.turnChange(c, d, prior, options);
    }
    this.renderTrackers();
    return client.game.combats.get(id);
  }

  /**
   * `combatTurnChange(combat, prior, current)` on every client after the update, when the
   * combat has started, turn events are on and the combatant or round changed [§1.1].
   */
  turnChange(c, d, prior, options) {
    const now = d.current;
    const moved = prior.combatantId !== now.combatantId || prior.round !== now.round;
    if (moved && d.started && options.turnEvents !== false) c.Hooks.callAll("combatTurnChange", d, prior, now);
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

  /**
   * v13 `Combatant._pre{Create,Update,Delete}Operation` on the initiating client: clone the
   * combat, apply the change, `setupTurns()`, and take the index the CURRENT combatant will
   * have [§1.2, §9]. When the current combatant is deleted, the next surviving one (not
   * defeated, with skipDefeated) in the old order, wrapping; turn events then stay on.
   * Returns `{combatTurn, keepEvents}`; nothing before the combat has a current turn.
   */
  combatTurnAfter(client, doc, mutate, deleted = []) {
    if (!(doc.round > 0) || !Number.isInteger(doc.turn)) return {};
    const source = deepClone(doc._source);
    mutate(source);
    const clone = new client.CONFIG.Combat.documentClass(source);
    const currentId = doc.combatant?.id;
    if (currentId && !deleted.includes(currentId)) return { combatTurn: clone.turns.findIndex((t) => t.id === currentId) };
    const skip = doc.settings.skipDefeated;
    const old = doc.turns;
    for (let k = 1; k <= old.length; k++) {
      const cand = old[(doc.turn + k) % old.length];
      if (deleted.includes(cand.id) || (skip && cand.isDefeated)) continue;
      return { combatTurn: clone.turns.findIndex((t) => t.id === cand.id), keepEvents: true };
    }
    return { combatTurn: 0, keepEvents: true };
  }

  /** Send combatant changes to every client: hooks first (stale turns), then the refresh [§9]. */
  broadcastCombatants(client, combatId, { created = [], updated = [], deleted = [] }, options, hook) {
    const wire = overTheWire({ created, updated });
    for (const c of this.clients) {
      const d = c.game.combats.get(combatId);
      const gone = deleted.map((id) => d.combatants.get(id)).filter(Boolean);
      d._applyCombatants({ created: deepClone(wire.created), updated: deepClone(wire.updated), deleted });
      const opts = (extra = {}) => ({ ...deepClone(options), ...extra, parent: d });
      for (const row of wire.created) c.Hooks.callAll("createCombatant", d.combatants.get(row._id), opts({ action: "create" }), client.userId);
      for (const row of wire.updated) c.Hooks.callAll("updateCombatant", d.combatants.get(row._id), { ...deepClone(row), _stats: { modifiedTime: 2, lastModifiedBy: client.userId } }, opts({ action: "update", diff: true, recursive: true, render: true, modifiedTime: 2 }), client.userId);
      for (const doc of gone) c.Hooks.callAll("deleteCombatant", doc, opts({ action: "delete" }), client.userId);
      const prior = d._onModifyCombatants(options.combatTurn);
      if (hook === "delete") this.turnChange(c, d, prior, options);
    }
    this.renderTrackers();
  }

  async updateCombatants(client, combatId, updates, options = {}) {
    const doc = client.game.combats.get(combatId);
    options = { ...options };
    const rows = updates.map((u) => expandObject(u));
    for (const row of rows) if (!doc.combatants.has(row._id)) throw missingId(row._id);
    for (const row of rows) this.noteDeletions(client, row);
    const accepted = [];
    for (const changed of rows) {
      const cd = doc.combatants.get(changed._id);
      if (client.Hooks.call("preUpdateCombatant", cd, changed, options, client.userId) === false) continue;
      const row = expandObject(changed);
      const d = options.diff === false ? row : diffObject(cd._source, row);
      delete d._id;
      if (Object.keys(d).length) accepted.push({ _id: changed._id, ...d }); // unchanged rows are not sent [§9]
    }
    if (!accepted.length) return [];
    const master = this.combats.get(combatId);
    for (const row of accepted) this.checkCombatantWrite(client.userId, master, row);
    if (!("combatTurn" in options)) Object.assign(options, this.combatTurnAfter(client, doc, (s) => { for (const r of accepted) mergeInto(s.combatants.find((x) => x._id === r._id), deepClone(r)); }));
    options.turnEvents ??= false;
    await this.tick();
    for (const row of accepted) mergeInto(master.combatants.find((x) => x._id === row._id), deepClone(row));
    if (master.round > 0 && Number.isInteger(options.combatTurn)) master.turn = options.combatTurn; // no updateCombat [§1.2]
    this.updates += 1;
    this.record("updateCombatants", { user: client.userId, own: Boolean(options["initiative-sidecar"]?.own), n: accepted.length });
    this.broadcastCombatants(client, combatId, { updated: accepted }, options, "update");
    return accepted.map((r) => doc.combatants.get(r._id));
  }

  async createCombatants(client, combatId, data, options = {}) {
    const doc = client.game.combats.get(combatId);
    const master = this.combats.get(combatId);
    options = { ...options };
    const rows = [];
    for (const d of data) {
      const row = this.newCombatantSource(d, master, client.userId);
      if (client.Hooks.call("preCreateCombatant", new client.CONFIG.Combatant.documentClass(row, doc), row, options, client.userId) === false) continue;
      rows.push(row);
    }
    if (!rows.length) return [];
    Object.assign(options, this.combatTurnAfter(client, doc, (s) => s.combatants.push(...deepClone(rows))));
    options.turnEvents ??= false;
    await this.tick();
    master.combatants.push(...deepClone(rows));
    if (master.round > 0 && Number.isInteger(options.combatTurn)) master.turn = options.combatTurn;
    this.updates += 1;
    this.record("createCombatants", { user: client.userId, n: rows.length });
    this.broadcastCombatants(client, combatId, { created: rows }, options, "create");
    return rows.map((r) => doc.combatants.get(r._id));
  }

  async deleteCombatants(client, combatId, ids, options = {}) {
    const doc = client.game.combats.get(combatId);
    options = { ...options };
    for (const id of ids) if (!doc.combatants.has(id)) throw missingId(id);
    const gone = ids.filter((id) => client.Hooks.call("preDeleteCombatant", doc.combatants.get(id), options, client.userId) !== false);
    if (!gone.length) return [];
    const docs = gone.map((id) => doc.combatants.get(id));
    const { combatTurn, keepEvents } = this.combatTurnAfter(client, doc, (s) => { s.combatants = s.combatants.filter((c) => !gone.includes(c._id)); }, gone);
    if (Number.isInteger(combatTurn)) options.combatTurn = combatTurn;
    if (!keepEvents) options.turnEvents ??= false;
    await this.tick();
    const master = this.combats.get(combatId);
    master.combatants = master.combatants.filter((c) => !gone.includes(c._id));
    if (master.round > 0 && Number.isInteger(options.combatTurn)) master.turn = options.combatTurn;
    this.updates += 1;
    this.record("deleteCombatants", { user: client.userId, n: gone.length });
    this.broadcastCombatants(client, combatId, { deleted: gone }, options, "delete");
    return docs;
  }

  // ---------------------------------------------------------------- tokens, chat, socket
  async updateToken(client, tokenId, changed) {
    const token = this.tokens.get(tokenId);
    const diff = diffObject(token, expandObject(changed));
    if (!Object.keys(diff).length) return undefined;
    await this.tick();
    mergeInto(token, diff);
    this.updates += 1;
    for (const c of this.clients) c.Hooks.callAll("updateToken", c.tokenDoc(tokenId), { ...overTheWire(diff), _id: tokenId }, { action: "update" }, client.userId);
    this.renderTrackers();
  }

  async createChatMessage(client, data, options = {}) {
    await this.tick();
    const message = { id: randomID(), rolls: [], whisper: [], blind: false, content: "", flags: {}, speaker: {}, author: client.userId, ...deepClone(data) };
    this.chat.push(message);
    for (const c of this.clients) {
      if (message.whisper.length && !message.whisper.includes(c.userId) && !this.isGM(c.userId) && !(message.author === c.userId && !message.blind)) continue;
      c.showMessage(message);
      c.Hooks.callAll("createChatMessage", deepClone(message), { ...options }, client.userId);
    }
    return message;
  }

  /**
   * `User#query(name, data, {timeout})`: runs `CONFIG.queries[name]` on the target user's
   * client; fails when the user is inactive or the query unregistered [research §6].
   */
  async query(client, targetId, name, data, { timeout } = {}) {
    const target = this.clients.find((c) => c.userId === targetId);
    if (!target || !this.user(targetId)?.active) throw new Error(`User ${targetId} is not active`);
    const handler = target.CONFIG.queries[name];
    if (!handler) throw new Error(`The query "${name}" is not registered`);
    await this.tick();
    return overTheWire(await handler(overTheWire(data), { timeout }));
  }

  /** `DialogV2.query(user, type, config)`: the dialog shown on that user's client [research §6]. */
  async dialogQuery(client, targetId, type, config) {
    const target = this.clients.find((c) => c.userId === targetId);
    if (!target || !this.user(targetId)?.active) throw new Error(`User ${targetId} is not active`);
    await this.tick();
    return overTheWire(await target.foundry.applications.api.DialogV2[type](overTheWire(config)));
  }

  /** The module socket: to `recipients` (sender included if listed) or to every other client [§6]. */
  relay(sender, event, data, { recipients } = {}) {
    const targets = recipients ? this.clients.filter((c) => recipients.includes(c.userId)) : this.clients.filter((c) => c !== sender);
    this.record("socket", { from: sender.userId, to: targets.map((c) => c.userId), type: data?.type });
    for (const c of targets) setImmediate(() => c.deliver(event, overTheWire(data), sender.userId));
  }
}

export { isObject };
