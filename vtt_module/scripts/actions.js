/**
 * Player and GM actions: the combat tracker's context menu entries and the token HUD
 * buttons, shown only for combatants the user owns and only when the ruleset has them.
 * Each becomes an intent through the {@link Relay}.
 * @module actions
 */

import { MODULE_ID, RULESET_ACTIONS } from "./constants.js";
import { getSetting, SETTINGS, statPaths } from "./settings.js";
import { readStats } from "./payloads.js";
import { ownersOf, translator } from "./foundry-data.js";

/**
 * The intents a combatant's owner may declare now, from the ruleset and its flag state.
 * @param {string} ruleset @param {object|undefined} state the combatant's plan state
 * @param {{isGM:boolean, started:boolean}} ctx
 * @returns {string[]} action ids (`dash`, `hold`, `hold.next_round`, `hold.target_aware`,
 *   `act.now`, `act.after`, `act.before`, `reaction.use`, `readied.declare`, `readied.trigger`)
 */
export function availableActions(ruleset, state, { isGM, started }) {
  const kinds = RULESET_ACTIONS[ruleset] ?? [];
  const out = [];
  const held = state?.acts === "held";
  if (kinds.includes("dash") && !(state?.tags ?? []).includes("dashed")) out.push("dash");
  if (kinds.includes("hold")) {
    if (!held) out.push("hold", "hold.next_round");
    else if (isGM) out.push("hold.target_aware");
  }
  if (kinds.includes("act") && held && started) out.push("act.now", "act.after", "act.before");
  if (kinds.includes("reaction.use") && state?.reaction?.available) out.push("reaction.use");
  if (kinds.includes("readied.declare") && started && !state?.detail?.readied_id) out.push("readied.declare");
  if (kinds.includes("readied.trigger") && state?.detail?.readied_id) out.push("readied.trigger");
  return out;
}

/** The intent an action id declares (dialog answers in `extra`). */
export function actionIntent(action, combat_id, combatant_id, extra = {}) {
  const base = { combat_id, combatant_id };
  switch (action) {
    case "dash": return { ...base, kind: "dash", args: { amount: Math.trunc(Number(extra.amount)) } };
    case "hold": return { ...base, kind: "hold", args: {} };
    case "hold.next_round": return { ...base, kind: "hold", args: { next_round: true } };
    case "hold.target_aware": return { ...base, kind: "hold", args: { target_aware: true } };
    case "act.now": return { ...base, kind: "act", args: { now: true } };
    case "act.after": return { ...base, kind: "act", args: { after: extra.anchor } };
    case "act.before": return { ...base, kind: "act", args: { before: extra.anchor } };
    case "reaction.use": return { ...base, kind: "reaction.use", args: extra.reason ? { reason: String(extra.reason) } : {} };
    case "readied.declare": {
      const args = { mode: extra.mode === "preemptive" ? "preemptive" : "standard", trigger: String(extra.trigger ?? ""), action: String(extra.action ?? "") };
      if (extra.target_id) args.target_id = extra.target_id;
      return { ...base, kind: "readied.declare", args };
    }
    case "readied.trigger": return { ...base, kind: "readied.trigger", args: { readied_id: extra.readied_id } };
    default: throw new Error(`unknown action ${action}`);
  }
}

const LABELS = Object.freeze({
  "dash": ["dash", "fa-solid fa-person-running"],
  "hold": ["hold", "fa-solid fa-hourglass-half"],
  "hold.next_round": ["holdNextRound", "fa-solid fa-forward"],
  "hold.target_aware": ["holdAware", "fa-solid fa-eye"],
  "act.now": ["actNow", "fa-solid fa-bolt"],
  "act.after": ["actAfter", "fa-solid fa-arrow-down"],
  "act.before": ["actBefore", "fa-solid fa-arrow-up"],
  "reaction.use": ["reaction", "fa-solid fa-shield-halved"],
  "readied.declare": ["readiedDeclare", "fa-solid fa-crosshairs"],
  "readied.trigger": ["readiedTrigger", "fa-solid fa-burst"]
});

/** Player actions bound to one client. */
export class Actions {
  /** @param {object} env @param {import("./relay.js").Relay} relay */
  constructor(env, relay) { this.env = env; this.relay = relay; this.t = translator(env); }

  ruleset() { return getSetting(this.env, SETTINGS.RULESET); }

  /** Actions for a combatant of the viewed combat (owned ones only). */
  actionsFor(combat, combatant) {
    if (!combat || !combatant?.isOwner) return [];
    const state = combatant.flags?.[MODULE_ID]?.state;
    return availableActions(this.ruleset(), state, { isGM: this.env.game.user.isGM, started: (combat.round ?? 0) > 0 });
  }

  /**
   * Do an action: ask what it needs (dialog), then declare it.
   * @param {string} action @param {object} combat @param {object} combatant @param {object} [given] skip the dialog
   */
  async perform(action, combat, combatant, given) {
    let extra = given;
    if (!extra) extra = await this.ask(action, combat, combatant);
    if (extra === null) return null;
    if (action === "readied.trigger") extra = { readied_id: combatant.flags?.[MODULE_ID]?.state?.detail?.readied_id, ...extra };
    return this.relay.request(actionIntent(action, combat.id, combatant.id, extra ?? {}));
  }

  /** The dialog an action needs (null: dismissed). */
  async ask(action, combat, combatant) {
    const DialogV2 = this.env.foundry.applications.api.DialogV2;
    const t = this.t;
    if (action === "dash") {
      // BI-4: up to 5 + Dex, Dex read where the stat paths setting says (dnd5e by default)
      const paths = statPaths(getSetting(this.env, SETTINGS.STAT_PATHS), this.env.game.system?.id);
      const dex = Number(readStats(combatant.actor, paths).dex ?? 0);
      const max = Math.max(5 + (Number.isFinite(dex) ? dex : 0), 0);
      const r = await DialogV2.input({
        window: { title: t("INITIATIVE_SIDECAR.dialog.dashTitle") }, rejectClose: false,
        content: `<label>${t("INITIATIVE_SIDECAR.dialog.dashAmount", { max })} <input type="number" name="amount" min="1" max="${max}" value="${max}"></label>`
      });
      return r ? { amount: r.amount } : null;
    }
    if (action === "act.after" || action === "act.before") {
      const buttons = combat.turns.filter((c) => c.id !== combatant.id && c.visible !== false)
        .map((c) => ({ action: c.id, label: c.name }));
      const anchor = await DialogV2.wait({ window: { title: t("INITIATIVE_SIDECAR.dialog.anchorTitle") }, buttons, rejectClose: false });
      return anchor ? { anchor } : null;
    }
    if (action === "readied.declare") {
      const options = combat.turns.filter((c) => c.id !== combatant.id && c.visible !== false)
        .map((c) => `<option value="${c.id}">${c.name}</option>`).join("");
      const r = await DialogV2.input({
        window: { title: t("INITIATIVE_SIDECAR.dialog.readiedTitle") }, rejectClose: false,
        content: `<label>${t("INITIATIVE_SIDECAR.dialog.readiedMode")} <select name="mode">`
          + `<option value="standard">${t("INITIATIVE_SIDECAR.dialog.standard")}</option>`
          + `<option value="preemptive">${t("INITIATIVE_SIDECAR.dialog.preemptive")}</option></select></label>`
          + `<label>${t("INITIATIVE_SIDECAR.dialog.trigger")} <input type="text" name="trigger" required></label>`
          + `<label>${t("INITIATIVE_SIDECAR.dialog.readiedAction")} <input type="text" name="action" required></label>`
          + `<label>${t("INITIATIVE_SIDECAR.dialog.target")} <select name="target_id"><option value=""></option>${options}</select></label>`
      });
      return r ?? null;
    }
    return {};
  }

  /**
   * Entries for `getCombatTrackerContextOptions` (v13: `li` is an HTMLElement; v12: jQuery).
   * @param {object[]} menuItems the list to extend
   */
  extendTrackerMenu(menuItems) {
    const lookup = (li) => {
      const el = li?.dataset ? li : li?.[0];
      const combat = this.env.game.combat;
      return { combat, combatant: combat?.combatants.get(el?.dataset?.combatantId) };
    };
    for (const [action, [label, icon]] of Object.entries(LABELS)) {
      menuItems.push({
        name: `INITIATIVE_SIDECAR.action.${label}`,
        icon: `<i class="${icon}"></i>`,
        condition: (li) => { const { combat, combatant } = lookup(li); return this.actionsFor(combat, combatant).includes(action); },
        callback: (li) => { const { combat, combatant } = lookup(li); return this.perform(action, combat, combatant); }
      });
    }
  }

  /** Ready to strike (BI-3), outside combat, from the token HUD. */
  async readyStart(token, given) {
    const { game } = this.env;
    const actor = token.actor;
    let answer = given;
    if (!answer) {
      const DialogV2 = this.env.foundry.applications.api.DialogV2;
      answer = await DialogV2.input({
        window: { title: this.t("INITIATIVE_SIDECAR.dialog.readyTitle") }, rejectClose: false,
        content: `<label><input type="checkbox" name="weapon_ready" checked> ${this.t("INITIATIVE_SIDECAR.dialog.readyWeapon")}</label>`
          + `<label><input type="checkbox" name="sees" checked> ${this.t("INITIATIVE_SIDECAR.dialog.readySees")}</label>`
      });
      if (!answer) return null;
    }
    const watching = answer.watching ?? [...(game.user.targets ?? [])].map((t) => t.id ?? t.document?.id).filter(Boolean);
    return this.relay.request({
      kind: "ready.start",
      args: {
        actor_id: actor.id, token_id: token.id, owners: ownersOf(this.env, actor),
        watching, sees: Boolean(answer.sees), weapon_ready: Boolean(answer.weapon_ready)
      }
    });
  }

  /** GM: confirm that an actor watched for 6 seconds (BI-3). */
  readyConfirm(actorId) {
    return this.relay.request({ kind: "ready.confirm", args: { actor_id: actorId } });
  }

  /** Token HUD buttons (`renderTokenHUD`). */
  decorateTokenHUD(hud, html) {
    if (!(RULESET_ACTIONS[this.ruleset()] ?? []).includes("ready.start")) return;
    const el = html?.querySelector ? html : html?.[0];
    const token = hud.object?.document ?? hud.document;
    if (!el || !token?.actor?.isOwner) return;
    const col = el.querySelector(".col.right") ?? el;
    const doc = el.ownerDocument;
    const add = (label, icon, fn) => {
      const b = doc.createElement("button");
      b.type = "button";
      b.className = "control-icon initiative-sidecar-hud";
      b.dataset.tooltip = this.t(`INITIATIVE_SIDECAR.action.${label}`);
      b.innerHTML = `<i class="${icon}"></i>`;
      b.addEventListener("click", fn);
      col.append(b);
    };
    add("readyStart", "fa-solid fa-eye", () => this.readyStart(token));
    if (this.env.game.user.isGM) add("readyConfirm", "fa-solid fa-check-double", () => this.readyConfirm(token.actor.id));
  }
}
