// Foundry generations the double imitates, and its record of deprecated calls.
//
// 13: build 350 (13.350, the v13 source the research read [F13]; 13.351 may be chosen).
// 14: build 369, the latest stable v14 build in the research's source list
//     (../shared/research/foundry-api.md §10: felddy/foundryvtt-docker release tags run
//     14.359 … 14.369; its issues #1441/#1479/#1502 show 14.362, 14.365, 14.366 as stable
//     releases in May–August 2026).

export const GENERATIONS = Object.freeze([13, 14]);
export const DEFAULT_BUILDS = Object.freeze({ 13: 350, 14: 369 });

/**
 * The generation a World gets when a test does not say: `FAKE_FOUNDRY_GENERATION` (so the
 * whole suite can run again as v14: `FAKE_FOUNDRY_GENERATION=14 npm test`), else 13.
 */
export function defaultGeneration() {
  const g = Number(process.env.FAKE_FOUNDRY_GENERATION ?? 13);
  if (!GENERATIONS.includes(g)) throw new Error(`FAKE_FOUNDRY_GENERATION must be one of ${GENERATIONS}, not ${process.env.FAKE_FOUNDRY_GENERATION}`);
  return g;
}

/** `game.release` of a generation/build [D13/D14 `foundry.config.ReleaseData`: generation, build, version]. */
export function releaseOf(generation, build = DEFAULT_BUILDS[generation]) {
  if (!GENERATIONS.includes(generation)) throw new Error(`generation must be one of ${GENERATIONS}`);
  return Object.freeze({ generation, build, version: `${generation}.${build}`, channel: "stable", maxGeneration: generation, maxStableGeneration: generation, suffix: "" });
}

/**
 * Deprecations: Foundry logs `logCompatibilityWarning(message, {since, until})` when a
 * deprecated API is used. The double records each on the client that made the call and in
 * `world.deprecations`, so a test can fail on any (`assertNoDeprecations`).
 */
export function recordDeprecation(client, message, { since, until }) {
  const entry = { user: client.userId, generation: client.world.generation, message, since, until };
  client.deprecations.push(entry);
  client.world.deprecations.push(entry);
  return entry;
}

/** Throw when a world or client recorded a deprecated call. */
export function assertNoDeprecations(worldOrClient) {
  const list = worldOrClient.deprecations;
  if (list.length) throw new Error(`deprecated Foundry API used:\n${list.map((d) => `  [v${d.generation} ${d.user}] ${d.message} (since ${d.since}, until ${d.until})`).join("\n")}`);
}

/**
 * Can a package with this `compatibility` be activated on this release? A `maximum` below
 * the running core refuses it [research §10; foundryvtt issue #4304], and so does a
 * `minimum` above it. A generation-only bound ("13") covers every build of that
 * generation; a dotted one ("13.347") is compared build by build.
 * @returns {{ok: boolean, reason: string|null}}
 */
export function packageCompatible({ minimum, maximum } = {}, release) {
  const cmp = (bound) => {
    const [g, b] = String(bound).split(".").map(Number);
    if (release.generation !== g || b === undefined) return Math.sign(release.generation - g);
    return Math.sign(release.build - b);
  };
  if (maximum !== undefined && maximum !== null && maximum !== "" && cmp(maximum) > 0) return { ok: false, reason: `compatibility.maximum ${maximum} is below the running core ${release.version}` };
  if (minimum !== undefined && minimum !== null && minimum !== "" && cmp(minimum) < 0) return { ok: false, reason: `compatibility.minimum ${minimum} is above the running core ${release.version}` };
  return { ok: true, reason: null };
}
