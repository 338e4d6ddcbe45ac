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
import { CombatantWrites, missingId } from "./combatant-writes.js";
import { Messaging } from "./messaging.js";
import { TurnEvents } from "./turn-events.js";
import { defaultGeneration, DEFAULT_BUILDS, releaseOf, recordDeprecation } from "./generation.js";

const ROLES = { NONE: 0, PLAYER: 1, TRUSTED: 2, ASSISTANT: 3, GAMEMASTER: 4 };
/** A non-GM may update a Combat only for these keys [§3 Permissions, F13 common combat.mjs #canUpdate]. */
const PLAYER_COMBAT_KEYS = ["_id", "round", "turn", "combatants"];
/** A non-GM owner may update a Combatant only for these keys [§2, F13 common combatant.mjs #canUpdate]. */
const PLAYER_COMBATANT_KEYS = ["_id", "initiative", "flags", "defeated", "system"];


export class World {
  /**
   * @param {object} o
   * @param {13|14} [o.generation] Foundry generation (default: FAKE_FOUNDRY_GENERATION or 13)
   * @param {number} [o.build] build number (13 → 350, 14 → 369)
   * @param {string} [o.system] `game.system.id`; also picks the turn order ("dnd5e", "pf2e", else core)
   * @param {"core"|"dnd5e"|"pf2e"} [o.sort] turn order, overriding the system's
   * @param {"core"|"dnd5e"|"pf2e"} [o.rolls] initiative roll behaviour (dnd5e and pf2e roll the actor's own initiative, ignoring a passed formula); default from system
   * @param {number} [o.storageQuota] bytes of localStorage per client (default 5 MiB)
   * @param {object} [o.manifest] a manifest whose `compatibility` decides activation (default: vtt_module/module.json)
   * @param {number|function(): Promise<void>} [o.settingLatency] ms a world/user setting write takes to come back
   *   (default 0: one tick), or a function whose promise says when it comes back (a test's gate, timing-free)
   */
  constructor({ id = "test-world", system = "dnd5e", users = [], actors = [], tokens = [], initiativeFormula = "1d20 + @abilities.dex.mod", seed = 42,
    generation = defaultGeneration(), build, sort, rolls, lang = "en", storageQuota = 5 * 1024 * 1024, manifest, settingLatency = 0 } = {}) {
    this.id = id;
    this.system = system;
    this.generation = generation;
    this.release = releaseOf(generation, build ?? DEFAULT_BUILDS[generation]);
    this.sortName = sort ?? (["dnd5e", "pf2e"].includes(system) ? system : "core");
    this.systemRolls = rolls ?? (["dnd5e", "pf2e"].includes(system) ? system : "core");
    this.lang = lang;
    /** Bytes of localStorage per client (browsers give an origin about 5 MiB). */
    this.storageQuota = storageQuota;
    /** Milliseconds a world or user setting's write takes to come back from the server (0: one tick, as other writes). */
    this.settingLatency = settingLatency;
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
    /** core's turn events on the active GM, in order (turn-events.js) */
    this.turnEvents = [];
    this.regionEvents = [];    // Region events core triggers for turns and rounds (turn-events.js)
    this.movementCleared = []; // combatants whose movement history a Start Turn cleared
    /** dnd5e's recoveries from turn events; pf2e's startTurn/endTurn and its per-combatant round flags */
    this.recoveries = [];
    this.pf2eTurns = [];
    this.pf2eTurnFlags = new Map();
  }

  /**
   * An actor's status toggled (the token HUD's "Dead" sets the actor's defeated status, not the
   * combatant's \`defeated\` field) [F13 \`client/documents/combatant.mjs\` \`isDefeated\`, issue 25
   * correction 2]. The double keeps statuses as a list on the actor (no ActiveEffect documents).
   */
  setStatus(actorId, status, active = true) {
    const actor = this.actors.get(actorId);
    const set = new Set(actor.statuses ?? []);
    if (active) set.add(status); else set.delete(status);
    actor.statuses = [...set];
    this.renderTrackers();
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

  /**
   * A GM changes a user's role: the User document is updated, so `updateUser` fires on every
   * client with the diff `{role, _id}` and the id of the GM who changed it, as every document's
   * `update${documentName}` post-hook does (research §1's table, `updateCombat` row; the dynamic
   * `update${DocumentName}` hooks [T13 `client/hooks.d.mts` `Hooks.UpdateDocument`]). `isGM` is
   * `role >= ASSISTANT` (research §6 [F13 `common/documents/user.mjs`]).
   */
  setRole(userId, role, { by = this.users.find((u) => u.role >= ROLES.GAMEMASTER)?._id } = {}) {
    const u = this.user(userId);
    u.role = role;
    for (const c of this.clients) {
      c.Hooks.callAll("updateUser", c.game.users.get(userId), { role, _id: userId }, { action: "update", diff: true, recursive: true, render: true, modifiedTime: 2 }, by);
    }
  }

  /**
   * A GM creates a User mid-session: it joins every client's `game.users`, then `createUser`
   * fires on every client with the document, the operation and the creating GM's id; deleting
   * one removes it, then `deleteUser` fires likewise. Both post-hooks fire "for all connected
   * clients after the creation [deletion] has been processed" [T13 `client/hooks.d.mts`
   * `CreateDocument`, `DeleteDocument`; D13 hookEvents.deleteDocument; D14 hookEvents: the same
   * generic document hooks]. A new user is not logged in (`active: false`).
   */
  createUser(data, { by = this.users.find((u) => u.role >= ROLES.GAMEMASTER)?._id } = {}) {
    const u = { _id: randomID(), active: false, role: ROLES.PLAYER, ...data };
    this.users.push(u);
    for (const c of this.clients) {
      c.addUser(u);
      c.Hooks.callAll("createUser", c.game.users.get(u._id), { action: "create", modifiedTime: 2, render: true, renderSheet: false }, by);
    }
    return u;
  }

  /** A GM deletes a User: gone from every client's `game.users`, then `deleteUser` (see createUser). */
  deleteUser(userId, { by = this.users.find((u) => u.role >= ROLES.GAMEMASTER && u._id !== userId)?._id } = {}) {
    this.users = this.users.filter((u) => u._id !== userId);
    for (const c of this.clients) {
      const doc = c.game.users.get(userId);
      c.removeUser(userId);
      c.Hooks.callAll("deleteUser", doc, { action: "delete", modifiedTime: 3, render: true }, by);
    }
  }

  user(id) { return this.users.find((u) => u._id === id); }
  isGM(id) { return (this.user(id)?.role ?? 0) >= ROLES.ASSISTANT; }
  owns(userId, actorId) { return this.isGM(userId) || (this.actors.get(actorId)?.ownership?.[userId] ?? 0) >= 3; }

  async tick() { await new Promise((r) => setImmediate(r)); }

  /** A world or user setting's write to the server and back (see `settings.set` in client.js). */
  async settingRoundTrip() {
    if (typeof this.settingLatency === "function") await this.settingLatency();
    else if (this.settingLatency > 0) await new Promise((r) => setTimeout(r, this.settingLatency));
    else await this.tick();
  }

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
      this.afterCombatUpdate(c, d, sent, options, prior, client.userId);
    }
    this.advanceTime(options);
    this.renderTrackers();
    return client.game.combats.get(id);
  }

  /**
   * A combat update that was written moves the world's clock by its `worldTime.delta` (a
   * legacy `advanceTime` without `worldTime` counts as that delta); nothing without one, and
   * nothing for a no-op update, which is never sent [research §1.1; F13
   * `dist/database/documents/combat.mjs` `_onUpdateOperation` → `Setting.advanceTime`; T13
   * 13.345.1 `Combat.Database.Update` `worldTime: {delta}`; types 14.366 `TurnWorldTime`,
   * `advanceTime` "honoured" when no `worldTime` is passed]. Clients read it as
   * `game.time.worldTime` once the combat's own hooks have run (the order of the two on a
   * client is not in the sources).
   */
  advanceTime(options) {
    const delta = isObject(options.worldTime) ? options.worldTime.delta : options.advanceTime;
    if (Number.isFinite(delta)) this.worldTime += delta;
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

  // ---------------------------------------------------------------- tokens
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
}

for (const part of [CombatantWrites, Messaging, TurnEvents]) {
  for (const key of Object.getOwnPropertyNames(part.prototype)) {
    if (key !== "constructor") Object.defineProperty(World.prototype, key, Object.getOwnPropertyDescriptor(part.prototype, key));
  }
}

export { isObject, missingId };
