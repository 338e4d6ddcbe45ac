// A stand-in for Foundry VTT v13 and v14 clients, written from ../shared/research/foundry-api.md
// and the public sources it cites (README.md in this folder lists each behaviour).
export { World, missingId } from "./world.js";
export { coreSort, dnd5eSort, pf2eSort, SORTS } from "./sorting.js";
export { Hooks } from "./hooks.js";
export { GENERATIONS, DEFAULT_BUILDS, releaseOf, assertNoDeprecations, packageCompatible } from "./generation.js";
export { ForcedDeletion, DELETE, diffObject } from "./utils.js";
export { eachGeneration, selectedGenerations, makeTable, addCombat, cast, browser, GM, ALICE, BOB } from "./testing.js";
/** Core's sort under its old name (before systems' comparators were selectable). */
export { coreSort as sortCombatants } from "./sorting.js";
