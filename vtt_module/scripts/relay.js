/**
 * The module socket (`module.initiative-sidecar`): players' declarations travel to the active
 * GM, whose client sends them to the sidecar with Foundry's sender id as the intent's `user`
 * (never an id written in the payload); prompts travel from the GM to the users they are for.
 * @module relay
 */

import { SOCKET_NAME, SOCKET_TYPES } from "./constants.js";
import { initiativeRollField } from "./payloads.js";
import { isActiveGM, ownersOf } from "./foundry-data.js";
import { notify } from "./html.js";
import * as log from "./log.js";

/** The intent as the GM's client vouches for it: Foundry's sender id, and a Ready to strike's owners from Foundry (who may break it). */
function trusted(env, intent, userId) {
  if (intent.kind !== "ready.start") return { ...intent, user: userId };
  const actor = env.game.actors.get(intent.args?.actor_id);
  return { ...intent, user: userId, args: { ...intent.args, owners: actor ? ownersOf(env, actor) : [] } };
}

/** Kinds that name a combatant the sender must own (or be a GM). */
const COMBATANT_KINDS = Object.freeze(["dash", "hold", "act", "reaction.use", "readied.declare", "readied.trigger", "initiative.set"]);
/** Kinds that name an actor the sender must own (or be a GM). */
const ACTOR_KINDS = Object.freeze(["ready.start", "ready.break"]);

/** May `user` declare this intent at all (a local check; the sidecar checks again)? @param {object} env @param {object} user @param {object} intent */
export function mayDeclare(env, user, intent) {
  if (user?.isGM) return true;
  if (intent.kind === "ready.confirm" || intent.kind === "reroll.approve" || intent.kind === "opposed.result") return false;
  const owns = (doc) => Boolean(doc?.testUserPermission?.(user, "OWNER"));
  if (COMBATANT_KINDS.includes(intent.kind)) return owns(env.game.combats.get(intent.combat_id)?.combatants.get(intent.combatant_id)?.actor);
  if (ACTOR_KINDS.includes(intent.kind)) return owns(env.game.actors?.get(intent.args?.actor_id));
  return true; // prompt answers: the sidecar knows whom it asked
}

/**
 * How fast one player's declarations and rolls may reach the sidecar through the GM's client: a
 * burst of 10, then 2 a second (the sidecar limits the GM's one connection as a whole: one
 * player's flood would spend everyone's share). GMs are not limited here.
 */
export const PLAYER_PACE = Object.freeze({ burst: 10, perSecond: 2 });

const NO_SIDECAR = Object.freeze({ ok: false, error: Object.freeze({ code: "no_sidecar", message: "the sidecar is not connected" }) });
const NOT_OWNER = Object.freeze({ ok: false, error: Object.freeze({ code: "not_permitted", message: "you do not own this combatant" }) });

/** Both ends of the module socket. */
export class Relay {
  /** @param {object} env @param {{sidecar:() => (import("./sidecar.js").Sidecar|null), onPrompt:(prompt:object) => void}} deps */
  constructor(env, { sidecar, onPrompt }) {
    // buckets: per player {tokens, at} of PLAYER_PACE; `now` monotonic (a stepping wall clock neither refills nor drains them)
    Object.assign(this, { env, sidecar, onPrompt, waiting: new Map(), counter: 0, buckets: new Map(), now: () => performance.now() });
  }

  /** Whether a player's message may go on now (takes a token). @param {string} userId */
  paced(userId) {
    if (this.env.game.users.get(userId)?.isGM) return true;
    const now = this.now();
    const b = this.buckets.get(userId) ?? { tokens: PLAYER_PACE.burst, at: now };
    Object.assign(b, { tokens: Math.min(PLAYER_PACE.burst, b.tokens + ((now - b.at) / 1000) * PLAYER_PACE.perSecond), at: now });
    this.buckets.set(userId, b);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  /** Listen on the module socket. */
  listen() {
    this.env.game.socket.on(SOCKET_NAME, (data, senderId) => this.receive(data, senderId).catch((e) => log.error("module socket message failed", e)));
  }

  async receive(data, senderId) {
    const me = this.env.game.user.id;
    if (data?.to && !data.to.includes(me)) return; // `recipients` already targets; a second guard
    switch (data?.type) {
      case SOCKET_TYPES.INTENT:
      case SOCKET_TYPES.ROLL: {
        // Only the page holding the world's connection answers: every page of the active GM
        // gets the message, and one without the token (or taken over) must stay silent.
        if (!isActiveGM(this.env) || !this.sidecar()?.serving) return;
        const result = this.paced(senderId)
          ? await this.handle(data, senderId)
          : { ok: false, error: { code: "rate_limited", message: "too many declarations at once; wait a moment and try again" } };
        this.env.game.socket.emit(SOCKET_NAME, { type: SOCKET_TYPES.RESULT, ref: data.ref, to: [senderId], result }, { recipients: [senderId] });
        return;
      }
      case SOCKET_TYPES.RESULT: // only the active GM answers
        if (!this.env.game.users.get(senderId)?.isGM) return;
        this.waiting.get(data.ref)?.(data.result);
        this.waiting.delete(data.ref);
        return;
      case SOCKET_TYPES.PROMPT:
        if (!this.env.game.users.get(senderId)?.isGM) return; // prompts come from the GM only
        this.onPrompt(data.prompt);
        return;
      default:
    }
  }

  /** On the active GM: send a declaration or a roll to the sidecar for `userId`. @returns {Promise<{ok:boolean, error?:object, notices?:object[]}>} */
  async handle(data, userId) {
    const s = this.sidecar();
    if (!s) return NO_SIDECAR;
    const user = this.env.game.users.get(userId);
    if (data.type === SOCKET_TYPES.ROLL) {
      const combat = this.env.game.combats.get(data.combat_id);
      const combatant = combat?.combatants.get(data.combatant_id);
      if (!combatant) return { ok: false, error: { code: "unknown_combatant", message: "no such combatant" } };
      if (!user?.isGM && !combatant.actor?.testUserPermission?.(user, "OWNER")) return NOT_OWNER;
      return summary(await s.hook("initiativeRoll", combat, userId, undefined, undefined, initiativeRollField(data.combatant_id, data.roll, data.reroll_of)));
    }
    if (!mayDeclare(this.env, user, data.intent)) return NOT_OWNER;
    // a declaration is for now: while the sidecar is away it is refused, not queued to be
    // applied long after the player was told it failed (hooks, the table's facts, still queue)
    if (s.status !== "connected") return NO_SIDECAR;
    return summary(await s.intent(trusted(this.env, data.intent, userId)));
  }

  /** Declare an intent as this client's user (on the active GM directly, else over the socket). @param {object} intent @returns {Promise<object>} */
  request(intent) { return this.send({ type: SOCKET_TYPES.INTENT, intent }); }

  /** Send a roll (a reroll a prompt asked for). @param {object} roll */
  roll(roll) { return this.send({ type: SOCKET_TYPES.ROLL, ...roll }); }

  async send(data) {
    const { game } = this.env, gm = game.users.activeGM;
    if (!gm) { notify(this.env, "warn", "INITIATIVE_SIDECAR.notify.noGM"); return { ok: false, error: { code: "no_gm", message: "no GM connected" } }; }
    const ref = `${game.user.id}.${++this.counter}`;
    const result = isActiveGM(this.env) ? await this.handle(data, game.user.id) : await new Promise((resolve) => {
      this.waiting.set(ref, resolve);
      game.socket.emit(SOCKET_NAME, { ...data, ref, to: [gm.id] }, { recipients: [gm.id] });
      setTimeout(() => { if (this.waiting.delete(ref)) resolve({ ok: false, error: { code: "timeout", message: "no answer from the GM's client" } }); }, 20000);
    });
    // the sidecar's message names combatants (players' names): escaped by notify
    if (!result.ok) notify(this.env, "warn", "INITIATIVE_SIDECAR.notify.refusedIntent", { message: result.error?.message ?? result.error?.code });
    return result;
  }

  /** On the active GM: pass a prompt to the users it is for. @param {object} prompt @param {string[]} userIds */
  forwardPrompt(prompt, userIds) { this.env.game.socket.emit(SOCKET_NAME, { type: SOCKET_TYPES.PROMPT, prompt, to: userIds }, { recipients: userIds }); }
}

/** What a requester learns from an ack. */
function summary(ack) {
  if (!ack) return { ok: false, error: { code: "no_ack", message: "no answer from the sidecar" } };
  return ack.ok ? { ok: true, notices: ack.notices ?? [] } : { ok: false, error: ack.error };
}
