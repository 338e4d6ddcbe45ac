/**
 * The `renderCombatTracker` hook: badges on each row (v13 passes an HTMLElement, v12 a
 * jQuery object) and, for the GM while recording, a button that downloads the recording.
 * @module tracker-ui
 */

import { decorateTracker } from "./tracker.js";
import { statesOf, translator } from "./foundry-data.js";
import { getSetting, SETTINGS } from "./settings.js";

/**
 * Decorate a rendered tracker.
 * @param {object} env @param {object} app the CombatTracker @param {HTMLElement|object} html
 * @param {{download:() => void}} api
 * @returns {number} badges added
 */
export function onRenderTracker(env, app, html, api) {
  const element = html?.querySelector ? html : html?.[0];
  if (!element) return 0;
  const combat = app?.viewed ?? env.game.combat;
  const count = combat ? decorateTracker(element, statesOf(combat), translator(env)) : 0;
  if (env.game.user.isGM && getSetting(env, SETTINGS.RECORD) && !element.querySelector(".initiative-sidecar-download")) {
    const b = element.ownerDocument.createElement("button");
    b.type = "button";
    b.className = "initiative-sidecar-download inline-control icon fa-solid fa-file-arrow-down";
    b.dataset.tooltip = env.game.i18n.localize("INITIATIVE_SIDECAR.action.download");
    b.setAttribute("aria-label", b.dataset.tooltip);
    b.addEventListener("click", () => api.download());
    (element.querySelector(".combat-tracker-header, header") ?? element).append(b);
  }
  return count;
}

/**
 * Download the recording as a `.jsonl` file (GM).
 * @param {object} env @param {import("./recorder.js").Recorder} recorder
 */
export function downloadRecording(env, recorder) {
  const text = recorder?.text() ?? "";
  if (!text) { env.ui.notifications.info(env.game.i18n.localize("INITIATIVE_SIDECAR.notify.recordingEmpty")); return null; }
  const save = env.foundry?.utils?.saveDataToFile ?? env.saveDataToFile;
  const name = `initiative-sidecar-${env.game.world.id}-${new Date().toISOString().replace(/[:.]/g, "-")}.jsonl`;
  save(text, "application/x-ndjson", name);
  return name;
}
