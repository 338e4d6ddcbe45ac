/**
 * Tracker badges: decorate the combat tracker's rows with each combatant's plan state.
 * Uses only the DOM of the element it is given (no Foundry globals), so a headless browser
 * can run it against a saved tracker fixture.
 * @module tracker
 */

import { badgesFor } from "./badges.js";

/** Class of the badge container added to each row (removed and rebuilt on every render). */
export const BADGES_CLASS = "initiative-sidecar-badges";

/**
 * Add badges to every `li.combatant[data-combatant-id]` under `root`.
 * @param {HTMLElement} root the tracker element (`renderCombatTracker`'s HTMLElement in v13)
 * @param {Record<string, object>} states combatant id → plan state (from its flags)
 * @param {(key:string, data?:object) => string} t localizer
 * @returns {number} how many badges were added
 */
export function decorateTracker(root, states, t) {
  const doc = root.ownerDocument;
  let count = 0;
  for (const row of root.querySelectorAll("li.combatant[data-combatant-id]")) {
    row.querySelector(`.${BADGES_CLASS}`)?.remove();
    const badges = badgesFor(states[row.dataset.combatantId], t);
    if (!badges.length) continue;
    const box = doc.createElement("div");
    box.className = BADGES_CLASS;
    for (const b of badges) {
      const span = doc.createElement("span");
      span.className = b.css;
      span.dataset.badge = b.key;
      span.dataset.tooltip = b.tooltip;
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
