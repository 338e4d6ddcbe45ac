// Turn-order comparators of core and of the systems a test world can imitate. Each is a
// plain function: Foundry passes `_sortCombatants` UNBOUND to Array#sort, so `this` is
// undefined inside it [research §3 "Gotcha"]; a system reaches its data through the
// combatants (`a.parent`, `a.token`, `a.actor`).

/**
 * Core [research §3, F13 `client/documents/combat.mjs` `_sortCombatants`]: initiative
 * descending, a non-numeric/null initiative counts as -Infinity (last), ties by `_id`
 * string compare (`a.id > b.id ? 1 : -1`, never 0). Unchanged in v14 [research §10].
 */
export function coreSort(a, b) {
  const ia = Number.isFinite(a.initiative) ? a.initiative : -Infinity;
  const ib = Number.isFinite(b.initiative) ? b.initiative : -Infinity;
  return (ib - ia) || (a.id > b.id ? 1 : -1);
}

/**
 * dnd5e `Combat5e._sortCombatants` [GitHub foundryvtt/dnd5e `module/documents/combat.mjs`,
 * identical in tags release-4.3.0 and release-5.3.3 (which supports 13.347–14)]: a different
 * initiative → core; an exact tie (both null included, `a.initiative !== b.initiative` is
 * false) → when the two tokens' base actors differ or one is missing, compare
 * `"<base actor name>.<base actor id>"` with `localeCompare(…, game.i18n.lang)`; same base
 * actor → the combatants' names.
 */
export function dnd5eSort(a, b) {
  if (a.initiative !== b.initiative) return coreSort(a, b);
  const lang = a.parent?.client?.game.i18n.lang ?? "en";
  const baseA = a.token?.baseActor, baseB = b.token?.baseActor;
  if (!baseA || !baseB || baseA !== baseB) {
    const key = (c) => `${c.token?.baseActor?.name ?? ""}.${c.token?.baseActor?.id ?? ""}`;
    return key(a).localeCompare(key(b), lang);
  }
  return a.name.localeCompare(b.name, lang);
}

/**
 * pf2e `EncounterPF2e._sortCombatants` [GitHub foundryvtt/pf2e `src/module/encounter/
 * document.ts`; `CombatantPF2e.overridePriority(initiative)` = `flags.pf2e.overridePriority
 * [initiative] ?? null` in `combatant.ts`]: only when BOTH initiatives are numbers and equal,
 * the lower priority goes first, priority = the override for that initiative, else the
 * actor's `system.attributes.initiative.tiebreakPriority` (0–2), else 3; equal priorities →
 * `a.id.localeCompare(b.id)`. Anything else → core.
 */
export function pf2eSort(a, b) {
  const tie = typeof a.initiative === "number" && typeof b.initiative === "number" && a.initiative === b.initiative;
  if (!tie) return coreSort(a, b);
  const priority = (c) => c.flags?.pf2e?.overridePriority?.[c.initiative ?? 0]
    ?? (c.actor?.system?.attributes?.initiative ? c.actor.system.attributes.initiative.tiebreakPriority : 3);
  const pa = priority(a), pb = priority(b);
  return pa === pb ? a.id.localeCompare(b.id) : pa - pb;
}

export const SORTS = Object.freeze({ core: coreSort, dnd5e: dnd5eSort, pf2e: pf2eSort });

/** The comparator a world uses: `sort` if given, else its system's, else core. */
export function sortFor({ sort, system }) {
  if (typeof sort === "function") return sort;
  const name = sort ?? (system in SORTS ? system : "core");
  if (!SORTS[name]) throw new Error(`unknown sort ${name}: one of ${Object.keys(SORTS)}`);
  return SORTS[name];
}
