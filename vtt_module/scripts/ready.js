/**
 * Ready to strike (BI-3) bookkeeping on the active GM: which actors are watching (learned
 * from the sidecar's `ready_to_strike` notices) and `ready.break` when one of them moves its
 * token or uses an item or attack.
 * @module ready
 */

import { getSetting, setSetting, SETTINGS } from "./settings.js";
import { isActiveGM } from "./foundry-data.js";
import * as log from "./log.js";

/** Token changes that are movement. */
const MOVES = Object.freeze(["x", "y", "elevation"]);

/**
 * Ready actors on the GM's machine, kept in the world setting `readyActors`. A world setting is
 * a Setting document: `get` answers the old value until the server's answer is applied [F13
 * `client/helpers/client-settings.mjs` `#setWorld`, `client/data/client-backend.mjs`; v14 the
 * same, research §10], so two changes close together would both start from the old list. This
 * client keeps its own copy while any of its writes is under way and writes one after another,
 * each time the latest copy; with nothing under way the setting is read again.
 */
export class ReadyWatch {
  /** @param {object} env @param {() => (import("./sidecar.js").Sidecar|null)} sidecar */
  constructor(env, sidecar) {
    this.env = env;
    this.sidecar = sidecar;
    this.local = null;     // this client's list while its writes are under way (null: read the setting)
    this.pending = 0;      // writes asked for and not yet done
    this.version = 0;      // changes made (a write whose change is no longer the latest is skipped)
    this.saving = Promise.resolve(); // the writes, one after another
  }

  /** @returns {Record<string, string>} actor id → state */
  get actors() { return this.local ?? getSetting(this.env, SETTINGS.READY) ?? {}; }

  /** Change the list at once here, then in the setting. @param {(actors:Record<string,string>) => boolean} fn edits a copy, true when it changed something */
  change(fn) {
    const actors = { ...this.actors };
    if (!fn(actors)) return this.saving;
    this.local = actors;
    const version = ++this.version;
    this.pending += 1;
    this.saving = this.saving
      .then(() => (version === this.version ? setSetting(this.env, SETTINGS.READY, actors) : undefined))
      .catch((e) => log.error("saving the Ready to strike list failed", e))
      .finally(() => { this.pending -= 1; if (!this.pending) this.local = null; });
    return this.saving;
  }

  /** Learn from notices. @param {object[]} notices @returns {Promise<void>} when saved */
  learn(notices) {
    const mine = (notices ?? []).filter((n) => n.kind === "ready_to_strike" && n.actor_id);
    return this.change((actors) => {
      for (const n of mine) { if (n.state === "broken") delete actors[n.actor_id]; else actors[n.actor_id] = n.state ?? "watching"; }
      return mine.length > 0;
    });
  }

  /** Send `ready.break` for a watching actor. */
  break(actorId, reason, userId) {
    const s = isActiveGM(this.env) ? this.sidecar() : null;
    if (!s || !actorId || !(actorId in this.actors)) return null;
    this.change((actors) => { delete actors[actorId]; return true; });
    return s.intent({ user: userId, kind: "ready.break", args: { actor_id: actorId, reason } });
  }

  /** Register the hooks that break the state. */
  register() {
    this.env.Hooks.on("updateToken", (token, changed, _options, userId) => {
      if (MOVES.some((k) => k in changed)) this.break(token.actorId ?? token.actor?.id, "moved", userId);
    });
    this.env.Hooks.on("createChatMessage", (message, _options, userId) => {
      if (message.flags?.core?.initiativeRoll) return;
      const used = message.rolls?.length || message.flags?.dnd5e?.item || message.flags?.dnd5e?.activity || message.flags?.dnd5e?.roll;
      if (used) this.break(message.speaker?.actor, "used an item or attack", userId);
    });
  }
}
