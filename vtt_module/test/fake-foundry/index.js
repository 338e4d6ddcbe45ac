// A stand-in for Foundry VTT v13's client, written from ../shared/research/foundry-api.md.
export { World } from "./world.js";
export { sortCombatants } from "./documents.js";
export { Hooks } from "./hooks.js";
