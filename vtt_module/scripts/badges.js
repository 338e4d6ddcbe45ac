/**
 * Which badges a tracker row shows, from a combatant's plan state (its flags). Pure.
 * @module badges
 */

/**
 * @typedef {{key:string, text:string, tooltip:string, css:string}} Badge
 * @typedef {(key:string, data?:object) => string} Translate
 */

/** One badge: text and tooltip from `INITIATIVE_SIDECAR.badge.<key>` and `badgeTip.<key>`. @returns {Badge} */
const badge = (t, key, data = {}, tooltipData = data) => ({
  key, css: `isc-badge isc-${key}`, text: t(`INITIATIVE_SIDECAR.badge.${key}`, data), tooltip: t(`INITIATIVE_SIDECAR.badgeTip.${key}`, tooltipData)
});

/**
 * The badges for one combatant. @param {object|undefined} state its plan state
 * @param {Translate} t localizer (`INITIATIVE_SIDECAR.badge.<key>`) @param {number|null} [plainScore]
 * the rule score to show when the tracker's numbers carry decimals and the plan gives none @returns {Badge[]}
 */
export function badgesFor(state, t, plainScore = null) {
  // the plain rule score of a row whose tracker number carries a tie-break fraction
  const ruleScore = plainScore === null ? [] : [badge(t, "rule-score", { score: plainScore })];
  if (!state) return ruleScore;
  const out = [];
  const tags = state.tags ?? [];
  const detail = state.detail ?? {};
  const add = (...args) => out.push(badge(t, ...args));
  if (state.reaction) {
    if (state.reaction.available) add("reaction");
    else add("no-reaction", {}, { reason: state.reaction.reason ?? t("INITIATIVE_SIDECAR.reason.unknown") });
  }
  if (tags.includes("dashed")) add("dashed", { amount: detail.dash ?? "" });
  // placed below a lower score (a dashed turn waiting for the turn in progress): the
  // tracker's number is just below its predecessor's, the rule's score is this one
  if (detail.score !== undefined && detail.score !== null) add("score", { score: detail.score });
  else out.push(...ruleScore);
  const hesitation = Number(detail.turns_lost ?? detail.hesitation ?? 0);
  switch (state.acts) {
    case "movement_or_action": add("movement-or-action"); break;
    case "movement_only": add("movement-only"); break;
    case "held": add("held"); break;
    case "defend_only": add("defend-only", { n: hesitation || 1 }); break;
    case "none": if (hesitation > 0) add("hesitating", { n: hesitation }); else add("no-turn"); break;
    default: break;
  }
  if (state.acts !== "none" && state.acts !== "defend_only" && hesitation > 0) add("hesitating", { n: hesitation });
  if (tags.includes("reroll_pending")) add("reroll-pending");
  if (tags.includes("ready_to_strike") || tags.includes("ready")) add("ready");
  if (tags.some((tag) => tag.startsWith("readied"))) add("readied");
  return out;
}

/**
 * The plain score of each combatant when any initiative has decimals (Foundry then shows two
 * decimals on every row [F13 `combat-tracker.mjs` `_prepareTurnContext`]): the whole part, the
 * rule score (fractions only break ties). @param {Array<{id:string, initiative:number|null}>} combatants
 */
export function plainScores(combatants) {
  const list = [...combatants].filter((c) => Number.isFinite(c.initiative));
  return list.some((c) => !Number.isInteger(c.initiative)) ? Object.fromEntries(list.map((c) => [c.id, Math.trunc(c.initiative)])) : {};
}
