/**
 * The combat's own turn order after a change of initiatives, as the running system sorts it
 * (dnd5e sorts ties by name, pf2e by its own priority: ../shared/research/foundry-api.md
 * section 9). Foundry itself finds the turn of a combatant after a change this way: it clones
 * the combat, applies the change with `updateSource` and calls `setupTurns()` [F13
 * `client/documents/combatant.mjs` `_preUpdateOperation`]. The module does the same, so the
 * `turn` it writes is an index into the order every client will compute.
 * @module turns
 */

import { foundrySort } from "./plan.js";

/**
 * Combatant ids in the order the combat will have once `rows` are applied.
 * @param {object} combat a Combat document
 * @param {Array<{_id:string, initiative:number}>} rows initiative changes
 * @returns {string[]}
 */
export function sortedAfter(combat, rows) {
  if (typeof combat.clone === "function") {
    const clone = combat.clone({}, { keepId: true });
    if (rows.length) clone.updateSource({ combatants: rows.map((r) => ({ _id: r._id, initiative: r.initiative })) });
    const turns = clone.setupTurns?.() ?? clone.turns;
    return turns.map((c) => c.id);
  }
  // A stand-in without clone(): the system's comparator over the live combatants.
  const values = new Map(rows.map((r) => [r._id, r.initiative]));
  const list = [...combat.combatants].map((c) => (values.has(c.id)
    ? Object.create(c, { initiative: { value: values.get(c.id) }, _source: { value: { ...c._source, initiative: values.get(c.id) } } })
    : c));
  if (typeof combat._sortCombatants === "function") return list.sort(combat._sortCombatants).map((c) => c.id);
  return foundrySort(list.map((c) => ({ _id: c.id, initiative: c.initiative }))).map((c) => c._id);
}

/** A `sortAfter` bound to one combat (for plan.js). @param {object} combat */
export function sorterFor(combat) {
  return (rows) => sortedAfter(combat, rows);
}
