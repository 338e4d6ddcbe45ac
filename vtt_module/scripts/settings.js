/**
 * The module's settings. The token is client-scoped: it stays in the GM's browser, and a
 * player's own copy is empty. `game.user` does not exist yet at `init`, so the GM-only
 * client settings are registered as shown and `hideGMOnlySettings` takes them out of the
 * settings window for players.
 * @module settings
 */

import { MODULE_ID, RULESETS, DEFAULT_STAT_PATHS } from "./constants.js";
import { elementOf } from "./compat.js";

/** Setting keys, as a frozen table. */
export const SETTINGS = Object.freeze({
  URL: "url", TOKEN: "token", RULESET: "ruleset", AUTO_APPROVE: "autoApprove",
  STAT_PATHS: "statPaths", RECORD: "record", ANNOUNCE: "announce",
  OUTBOX: "outbox", RECORDING: "recording", READY: "readyActors", RULES: "sidecarRules"
});

/** The sidecar's default address. */
export const DEFAULT_URL = "http://127.0.0.1:8765";

/**
 * Register every setting (call at `init`).
 * @param {object} env Foundry globals (`game`)
 * @param {{onChange?: (key:string) => void}} [hooks]
 */
export function registerSettings(env, { onChange } = {}) {
  const { game } = env;
  const changed = (key) => () => onChange?.(key);
  const reg = (key, data) => game.settings.register(MODULE_ID, key, {
    name: `INITIATIVE_SIDECAR.settings.${key}.name`,
    hint: `INITIATIVE_SIDECAR.settings.${key}.hint`,
    ...data
  });
  reg(SETTINGS.URL, { scope: "world", config: true, restricted: true, type: String, default: DEFAULT_URL, onChange: changed(SETTINGS.URL) });
  // Client scope: stored in this browser only. Taken out of players' settings window.
  reg(SETTINGS.TOKEN, { scope: "client", config: true, type: String, default: "", onChange: changed(SETTINGS.TOKEN) });
  reg(SETTINGS.RULESET, {
    scope: "world", config: true, restricted: true, type: String, default: "foundry-core",
    choices: Object.fromEntries(RULESETS.map((id) => [id, `INITIATIVE_SIDECAR.rulesets.${id}`])),
    onChange: changed(SETTINGS.RULESET)
  });
  reg(SETTINGS.AUTO_APPROVE, { scope: "world", config: true, restricted: true, type: Boolean, default: false, onChange: changed(SETTINGS.AUTO_APPROVE) });
  reg(SETTINGS.STAT_PATHS, { scope: "world", config: true, restricted: true, type: String, default: "" });
  reg(SETTINGS.RECORD, { scope: "client", config: true, type: Boolean, default: false, onChange: changed(SETTINGS.RECORD) });
  reg(SETTINGS.ANNOUNCE, { scope: "world", config: true, restricted: true, type: Boolean, default: true });
  // Internal state on the GM's machine (not shown): the outbox with seq, the recording.
  reg(SETTINGS.OUTBOX, { scope: "client", config: false, type: Object, default: {} });
  reg(SETTINGS.RECORDING, { scope: "client", config: false, type: Array, default: [] });
  reg(SETTINGS.READY, { scope: "world", config: false, type: Object, default: {} });
  // What the sidecar's `welcome` said about the ruleset (intents it accepts, skipped acts,
  // which settings it reads): a world setting, so every client (players too) reads it.
  reg(SETTINGS.RULES, { scope: "world", config: false, type: Object, default: {} });
}

/**
 * The ruleset facts the sidecar sent in its last `welcome` (empty lists before any).
 * @param {object} env @returns {{ruleset:string|null, intents:string[], skipped_acts:string[]}}
 */
export function sidecarRules(env) {
  const r = getSetting(env, SETTINGS.RULES) ?? {};
  return {
    ruleset: r.ruleset ?? null,
    intents: Array.isArray(r.intents) ? r.intents : [],
    skipped_acts: Array.isArray(r.skipped_acts) ? r.skipped_acts : []
  };
}

/** Client settings only a GM uses. */
export const GM_ONLY = Object.freeze([SETTINGS.TOKEN, SETTINGS.RECORD]);

/**
 * `renderSettingsConfig`: for a player, remove the GM-only client settings from the window.
 * @param {object} env @param {HTMLElement} html
 * @returns {number} how many were removed
 */
export function hideGMOnlySettings(env, html) {
  if (env.game.user?.isGM) return 0;
  const root = elementOf(html);
  let removed = 0;
  for (const key of GM_ONLY) {
    const input = root?.querySelector?.(`[name="${MODULE_ID}.${key}"]`);
    const group = input?.closest?.(".form-group") ?? input;
    if (group) { group.remove(); removed++; }
  }
  return removed;
}

/**
 * The stat paths in force: the setting's JSON when valid, else the system's defaults.
 * @param {string} raw the setting's text @param {string} systemId
 * @returns {Record<string,string>}
 */
export function statPaths(raw, systemId) {
  if (raw && raw.trim()) {
    try {
      const parsed = JSON.parse(raw);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed;
    } catch { /* fall back to the defaults */ }
  }
  // The generic paths (Reaction, Wits, size...) always apply; a known system adds its own.
  return { ...DEFAULT_STAT_PATHS.other, ...(DEFAULT_STAT_PATHS[systemId] ?? {}) };
}

/**
 * Read a setting of this module.
 * @param {object} env @param {string} key
 */
export function getSetting(env, key) { return env.game.settings.get(MODULE_ID, key); }

/**
 * Write a setting of this module.
 * @param {object} env @param {string} key @param {unknown} value
 */
export function setSetting(env, key, value) { return env.game.settings.set(MODULE_ID, key, value); }
