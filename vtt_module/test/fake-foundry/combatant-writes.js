// Combatant writes of the fake server (mixed into World): create, update and delete
// Combatants the way Foundry does — pre-hooks and the diff on the initiating client, which
// also computes `options.combatTurn` on a clone; then every client applies the change and
// runs the combatant hooks BEFORE its combat re-sorts [research §1.2, §9].

import { deepClone, expandObject, mergeInto, diffObject, overTheWire } from "./utils.js";

/** Foundry's error for an embedded id that does not exist (update/delete). */
export function missingId(id) {
  return new Error(`undefined id [${id}] does not exist in the EmbeddedCollection collection`);
}

export class CombatantWrites {
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

  /**
   * `updateEmbeddedDocuments("CombatantGroup", rows)` (v13 groups embedded in the Combat,
   * research §2): an unknown id is refused; `updateCombatantGroup` fires on every client, then
   * the combat re-sorts. Decision (sources silent): the current combatant stays current, as for
   * a combatant's change (`combatTurn` from a clone), with no turn events.
   */
  async updateGroups(client, combatId, rows, options = {}) {
    const doc = client.game.combats.get(combatId);
    for (const row of rows) if (!doc._source.groups?.some((g) => g._id === row._id)) throw missingId(row._id);
    const accepted = rows.map((r) => ({ _id: r._id, ...diffObject(doc._source.groups.find((g) => g._id === r._id), expandObject(r)) })).filter((r) => Object.keys(r).length > 1);
    if (!accepted.length) return [];
    options = { ...options, ...this.combatTurnAfter(client, doc, (s) => { for (const r of accepted) mergeInto(s.groups.find((g) => g._id === r._id), deepClone(r)); }) };
    await this.tick();
    const master = this.combats.get(combatId);
    for (const r of accepted) mergeInto(master.groups.find((g) => g._id === r._id), deepClone(r));
    if (master.round > 0 && Number.isInteger(options.combatTurn)) master.turn = options.combatTurn;
    this.updates += 1;
    this.record("updateGroups", { user: client.userId, own: Boolean(options["initiative-sidecar"]?.own), n: accepted.length });
    for (const c of this.clients) {
      const d = c.game.combats.get(combatId);
      for (const r of accepted) mergeInto(d._source.groups.find((g) => g._id === r._id), deepClone(r));
      for (const r of accepted) c.Hooks.callAll("updateCombatantGroup", { id: r._id, parent: d }, deepClone(r), { ...deepClone(options), parent: d }, client.userId);
      d._onModifyCombatants(options.combatTurn);
    }
    this.renderTrackers();
    return accepted;
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

}
