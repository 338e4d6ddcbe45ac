/**
 * The module's own dialogs: their HTML `content` built from escaped parts (DialogV2 puts it
 * into the page as markup), their titles and button labels left as text (DialogV2 sets those
 * with innerText: escaped, a name would read `Do&#39;Urden`). Pure but for `askAnchor`, so
 * the hostile-name test renders exactly this markup in headless Chromium.
 * @module dialogs
 */

import { escapeHTML, escapingTranslator, notify } from "./html.js";

/** @typedef {(key:string, data?:object) => string} Translate */

/** Initiative dash (BI-4): how much faster (the sidecar checks the limit). @param {Translate} t */
export function dashContent(t) {
  return `<label>${t("INITIATIVE_SIDECAR.dialog.dashAmount")} <input type="number" name="amount" min="1" step="1" value="1" required></label>`;
}

/**
 * The buttons of "act after/before whom": one per other visible combatant, its name the label
 * as text (DialogV2 sets a label with innerText). @returns {Array<{action:string, label:string}>}
 */
export function anchorButtons(turns, selfId) {
  return turns.filter((c) => c.id !== selfId && c.visible !== false).map((c) => ({ action: c.id, label: String(c.name ?? "?") }));
}

/**
 * Ask whom to act after/before. With nobody else visible there is no one to pick (and
 * `DialogV2.wait` throws without buttons): the player is told so instead. @returns {Promise<string|null>} the chosen id
 */
export async function askAnchor(env, t, turns, selfId) {
  const buttons = anchorButtons(turns, selfId);
  if (!buttons.length) { notify(env, "info", "INITIATIVE_SIDECAR.link.nobodyToAnchor"); return null; }
  return env.foundry.applications.api.DialogV2.wait({ window: { title: t("INITIATIVE_SIDECAR.dialog.anchorTitle") }, buttons, rejectClose: false });
}

/** Ready an action (BI-5): mode, trigger, action and an optional target among the others. @param {Translate} t @param {object[]} turns @param {string} selfId */
export function readiedContent(t, turns, selfId) {
  const options = turns.filter((c) => c.id !== selfId && c.visible !== false)
    .map((c) => `<option value="${escapeHTML(c.id)}">${escapeHTML(c.name ?? "?")}</option>`).join("");
  return `<label>${t("INITIATIVE_SIDECAR.dialog.readiedMode")} <select name="mode">`
    + `<option value="standard">${t("INITIATIVE_SIDECAR.dialog.standard")}</option>`
    + `<option value="preemptive">${t("INITIATIVE_SIDECAR.dialog.preemptive")}</option></select></label>`
    + `<label>${t("INITIATIVE_SIDECAR.dialog.trigger")} <input type="text" name="trigger" required></label>`
    + `<label>${t("INITIATIVE_SIDECAR.dialog.readiedAction")} <input type="text" name="action" required></label>`
    + `<label>${t("INITIATIVE_SIDECAR.dialog.target")} <select name="target_id"><option value=""></option>${options}</select></label>`;
}

/** Ready to strike (BI-3). @param {Translate} t */
export function readyContent(t) {
  return `<label><input type="checkbox" name="weapon_ready" checked> ${t("INITIATIVE_SIDECAR.dialog.readyWeapon")}</label>`
    + `<label><input type="checkbox" name="sees" checked> ${t("INITIATIVE_SIDECAR.dialog.readySees")}</label>`;
}

/** The GM's hand-set initiative: the rule score shown plainly, the stored value editable. @param {Translate} t @param {{name?:string, initiative:number|null, score?:number|null}} c */
export function setInitiativeContent(t, c) {
  const value = Number.isFinite(c.initiative) ? c.initiative : "";
  const score = c.score ?? (Number.isFinite(c.initiative) ? Math.trunc(c.initiative) : "—");
  return `<p>${escapingTranslator(t)("INITIATIVE_SIDECAR.dialog.setInitiative", { name: c.name ?? "?", score })}</p>`
    + `<label>${t("INITIATIVE_SIDECAR.dialog.initiative")} <input type="number" name="initiative" step="any" value="${escapeHTML(value)}" required></label>`;
}
