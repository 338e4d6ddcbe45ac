/**
 * Ready to strike (BI-3) bookkeeping on the active GM: which actors are watching (learned
 * from the sidecar's `ready_to_strike` notices) and `ready.break` when one of them moves its
 * token or uses an item or attack.
 * @module ready
 */

import { getSetting, setSetting, SETTINGS } from "./settings.js";
import { isActiveGM } from "./foundry-data.js";

/** Token changes that are movement. */
const MOVES = Object.freeze(["x", "y", "elevation"]);

/** Ready actors on the GM's machine. */
export class ReadyWatch {
  /** @param {object} env @param {() => (import("./sidecar.js").Sidecar|null)} sidecar */
  constructor(env, sidecar) {
    this.env = env;
    this.sidecar = sidecar;
  }

  get actors() { return getSetting(this.env, SETTINGS.READY) ?? {}; }

  /** Learn from notices. @param {object[]} notices */
  learn(notices) {
    const actors = { ...this.actors };
    let changed = false;
    for (const n of notices) {
      if (n.kind !== "ready_to_strike" || !n.actor_id) continue;
      if (n.state === "broken") { delete actors[n.actor_id]; changed = true; }
      else { actors[n.actor_id] = n.state ?? "watching"; changed = true; }
    }
    if (changed) setSetting(this.env, SETTINGS.READY, actors);
  }

  /** Send `ready.break` for a watching actor. */
  break(actorId, reason, userId) {
    const s = isActiveGM(this.env) ? this.sidecar() : null;
    if (!s || !actorId || !(actorId in this.actors)) return null;
    const actors = { ...this.actors };
    delete actors[actorId];
    setSetting(this.env, SETTINGS.READY, actors);
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
