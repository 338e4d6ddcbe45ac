/**
 * The `renderCombatTracker` hook (an HTMLElement in v13 and v14; registered at `init`, since
 * the sidebar renders before `ready`): badges on each row and, for the GM, a
 * button that downloads the world's recording from the sidecar (`export`).
 * @module tracker-ui
 */

import { decorateTracker, ungroupSplit } from "./tracker.js";
import { plainScores } from "./badges.js";
import { statesOf } from "./foundry-data.js";
import { elementOf } from "./compat.js";
import { notify, translator } from "./html.js";

/** Decorate a rendered tracker (`app`, its element `html`); the GM's button calls `api.download`. @returns {number} badges added */
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
 * Download the world's recording as the sidecar stored it (JSON Lines, what `initiative-sidecar replay` reads),
 * asked with `export`, as a `.jsonl` file (GM). @param {object} env @param {object|null} socket the welcomed connection
 * @returns {Promise<string|null>} the file's name, or null: nothing saved (the GM is told why)
 */
export async function downloadRecording(env, socket) {
  const answer = await socket?.timeout(60000).emitWithAck("export", {}).catch((e) => ({ ok: false, error: { message: String(e?.message ?? e) } }));
  const failed = answer?.error?.message ?? env.game.i18n.localize("INITIATIVE_SIDECAR.link.noSidecar");
  if (!answer?.ok) { notify(env, "warn", "INITIATIVE_SIDECAR.link.exportFailed", { message: failed }); return null; }
  if (!answer.recording) { notify(env, "info", "INITIATIVE_SIDECAR.notify.recordingEmpty"); return null; }
  const name = `initiative-sidecar-${env.game.world.id}-${new Date().toISOString().replace(/[:.]/g, "-")}.jsonl`;
  env.foundry.utils.saveDataToFile(answer.recording, "application/x-ndjson", name);
  return name;
}
