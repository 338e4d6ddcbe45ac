/**
 * Player and GM actions: the combat tracker's context menu entries and the token HUD
 * buttons, shown only for combatants the user owns and only when the sidecar offers them
 * (plan entries' `actions`/`gm_actions`, kept in each combatant's flag state; the intents of
 * the ruleset from the sidecar's `welcome`). Each becomes an intent through the {@link Relay}.
 * The GM also gets "Set initiative…": the rule score shown plainly, the stored number typed by
 * hand (the tracker's own input turns into text once initiatives carry decimals).
 * @module actions
 */

import { MODULE_ID } from "./constants.js";
import { sidecarRules } from "./settings.js";
import { translator } from "./html.js";
import { menuEntry, elementOf } from "./compat.js";
import { dashContent, askAnchor, readiedContent, readyContent, setInitiativeContent } from "./dialogs.js";

/**
 * The actions a combatant's owner (or a GM) may take now, as the sidecar listed them (ids of {@link ACTIONS}).
 * @param {object|undefined} state the combatant's plan state @param {{isGM:boolean}} ctx @returns {string[]}
 */
export function availableActions(state, { isGM }) {
  return [...(state?.actions ?? []), ...(isGM ? state?.gm_actions ?? [] : [])];
}

/** Action id → [label key, icon, (dialog answers) => [intent kind, args]]. */
const ACTIONS = Object.freeze({
  "dash": ["dash", "fa-solid fa-person-running", (x) => ["dash", { amount: Math.trunc(Number(x.amount)) }]],
  "hold": ["hold", "fa-solid fa-hourglass-half", () => ["hold", {}]],
  "hold.next_round": ["holdNextRound", "fa-solid fa-forward", () => ["hold", { next_round: true }]],
  "hold.target_aware": ["holdAware", "fa-solid fa-eye", () => ["hold", { target_aware: true }]],
  "act.now": ["actNow", "fa-solid fa-bolt", () => ["act", { now: true }]],
  "act.after": ["actAfter", "fa-solid fa-arrow-down", (x) => ["act", { after: x.anchor }]],
  "act.before": ["actBefore", "fa-solid fa-arrow-up", (x) => ["act", { before: x.anchor }]],
  "reaction.use": ["reaction", "fa-solid fa-shield-halved", (x) => ["reaction.use", x.reason ? { reason: String(x.reason) } : {}]],
  "readied.declare": ["readiedDeclare", "fa-solid fa-crosshairs", (x) => ["readied.declare", {
    mode: x.mode === "preemptive" ? "preemptive" : "standard", trigger: String(x.trigger ?? ""), action: String(x.action ?? ""), ...(x.target_id ? { target_id: x.target_id } : {})
  }]],
  "readied.trigger": ["readiedTrigger", "fa-solid fa-burst", (x) => ["readied.trigger", { readied_id: x.readied_id }]]
});

/** The intent an action id declares (dialog answers in `extra`). */
export function actionIntent(action, combat_id, combatant_id, extra = {}) {
  if (!ACTIONS[action]) throw new Error(`unknown action ${action}`);
  const [kind, args] = ACTIONS[action][2](extra);
  return { combat_id, combatant_id, kind, args };
}

/** Player actions bound to one client. */
export class Actions {
  /** @param {object} env @param {import("./relay.js").Relay} relay */
  constructor(env, relay) { this.env = env; this.relay = relay; this.t = translator(env); }

  /** Actions for a combatant of the viewed combat (owned ones only). */
  actionsFor(combat, combatant) {
    if (!combat || !combatant?.isOwner) return [];
    return availableActions(combatant.flags?.[MODULE_ID]?.state, { isGM: this.env.game.user.isGM });
  }

  /** Do an action: ask what it needs (dialog), then declare it. @param {string} action @param {object} combat @param {object} combatant @param {object} [given] skip the dialog */
  async perform(action, combat, combatant, given) {
    let extra = given ?? await this.ask(action, combat, combatant);
    if (extra === null) return null;
    if (action === "readied.trigger") extra = { readied_id: combatant.flags?.[MODULE_ID]?.state?.detail?.readied_id, ...extra };
    return this.relay.request(actionIntent(action, combat.id, combatant.id, extra ?? {}));
  }

  /** A DialogV2 form's answers, or null (dismissed). @param {string} titleKey @param {string} content its markup */
  async input(titleKey, content) {
    return (await this.env.foundry.applications.api.DialogV2.input({ window: { title: this.t(titleKey) }, rejectClose: false, content })) ?? null;
  }

  /** The dialog an action needs (null: dismissed). */
  async ask(action, combat, combatant) {
    const t = this.t;
    if (action === "dash") {
      // the limit (BI-4) is the sidecar's to check: a dash beyond it is refused with the reason
      const r = await this.input("INITIATIVE_SIDECAR.dialog.dashTitle", dashContent(t));
      return r ? { amount: r.amount } : null;
    }
    if (action === "act.after" || action === "act.before") {
      const anchor = await askAnchor(this.env, t, combat.turns, combatant.id);
      return anchor ? { anchor } : null;
    }
    if (action === "readied.declare") return this.input("INITIATIVE_SIDECAR.dialog.readiedTitle", readiedContent(t, combat.turns, combatant.id));
    return {};
  }

  /**
   * GM: set a combatant's initiative by hand (the dialog shows the rule score plainly), written as
   * Foundry's own edit; the forwarder sends it as `initiative.set`. @param {object} combatant @param {number} [given]
   */
  async setInitiative(combatant, given) {
    let value = given;
    if (value === undefined) {
      const score = combatant.flags?.[MODULE_ID]?.state?.detail?.score;
      const content = setInitiativeContent(this.t, { name: combatant.name, initiative: combatant.initiative, score });
      const r = await this.input("INITIATIVE_SIDECAR.action.setInitiative", content);
      value = r ? Number(r.initiative) : NaN;
    }
    if (!Number.isFinite(value)) return null;
    return combatant.update({ initiative: value });
  }

  /** Entries for `getCombatTrackerContextOptions` (read once, at the tracker's first render). @param {object[]} menuItems */
  extendTrackerMenu(menuItems) {
    const lookup = (li) => {
      const el = elementOf(li);
      const combat = this.env.game.combat;
      return { combat, combatant: combat?.combatants.get(el?.dataset?.combatantId) };
    };
    for (const [action, [label, icon]] of Object.entries(ACTIONS)) {
      menuItems.push(menuEntry(this.env, {
        label: `INITIATIVE_SIDECAR.action.${label}`,
        icon: `<i class="${icon}"></i>`,
        visible: (li) => { const { combat, combatant } = lookup(li); return this.actionsFor(combat, combatant).includes(action); },
        run: (li) => { const { combat, combatant } = lookup(li); return this.perform(action, combat, combatant); }
      }));
    }
    menuItems.push(menuEntry(this.env, {
      label: "INITIATIVE_SIDECAR.action.setInitiative",
      icon: '<i class="fa-solid fa-pen-to-square"></i>',
      visible: (li) => Boolean(this.env.game.user.isGM && lookup(li).combatant),
      run: (li) => this.setInitiative(lookup(li).combatant)
    }));
  }

  /** Ready to strike (BI-3), outside combat, from the token HUD. */
  async readyStart(token, given) {
    const { game } = this.env;
    const actor = token.actor;
    const answer = given ?? await this.input("INITIATIVE_SIDECAR.dialog.readyTitle", readyContent(this.t));
    if (!answer) return null;
    const watching = answer.watching ?? [...(game.user.targets ?? [])].map((t) => t.id ?? t.document?.id).filter(Boolean);
    // `owners` are added by the active GM's client from Foundry (relay.js `trusted`)
    const args = { actor_id: actor.id, token_id: token.id, watching, sees: Boolean(answer.sees), weapon_ready: Boolean(answer.weapon_ready) };
    return this.relay.request({ kind: "ready.start", args });
  }

  /** GM: confirm that an actor watched for 6 seconds (BI-3). */
  readyConfirm(actorId) { return this.relay.request({ kind: "ready.confirm", args: { actor_id: actorId } }); }

  /** Token HUD buttons (`renderTokenHUD`), where the sidecar's ruleset accepts `ready.start`. */
  decorateTokenHUD(hud, html) {
    if (!sidecarRules(this.env).intents.includes("ready.start")) return;
    const el = elementOf(html);
    const token = hud.object?.document ?? hud.document;
    if (!el || !token?.actor?.isOwner) return;
    const col = el.querySelector(".col.right") ?? el;
    const doc = el.ownerDocument;
    const add = (label, icon, fn) => {
      const b = Object.assign(doc.createElement("button"), { type: "button", className: "control-icon initiative-sidecar-hud" });
      b.dataset.tooltipText = this.t(`INITIATIVE_SIDECAR.action.${label}`);
      b.append(Object.assign(doc.createElement("i"), { className: icon }));
      b.addEventListener("click", fn);
      col.append(b);
    };
    add("readyStart", "fa-solid fa-eye", () => this.readyStart(token));
    if (this.env.game.user.isGM) add("readyConfirm", "fa-solid fa-check-double", () => this.readyConfirm(token.actor.id));
  }
}
