/**
 * What the GM is told about the link to the sidecar: each kind of trouble once, the welcome's
 * warnings, refusals without the token in them; the offer to take the world back after another
 * page of this GM took it.
 * @module link-status
 */

import { notify, escapeHTML, escapingTranslator, translator } from "./html.js";
import * as log from "./log.js";

/**
 * Tell the GM about the link's new status, once per kind of trouble.
 * @param {{env:object, warned:boolean, client:object|null}} link the Sidecar (its `warned` is kept here)
 * @param {string} prev @param {"connected"|"unreachable"|"refused"|"superseded"} status @param {object} [detail] @param {string} url
 */
export function showStatus(link, prev, status, detail, url) {
  const n = (level, key, data) => notify(link.env, level, key, data);
  if (status === "connected") {
    if (prev !== "connected") log.info(`connected (${detail?.ruleset}), last_seq ${detail?.last_seq}`);
    if (link.warned) n("info", "INITIATIVE_SIDECAR.notify.connected", { ruleset: detail?.ruleset ?? "" });
    link.warned = false;
    // the welcome's warnings (a module of another version than the sidecar's), each once
    for (const w of prev === "connected" ? [] : detail?.warnings ?? []) {
      const key = `INITIATIVE_SIDECAR.warning.${w.code}`;
      const text = escapingTranslator(translator(link.env))(key, w.data ?? {});
      link.env.ui.notifications.warn(text === key ? `Initiative Sidecar: ${escapeHTML(w.message)}` : text, { permanent: true });
      log.warn(`the sidecar warns: ${w.code} ${w.message}`);
    }
  } else if (status === "unreachable" && !link.warned) {
    link.warned = true;
    n("warn", detail?.key ?? "INITIATIVE_SIDECAR.notify.unreachable", { url, origin: detail?.origin ?? "" });
    log.warn(`the sidecar at ${url} is not reachable; retrying in the background`);
  } else if (status === "refused") {
    if (prev !== "refused") {
      const message = withoutToken(detail?.message, link.client?.auth?.token);
      const key = detail?.code === "protocol_mismatch" ? "INITIATIVE_SIDECAR.warning.protocol_mismatch" : detail?.key ?? "INITIATIVE_SIDECAR.notify.refused";
      n("error", key, { code: detail?.code ?? "?", message, url, origin: detail?.origin ?? "" });
      log.error(`the sidecar refused the connection: ${detail?.code}`);
    }
    link.warned = true;
  } else if (status === "superseded") {
    log.warn("another connection took over this world; this page stopped");
    n("warn", "INITIATIVE_SIDECAR.notify.superseded");
  }
}

/**
 * Another page of this GM took the world over: offer "Take over". The page never comes back by itself,
 * so two pages never take the world from each other in a loop. @param {object} env @returns {Promise<boolean>}
 */
export async function offerTakeOver(env) {
  const t = translator(env);
  const take = await env.foundry.applications.api.DialogV2.confirm({
    window: { title: t("INITIATIVE_SIDECAR.link.takeOverTitle") }, content: `<p>${t("INITIATIVE_SIDECAR.link.takeOverText")}</p>`,
    yes: { label: t("INITIATIVE_SIDECAR.link.takeOver") }, no: { label: t("INITIATIVE_SIDECAR.link.stayStopped") },
    rejectClose: false, modal: false
  }).catch(() => null);
  return take === true;
}

/**
 * A connect refusal's message as the GM may see it: the sidecar's schema message quotes the
 * value it refused, which for `invalid_auth` at `/token` is the (mis-pasted) token itself.
 * @param {unknown} message @param {string} [token] @returns {string}
 */
export function withoutToken(message, token) {
  let text = String(message ?? "");
  if (token && token.length >= 8) text = text.split(token).join("…"); // a shorter one would cut words
  return text.replace(/^(\/token: ).*'( [^']*)$/s, "$1…$2");
}
