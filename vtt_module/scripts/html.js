/**
 * Everything that turns a string into HTML goes through here. Player-controlled text (names,
 * which players rename at will, and what the sidecar echoes back from them) is escaped where it
 * becomes markup, and only there: dialog contents, chat cards, notifications. Dialog titles and
 * button labels are text (DialogV2 sets them with innerText). Tooltips use `data-tooltip-text`,
 * shown as text [T13 `helpers/interaction/tooltip-manager.d.mts`]. No Foundry global: `env` is passed in.
 * @module html
 */

const ENTITIES = Object.freeze({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" });

/** Escape text for HTML content and quoted attribute values. @param {unknown} value @returns {string} */
export function escapeHTML(value) {
  return String(value ?? "").replace(/[&<>"']/g, (c) => ENTITIES[c]);
}

/** A localizer bound to `game.i18n`. @param {object} env @returns {(key:string, data?:object) => string} */
export function translator(env) {
  return (key, data) => (data ? env.game.i18n.format(key, data) : env.game.i18n.localize(key));
}

/** A localizer whose substituted values are escaped (the template itself is ours and trusted). @param {(key:string, data?:object) => string} t */
export function escapingTranslator(t) {
  return (key, data) => (data ? t(key, Object.fromEntries(Object.entries(data).map(([k, v]) => [k, escapeHTML(v)]))) : t(key));
}

/**
 * Show a notification whose values may come from players or the sidecar (escaped here; Foundry's Notifications
 * render the message as HTML unless told otherwise). @param {"info"|"warn"|"error"} level @returns {string} the message shown
 */
export function notify(env, level, key, data) {
  const message = escapingTranslator(translator(env))(key, data);
  env.ui.notifications[level](message);
  return message;
}
