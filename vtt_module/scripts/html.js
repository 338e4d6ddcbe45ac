/**
 * Everything that turns a string into HTML goes through here. Player-controlled text (names,
 * which players rename at will, and what the sidecar echoes back from them) is escaped where it
 * becomes markup, and only there: dialog contents, chat cards, notifications. Dialog titles and
 * button labels are text (DialogV2 sets them with innerText). Tooltips use `data-tooltip-text`,
 * shown as text [T13 `helpers/interaction/tooltip-manager.d.mts`]. Pure: no Foundry global.
 * @module html
 */

const ENTITIES = Object.freeze({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" });

/** Escape text for HTML content and quoted attribute values. @param {unknown} value @returns {string} */
export function escapeHTML(value) {
  return String(value ?? "").replace(/[&<>"']/g, (c) => ENTITIES[c]);
}

/**
 * A localizer whose substituted values are escaped (the template itself is ours and trusted).
 * @param {(key:string, data?:object) => string} t a plain localizer
 * @returns {(key:string, data?:object) => string}
 */
export function escapingTranslator(t) {
  return (key, data) => (data ? t(key, Object.fromEntries(Object.entries(data).map(([k, v]) => [k, escapeHTML(v)]))) : t(key));
}

/**
 * Show a notification whose values may come from players or the sidecar (escaped here;
 * Foundry's Notifications render the message as HTML unless told otherwise).
 * @param {object} env @param {"info"|"warn"|"error"} level @param {string} key @param {object} [data]
 * @returns {string} the message shown
 */
export function notify(env, level, key, data) {
  const { i18n } = env.game;
  const message = escapingTranslator((k, d) => (d ? i18n.format(k, d) : i18n.localize(k)))(key, data);
  env.ui.notifications[level](message);
  return message;
}
