/**
 * Tracker badges: decorate the combat tracker's rows with each combatant's plan state.
 * Uses only the DOM of the element it is given (no Foundry globals), so a headless browser
 * can run it against a saved tracker fixture. Elements are created by the element's own
 * `ownerDocument`: a v14 tracker may live in a popped-out window with its own document.
 * @module tracker
 */

import { badgesFor } from "./badges.js";

/** Class of the badge container added to each row (removed and rebuilt on every render). */
export const BADGES_CLASS = "initiative-sidecar-badges";

/**
 * Add badges to every `li.combatant[data-combatant-id]` under `root` (`renderCombatTracker`'s element) from `states`
 * (id → plan state) and `scores` (id → plain rule score). @returns {number} how many badges were added
 */
export function decorateTracker(root, states, t, scores = {}) {
  const doc = root.ownerDocument;
  let count = 0;
  for (const row of root.querySelectorAll("li.combatant[data-combatant-id]")) {
    row.querySelector(`.${BADGES_CLASS}`)?.remove();
    const id = row.dataset.combatantId;
    const badges = badgesFor(states[id], t, scores[id] ?? null);
    if (!badges.length) continue;
    const box = doc.createElement("div");
    box.className = BADGES_CLASS;
    for (const b of badges) {
      const span = doc.createElement("span");
      span.className = b.css;
      span.dataset.badge = b.key;
      span.dataset.tooltipText = b.tooltip; // shown as text by Foundry; `data-tooltip` would be HTML
      span.setAttribute("aria-label", b.tooltip);
      span.textContent = b.text;
      box.append(span);
      count += 1;
    }
    const anchor = row.querySelector(".token-name") ?? row;
    anchor.append(box);
  }
  return count;
}

/**
 * dnd5e shows the combatants of one grouping key (the FLOORED initiative, disposition, base actor)
 * as one row placed at the first member [GitHub foundryvtt/dnd5e `CombatTracker5e#renderGroups`,
 * `Combatant5e#getGroupingKey`]. When a plan puts someone between them (a tie-break fraction), that
 * order is not the turn order: such a group is taken apart and the list put in turn order.
 * @param {HTMLElement} root the tracker element @param {string[]} order combatant ids in turn order @returns {number} groups taken apart
 */
export function ungroupSplit(root, order) {
  const at = new Map(order.map((id, i) => [id, i]));
  const rowsOf = (el) => [...el.querySelectorAll("li.combatant[data-combatant-id]")];
  const split = [...root.querySelectorAll("li.combatant-group")].filter((g) => {
    const idx = rowsOf(g).map((r) => at.get(r.dataset.combatantId)).sort((a, b) => a - b);
    return idx.some((v, k) => k > 0 && v !== idx[k - 1] + 1);
  });
  for (const group of split) group.replaceWith(...rowsOf(group));
  const list = split.length ? root.querySelector(".directory-list, .combat-tracker") : null;
  const first = (el) => Math.min(...(el.dataset.combatantId ? [el] : rowsOf(el)).map((r) => at.get(r.dataset.combatantId) ?? Infinity));
  if (list) list.append(...[...list.children].sort((a, b) => first(a) - first(b)));
  return split.length;
}
