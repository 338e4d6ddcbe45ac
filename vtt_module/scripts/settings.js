/**
 * The module's settings. The token and the sidecar's URL are client-scoped: they stay in the
 * GM's browser (a world setting for the URL let anyone allowed to change settings send the
 * GM's token to an address of their choosing). Foundry keeps client settings in the browser's
 * localStorage under `namespace.key`, shared by every world of the server, so their keys name
 * the world (`token-<world id>`, `url-<world id>`). `game.world` exists at `init`; `game.user`
 * does not, so both are registered as shown and `guardSettings` takes them out of a player's
 * settings window (and masks the token for the GM).
 * @module settings
 */

import { MODULE_ID, DEFAULT_STAT_PATHS } from "./constants.js";
import { elementOf } from "./compat.js";

/** Setting keys, as a frozen table. */
export const SETTINGS = Object.freeze({
  URL: "url", TOKEN: "token", RULESET: "ruleset", AUTO_APPROVE: "autoApprove",
  STAT_PATHS: "statPaths", ANNOUNCE: "announce",
  DIE_FACES: "dieFaces", SUCCESS_AT: "successAt", ONES_CANCEL: "onesCancel",
  UNSENT: "unsent", READY: "readyActors", RULES: "sidecarRules"
});

/** The token's setting key in this world (client scope is per browser, not per world). @param {object} env */
export function tokenKey(env) { return `${SETTINGS.TOKEN}-${env.game.world.id}`; }

/** The sidecar URL's setting key in this world, beside the token. @param {object} env */
export function urlKey(env) { return `${SETTINGS.URL}-${env.game.world.id}`; }

/** The sidecar's default address. */
export const DEFAULT_URL = "http://127.0.0.1:8765";

/** Register every setting (at `init`). @param {object} env @param {{onChange?: (key:string) => void}} [hooks] */
export function registerSettings(env, { onChange } = {}) {
  // a GM's world setting shown in the window (restricted) whose change makes the link reconnect
  const gmWorld = (key, type, dflt, extra = {}) => reg(key, { scope: "world", config: true, restricted: true, type, default: dflt, onChange: () => onChange?.(key), ...extra });
  const reg = (key, data, label = key) => env.game.settings.register(MODULE_ID, key, { name: `INITIATIVE_SIDECAR.settings.${label}.name`, hint: `INITIATIVE_SIDECAR.settings.${label}.hint`, ...data });
  // Client scope, keyed by world: stored in this browser only. Taken out of players' settings window.
  reg(urlKey(env), { scope: "client", config: true, type: String, default: DEFAULT_URL, onChange: () => onChange?.(SETTINGS.URL) }, SETTINGS.URL);
  reg(tokenKey(env), { scope: "client", config: true, type: String, default: "", onChange: () => onChange?.(SETTINGS.TOKEN) }, SETTINGS.TOKEN);
  const rulesets = Object.keys(RULESET_SETTINGS);
  gmWorld(SETTINGS.RULESET, String, "foundry-core", { choices: Object.fromEntries(rulesets.map((id) => [id, `INITIATIVE_SIDECAR.rulesets.${id}`])) });
  gmWorld(SETTINGS.AUTO_APPROVE, Boolean, false);
  gmWorld(SETTINGS.STAT_PATHS, String, "");
  // dice-pool (DP-3): the pool's die, its success threshold, whether ones cancel successes
  gmWorld(SETTINGS.DIE_FACES, Number, 6);
  gmWorld(SETTINGS.SUCCESS_AT, Number, 4);
  gmWorld(SETTINGS.ONES_CANCEL, Boolean, true);
  gmWorld(SETTINGS.ANNOUNCE, Boolean, true, { onChange: undefined });
  // The worlds whose last page closed with messages the sidecar never got (outbox.js): their
  // current state is sent at the next welcome. One flag per world id, in this browser.
  reg(SETTINGS.UNSENT, { scope: "client", config: false, type: Object, default: {} });
  reg(SETTINGS.READY, { scope: "world", config: false, type: Object, default: {} });
  // What the sidecar's `welcome` said about the ruleset (intents it accepts, skipped acts):
  // a world setting, so every client (players too) reads it.
  reg(SETTINGS.RULES, { scope: "world", config: false, type: Object, default: {} });
}

/** The ruleset facts the sidecar sent in its last `welcome` (empty lists before any). @param {object} env @returns {{ruleset:string|null, intents:string[], skipped_acts:string[]}} */
export function sidecarRules(env) {
  const r = getSetting(env, SETTINGS.RULES) ?? {};
  const list = (v) => (Array.isArray(v) ? v : []);
  return { ruleset: r.ruleset ?? null, intents: list(r.intents), skipped_acts: list(r.skipped_acts) };
}

/**
 * `renderSettingsConfig`: a player's window loses the token and URL fields (GM-only client settings); the GM's
 * shows the token as a password field, so a streamed or shared screen never shows it. @returns {HTMLElement|null} the token's input
 */
export function guardSettings(env, html) {
  const field = (key) => elementOf(html)?.querySelector(`[name="${MODULE_ID}.${key}"]`) ?? null;
  const input = field(tokenKey(env));
  if (!env.game.user?.isGM) { for (const f of [input, field(urlKey(env))]) if (f) (f.closest(".form-group") ?? f).remove(); }
  else if (input) { input.type = "password"; input.setAttribute("autocomplete", "off"); }
  return input;
}

/** The stat paths in force: the setting's JSON when valid, else the system's defaults. @param {string} raw @param {string} systemId @returns {Record<string,string>} */
export function statPaths(raw, systemId) {
  try {
    const parsed = raw?.trim() ? JSON.parse(raw) : null;
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed;
  } catch { /* fall back to the defaults */ }
  // The generic paths (Reaction, Wits, size...) always apply; a known system adds its own.
  return { ...DEFAULT_STAT_PATHS.other, ...(DEFAULT_STAT_PATHS[systemId] ?? {}) };
}

/**
 * The rulesets the sidecar knows (in the order the setting lists them) and what each reads, mirroring
 * `schemas/settings.schema.json` (a test checks they agree): the setting keys beside `stat_paths`, and the stats it needs.
 */
export const RULESET_SETTINGS = Object.freeze({
  "foundry-core": Object.freeze({ keys: [], stats: [] }),
  "balanced-d20": Object.freeze({ keys: ["auto_approve_rerolls"], stats: ["dex", "int", "proficient"] }),
  "dice-pool": Object.freeze({ keys: ["die_faces", "success_at", "ones_cancel"], stats: ["reaction", "wits", "size", "pool_modifier"] }),
  "storyteller": Object.freeze({ keys: [], stats: ["initiative_mod"] })
});

/** The stat paths the world's ruleset reads, only those. @param {object} env @param {string} [ruleset] @returns {Record<string,string>} */
export function rulesetStatPaths(env, ruleset = getSetting(env, SETTINGS.RULESET)) {
  const all = statPaths(getSetting(env, SETTINGS.STAT_PATHS), env.game.system?.id);
  const wanted = RULESET_SETTINGS[ruleset]?.stats ?? [];
  return Object.fromEntries(wanted.filter((k) => typeof all[k] === "string" && all[k]).map((k) => [k, all[k]]));
}

/** The connect auth's `settings`: exactly what the ruleset reads (the sidecar refuses anything else). @param {object} env @param {string} [ruleset] @returns {object} */
export function rulesetSettings(env, ruleset = getSetting(env, SETTINGS.RULESET)) {
  const spec = RULESET_SETTINGS[ruleset] ?? { keys: [], stats: [] };
  const flag = (key) => () => Boolean(getSetting(env, key)), whole = (key) => () => Math.trunc(Number(getSetting(env, key)));
  const values = { auto_approve_rerolls: flag(SETTINGS.AUTO_APPROVE), die_faces: whole(SETTINGS.DIE_FACES), success_at: whole(SETTINGS.SUCCESS_AT), ones_cancel: flag(SETTINGS.ONES_CANCEL) };
  const out = Object.fromEntries(spec.keys.map((key) => [key, values[key]()]));
  if (spec.stats.length) out.stat_paths = rulesetStatPaths(env, ruleset);
  return out;
}

/** Read a setting of this module. @param {object} env @param {string} key */
export function getSetting(env, key) { return env.game.settings.get(MODULE_ID, key); }

/** Write a setting of this module. @param {object} env @param {string} key @param {unknown} value */
export function setSetting(env, key, value) { return env.game.settings.set(MODULE_ID, key, value); }
