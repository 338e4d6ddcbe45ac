/**
 * The differences between Foundry 13 and 14 the module meets, each with one code path per
 * generation, chosen by `game.release.generation` [D13/D14 `foundry.Game#release`]. Nothing
 * else in the module asks which Foundry it runs on. Sources: ../shared/research/foundry-api.md
 * section 10; docs/module.md lists them.
 * @module compat
 */

/** Foundry's generation (13 or 14). @param {object} env */
export function generation(env) {
  const g = Number(env.game?.release?.generation);
  return Number.isFinite(g) && g >= 14 ? 14 : 13;
}

/**
 * One key of update data that deletes `key` from the object at `path`, as `[update key, value]`.
 * v13: `path.-=key: null`; v14 deprecates that (removed in v16) for the `_del` operator
 * (`foundry.data.operators.ForcedDeletion`) [rqg issue #890; dnd5e 5.3.3 `module/documents/item.mjs`].
 */
export function deletion(env, path, key) {
  if (generation(env) >= 14) {
    return [`${path}.${key}`, env._del];
  }
  return [`${path}.-=${key}`, null];
}

/**
 * A context-menu entry from `{label, icon, visible(el), run(el)}`. v13 reads `{name, icon, condition(li), callback(li)}`;
 * v14 deprecates those names (removed in v16) for `{label, icon, visible(target), onClick(event, target)}`
 * [D14 ContextMenuEntry; foundry-vtt-types `context-menu.d.mts`].
 */
export function menuEntry(env, { label, icon, visible, run }) {
  if (generation(env) >= 14) {
    return { label, icon, visible: (target) => visible(target), onClick: (_event, target) => run(target) };
  }
  return { name: label, icon, condition: (li) => visible(li), callback: (li) => run(li) };
}

/**
 * Message options that keep a roll with the GMs (as Foundry does for a hidden combatant's initiative).
 * v13: `rollMode: "gmroll"`; v14: `messageMode: "gm"` [foundry-vtt-types `roll.d.mts`; dnd5e issue #6958]. @param {object} env
 */
export function gmOnlyMessage(env) {
  return generation(env) >= 14 ? { messageMode: "gm" } : { rollMode: "gmroll" };
}

/** The HTMLElement a render hook or context menu gives (both generations; v12's jQuery is not supported). @param {unknown} html @returns {HTMLElement|null} */
export function elementOf(html) {
  return html && typeof html === "object" && "querySelector" in html ? /** @type {HTMLElement} */ (html) : null;
}
