/**
 * The `renderCombatTracker` hook (an HTMLElement in v13 and v14; registered at `init`, since
 * the sidebar renders before `ready`): badges on each row and, for the GM, a
 * button that downloads the world's recording from the sidecar.
 * @module tracker-ui
 */

import { decorateTracker, ungroupSplit } from "./tracker.js";
import { plainScores } from "./badges.js";
import { statesOf, translator } from "./foundry-data.js";
import { elementOf } from "./compat.js";
import { notify } from "./html.js";

/**
 * Decorate a rendered tracker.
 * @param {object} env @param {object} app the CombatTracker @param {HTMLElement|object} html
 * @param {{download:() => void}} api
 * @returns {number} badges added
 */
export function onRenderTracker(env, app, html, api) {
  const element = elementOf(html);
  if (!element) return 0;
  const combat = app?.viewed ?? env.game.combat;
  if (combat) ungroupSplit(element, combat.turns.map((c) => c.id));
  const count = combat ? decorateTracker(element, statesOf(combat), translator(env), plainScores(combat.combatants)) : 0;
  if (env.game.user.isGM && !element.querySelector(".initiative-sidecar-download")) {
    const b = element.ownerDocument.createElement("button");
    b.type = "button";
    b.className = "initiative-sidecar-download inline-control icon fa-solid fa-file-arrow-down";
    b.dataset.tooltipText = env.game.i18n.localize("INITIATIVE_SIDECAR.action.download");
    b.setAttribute("aria-label", b.dataset.tooltipText);
    b.addEventListener("click", () => api.download());
    (element.querySelector(".combat-tracker-header, header") ?? element).append(b);
  }
  return count;
}

/**
 * Download the recording as a `.jsonl` file (GM).
 * @param {object} env @param {string} text the recording (JSON Lines)
 */
export function downloadRecording(env, text) {
  if (!text) { notify(env, "info", "INITIATIVE_SIDECAR.notify.recordingEmpty"); return null; }
  const save = env.foundry?.utils?.saveDataToFile ?? env.saveDataToFile;
  const name = `initiative-sidecar-${env.game.world.id}-${new Date().toISOString().replace(/[:.]/g, "-")}.jsonl`;
  save(text, "application/x-ndjson", name);
  return name;
}
