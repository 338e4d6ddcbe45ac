/**
 * Prompts from the sidecar (reroll offers, GM approvals, rolls to make, opposed checks):
 * which user sees them, the DialogV2 each becomes, and the intent each answer sends.
 * @module prompts
 */

import { rollReroll } from "./initiative.js";
import { getSetting, SETTINGS } from "./settings.js";
import { escapingTranslator, translator } from "./html.js";
import * as log from "./log.js";

/**
 * Who must see a prompt: `"gm"` → the active GM; a list → those of them online, else the GM.
 * @param {{to:"gm"|string[]}} prompt @param {string[]} activeUserIds @param {string} gmId @returns {string[]}
 */
export function promptRecipients(prompt, activeUserIds, gmId) {
  if (prompt.to === "gm") return [gmId];
  const online = prompt.to.filter((id) => activeUserIds.includes(id));
  return online.length ? online : [gmId];
}

/**
 * The dialog for a prompt, as plain data. @param {object} prompt @param {(key:string, data?:object) => string} t
 * @param {string} name the combatant's name @returns {{type:"confirm"|"input"|"roll"|"none", title:string, content:string, fields?:string[]}}
 */
export function promptDialog(prompt, t, name) {
  const d = prompt.data ?? {};
  const values = { rule: prompt.rule ?? "", name: name ?? "?", natural: d.natural ?? "?" };
  // the title is text (DialogV2 sets it with innerText); in the content, markup, every
  // substituted value is escaped: the name is a player's, the rest comes over the wire
  const title = (key) => t(key, values);
  const fmt = (key) => escapingTranslator(t)(key, values);
  switch (prompt.kind) {
    case "reroll":
      return { type: "confirm", title: title("INITIATIVE_SIDECAR.dialog.rerollTitle"), content: `<p>${fmt("INITIATIVE_SIDECAR.dialog.reroll")}</p>` };
    case "reroll.approval":
      return { type: "confirm", title: title("INITIATIVE_SIDECAR.dialog.approvalTitle"), content: `<p>${fmt("INITIATIVE_SIDECAR.dialog.approval")}</p>` };
    case "reroll.roll":
      return { type: "roll", title: title("INITIATIVE_SIDECAR.dialog.rerollRollTitle"), content: "" };
    case "opposed_check":
      return { type: "input", title: title("INITIATIVE_SIDECAR.dialog.opposedTitle"), fields: ["actor_total", "target_total"],
        content: `<p>${fmt("INITIATIVE_SIDECAR.dialog.opposed")}</p><label>${t("INITIATIVE_SIDECAR.dialog.actorTotal")} <input type="number" name="actor_total" required></label>`
          + `<label>${t("INITIATIVE_SIDECAR.dialog.targetTotal")} <input type="number" name="target_total" required></label>` };
    default:
      return { type: "none", title: String(prompt.kind), content: "" };
  }
}

/** The intent that answers a prompt, or null (dismissed). @param {object} prompt @param {unknown} answer the dialog's result @returns {object|null} */
export function promptAnswer(prompt, answer) {
  if (answer === null || answer === undefined) return null;
  const base = { combat_id: prompt.combat_id ?? undefined };
  switch (prompt.kind) {
    case "reroll":
      return { ...base, kind: "reroll.decide", args: { prompt_id: prompt.prompt_id, accept: Boolean(answer) } };
    case "reroll.approval":
      return { ...base, kind: "reroll.approve", args: { prompt_id: prompt.prompt_id, approve: Boolean(answer) } };
    case "opposed_check": {
      const a = Number(answer.actor_total), b = Number(answer.target_total);
      if (!Number.isFinite(a) || !Number.isFinite(b)) return null;
      return { ...base, kind: "opposed.result", args: { prompt_id: prompt.prompt_id, actor_total: a, target_total: b } };
    }
    default:
      return null;
  }
}

/**
 * Show a prompt on this client and send the answer through `request` (the sidecar directly on
 * the active GM, else over the module socket). @param {object} env @param {object} prompt
 * @param {{request:(intent:object) => Promise<object>, roll:(r:object) => Promise<object>}} send
 * @returns {Promise<object|null>} what sending returned, or null when nothing was sent (closed, or failed): it may be shown again
 */
export async function showPrompt(env, prompt, send) {
  const t = translator(env);
  const combat = env.game.combats.get(prompt.combat_id);
  const name = combat?.combatants.get(prompt.combatant_id)?.name ?? prompt.data?.name ?? "?";
  const dialog = promptDialog(prompt, t, name);
  const DialogV2 = env.foundry.applications.api.DialogV2;
  const config = { window: { title: dialog.title }, content: dialog.content, rejectClose: false };
  let answer = null;
  try {
    if (prompt.kind === "reroll.approval" && getSetting(env, SETTINGS.AUTO_APPROVE)) answer = true;
    else if (dialog.type === "confirm") answer = await DialogV2.confirm({ ...config, modal: false });
    else if (dialog.type === "input") answer = await DialogV2.input(config);
    else if (dialog.type === "roll") {
      const { rollJSON, rerollOf } = await rollReroll(env, prompt);
      return await send.roll({ combat_id: prompt.combat_id, combatant_id: prompt.combatant_id, roll: rollJSON, reroll_of: rerollOf });
    } else {
      log.warn(`a prompt of unknown kind ${prompt.kind}`);
      return null;
    }
  } catch (e) {
    log.warn("a prompt dialog failed", e);
    return null;
  }
  const intent = promptAnswer(prompt, answer);
  return intent ? send.request(intent) : null;
}
