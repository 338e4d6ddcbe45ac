/**
 * Chat announcements of rulings: each notice the sidecar gives (its text says the rule and
 * why) becomes a chat line, whispered to the GMs when it concerns a hidden combatant, so
 * hidden NPCs never leak to players: a notice about a hidden combatant, or whose text names one
 * (a ruling about a visible combatant may name the hidden one it acts after), goes to the GMs.
 * @module announce
 */

import { MODULE_ID } from "./constants.js";
import { gmIds, ownersOf } from "./foundry-data.js";
import { escapeHTML } from "./html.js";

/** Notice kinds that are bookkeeping, not rulings worth a chat line. */
const QUIET = Object.freeze(["dice_pool.recount"]);

/**
 * The chat message data for a notice, or null. Pure given the lookups.
 * @param {{kind:string, text:string, combatant_id?:string, actor_id?:string}} notice
 * @param {{hidden:(id:string) => boolean, gms:string[], owners:(actorId:string) => string[],
 *   namesHidden?:(text:string) => boolean}} look
 * @returns {{content:string, whisper:string[], flags:object}|null}
 */
export function noticeMessage(notice, look) {
  if (!notice?.text || QUIET.includes(notice.kind)) return null;
  const esc = escapeHTML(notice.text); // the text names combatants: players' names
  let whisper = [];
  if ((notice.combatant_id && look.hidden(notice.combatant_id)) || look.namesHidden?.(notice.text)) whisper = [...look.gms];
  else if (notice.actor_id && !notice.combatant_id) whisper = [...new Set([...look.gms, ...look.owners(notice.actor_id)])];
  return { content: `<p class="initiative-sidecar-ruling">${esc}</p>`, whisper, flags: { [MODULE_ID]: { notice: notice.kind } } };
}

/**
 * Post the notices of one ack (active GM).
 * @param {object} env @param {object[]} notices @param {object} message the message they answer
 */
export async function announce(env, notices, message) {
  const { game } = env;
  if (!game.settings.get(MODULE_ID, "announce")) return;
  const combat = game.combats.get(message.data?.combat_id ?? message.data?.combat?._id);
  const look = {
    hidden: (id) => Boolean(combat?.combatants.get(id)?.hidden),
    namesHidden: (text) => Boolean(combat?.combatants.some((c) => c.hidden && c.name && text.includes(c.name))),
    gms: gmIds(env),
    owners: (actorId) => ownersOf(env, game.actors?.get(actorId) ?? null)
  };
  for (const notice of notices) {
    const data = noticeMessage(notice, look);
    if (data) await env.ChatMessage.create({ ...data, speaker: { alias: "Initiative Sidecar" } });
  }
}
