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
  DIE_FACES: "dieFaces", SUCCESS_AT: "successAt", ONES_CANCEL: "onesCancel",
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
  reg(SETTINGS.STAT_PATHS, { scope: "world", config: true, restricted: true, type: String, default: "", onChange: changed(SETTINGS.STAT_PATHS) });
  // dice-pool (DP-3): the pool's die, its success threshold, whether ones cancel successes
  reg(SETTINGS.DIE_FACES, { scope: "world", config: true, restricted: true, type: Number, default: 6, onChange: changed(SETTINGS.DIE_FACES) });
  reg(SETTINGS.SUCCESS_AT, { scope: "world", config: true, restricted: true, type: Number, default: 4, onChange: changed(SETTINGS.SUCCESS_AT) });
  reg(SETTINGS.ONES_CANCEL, { scope: "world", config: true, restricted: true, type: Boolean, default: true, onChange: changed(SETTINGS.ONES_CANCEL) });
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
 * What each ruleset reads, mirroring `schemas/settings.schema.json` (a test checks they agree):
 * the setting keys beside `stat_paths`, and the stats whose paths it needs.
 */
export const RULESET_SETTINGS = Object.freeze({
  "foundry-core": Object.freeze({ keys: [], stats: [] }),
  "balanced-d20": Object.freeze({ keys: ["auto_approve_rerolls"], stats: ["dex", "int", "proficient"] }),
  "dice-pool": Object.freeze({ keys: ["die_faces", "success_at", "ones_cancel"], stats: ["reaction", "wits", "size", "pool_modifier"] }),
  "storyteller": Object.freeze({ keys: [], stats: ["initiative_mod"] })
});

/**
 * The stat paths the world's ruleset reads (the setting's JSON, else the system's defaults),
 * only those. @param {object} env @param {string} [ruleset]
 * @returns {Record<string,string>}
 */
export function rulesetStatPaths(env, ruleset = getSetting(env, SETTINGS.RULESET)) {
  const all = statPaths(getSetting(env, SETTINGS.STAT_PATHS), env.game.system?.id);
  const wanted = RULESET_SETTINGS[ruleset]?.stats ?? [];
  return Object.fromEntries(wanted.filter((k) => typeof all[k] === "string" && all[k]).map((k) => [k, all[k]]));
}

/**
 * The connect auth's `settings`: exactly what the ruleset reads (schemas/settings.schema.json);
 * the sidecar refuses anything else with `invalid_message`.
 * @param {object} env @param {string} [ruleset] @returns {object}
 */
export function rulesetSettings(env, ruleset = getSetting(env, SETTINGS.RULESET)) {
  const spec = RULESET_SETTINGS[ruleset] ?? { keys: [], stats: [] };
  const values = {
    auto_approve_rerolls: () => Boolean(getSetting(env, SETTINGS.AUTO_APPROVE)),
    die_faces: () => Math.trunc(Number(getSetting(env, SETTINGS.DIE_FACES))),
    success_at: () => Math.trunc(Number(getSetting(env, SETTINGS.SUCCESS_AT))),
    ones_cancel: () => Boolean(getSetting(env, SETTINGS.ONES_CANCEL))
  };
  const out = {};
  for (const key of spec.keys) out[key] = values[key]();
  if (spec.stats.length) out.stat_paths = rulesetStatPaths(env, ruleset);
  return out;
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
