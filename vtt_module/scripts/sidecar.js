/**
 * The active GM's link to the sidecar: the outbox, the connection, and what happens with each
 * ack (plans applied, prompts routed, notices announced); the world's recording, which the
 * sidecar keeps; and a page another page of this GM took the world from, which stops.
 * @module sidecar
 */

import { MODULE_ID, RESEND_CODES } from "./constants.js";
import { Outbox } from "./outbox.js";
import { SidecarClient } from "./sidecar-client.js";
import { connectAuth, hookPayload, intentPayload, initiativeRollField, rollingGroup } from "./payloads.js";
import { getSetting, setSetting, SETTINGS, rulesetSettings, tokenKey } from "./settings.js";
import { gmIds, isActiveGM, snapshotOf, currentOfCombat, translator, worldTime } from "./foundry-data.js";
import { notify, escapeHTML, escapingTranslator } from "./html.js";
import * as log from "./log.js";

/** The connection owner (exists on the active GM's client only). */
export class Sidecar {
  /**
   * @param {object} env Foundry globals
   * @param {{onPlan:(plan:object) => void, onPrompt:(prompt:object) => void,
   *   onNotices:(notices:object[], message:object) => void,
   *   onRefused:(message:object, error:object) => void,
   *   onSettled?:() => void}} handlers `onSettled`: after each ack and each `welcome`, when
   *   fewer messages may wait for an answer (plans held for them may be written now)
   */
  constructor(env, handlers) {
    this.env = env;
    this.handlers = handlers;
    const world = env.game.world.id;
    // One flag per world in this browser: "a page of this world closed with messages unsent".
    const flags = () => getSetting(env, SETTINGS.UNSENT) ?? {};
    this.outbox = new Outbox({
      onFull: (count) => {
        log.warn(`the outbox passed its bound: ${count} unsent messages dropped; the current state is sent once the sidecar is back`);
        notify(env, "warn", "INITIATIVE_SIDECAR.notify.storageFull", { what: "outbox", count });
      },
      onPending: (waiting) => {
        const { [world]: _, ...others } = flags();
        setSetting(env, SETTINGS.UNSENT, waiting ? { ...others, [world]: true } : others);
      }
    });
    if (flags()[world]) this.outbox.missed();
    this.client = null;
    this.status = "idle";
    this.warned = false;
    /** result listeners by seq (e.g. a player's intent waiting for its answer) */
    this.waiters = new Map();
  }

  /** Does this page hold (or seek) the world's connection? Only then does it answer players. */
  get serving() { return this.client !== null; }

  /** The connect auth from the settings and the world. */
  auth() {
    const { game } = this.env;
    return connectAuth({
      token: getSetting(this.env, tokenKey(this.env)),
      world: game.world.id,
      ruleset: getSetting(this.env, SETTINGS.RULESET),
      settings: rulesetSettings(this.env),
      gm_users: gmIds(this.env),
      module_version: game.modules?.get?.(MODULE_ID)?.version ?? "0.1.0",
      foundry_version: game.version ?? game.release?.version ?? "13",
      system: game.system?.id ?? "unknown"
    });
  }

  /** Connect (active GM only; without a token it only says so). */
  start() {
    if (!isActiveGM(this.env)) return false;
    const auth = this.auth();
    if (!auth.token) {
      notify(this.env, "warn", "INITIATIVE_SIDECAR.notify.noToken");
      return false;
    }
    const url = getSetting(this.env, SETTINGS.URL);
    this.status = "idle";
    this.client = new SidecarClient({
      io: this.env.io, url, auth, outbox: this.outbox,
      events: {
        onWelcome: (w) => this.welcome(w),
        onAck: (m, ack) => this.ack(m, ack),
        onPlan: (plan) => this.handlers.onPlan(plan),
        onPrompt: (prompt) => this.handlers.onPrompt(prompt),
        onStatus: (status, detail) => this.setStatus(status, detail, url)
      }
    });
    this.client.connect();
    log.info(`connecting to the sidecar at ${url} as world ${auth.world} (${auth.ruleset})`);
    return true;
  }

  /** Close and reconnect (a setting changed). A page that was taken over stays stopped. */
  restart() { if (this.status !== "superseded") { this.stop(); this.start(); } }

  /** Close the connection. */
  stop() {
    this.client?.close();
    this.client = null;
    this.status = "idle";
  }

  /**
   * Another page of this GM took the world over. This page stops (the hooks it sees reach that
   * page too), says so once, and offers "Take over"; it never comes back by itself, so two pages
   * never take the world from each other in a loop.
   */
  async superseded() {
    this.client?.close();
    this.client = null;
    notify(this.env, "warn", "INITIATIVE_SIDECAR.notify.superseded");
    const t = translator(this.env);
    const take = await this.env.foundry.applications.api.DialogV2.confirm({
      window: { title: t("INITIATIVE_SIDECAR.link.takeOverTitle") }, content: `<p>${t("INITIATIVE_SIDECAR.link.takeOverText")}</p>`,
      yes: { label: t("INITIATIVE_SIDECAR.link.takeOver") }, no: { label: t("INITIATIVE_SIDECAR.link.stayStopped") },
      rejectClose: false, modal: false
    }).catch(() => null);
    return take === true ? this.takeOver() : false;
  }

  /** This page takes the world back: what it had queued the other page sent; the current state goes at the welcome. */
  takeOver() {
    if (this.status !== "superseded") return false;
    this.outbox.clear();
    return this.start();
  }

  /**
   * The world's recording as the sidecar stored it (JSON Lines, what `initiative-sidecar
   * replay` reads), asked over the connection (GM only: the connection is the GM's).
   * @returns {Promise<string|null>} null when the sidecar cannot answer now (the GM is told)
   */
  async recording() {
    const socket = this.client?.ready ? this.client.socket : null;
    const answer = await socket?.timeout(60000).emitWithAck("export", {}).catch((e) => ({ ok: false, error: { code: "timeout", message: String(e?.message ?? e) } }));
    if (answer?.ok) return answer.recording;
    notify(this.env, "warn", "INITIATIVE_SIDECAR.link.exportFailed", { message: answer?.error?.message ?? this.env.game.i18n.localize("INITIATIVE_SIDECAR.link.noSidecar") });
    return null;
  }

  /** Tell the GM about the connection, once per kind of trouble. */
  setStatus(status, detail, url) {
    const prev = this.status;
    this.status = status;
    const n = (level, key, data) => notify(this.env, level, key, data);
    if (status === "connected") {
      if (prev !== "connected") log.info(`connected (${detail?.ruleset}), last_seq ${detail?.last_seq}`);
      if (this.warned) n("info", "INITIATIVE_SIDECAR.notify.connected", { ruleset: detail?.ruleset ?? "" });
      this.warned = false;
      // the welcome's warnings (a module of another version than the sidecar's), each once
      for (const w of detail?.warnings ?? []) {
        if (prev === "connected") break;
        const key = `INITIATIVE_SIDECAR.warning.${w.code}`;
        const text = escapingTranslator(translator(this.env))(key, w.data ?? {});
        this.env.ui.notifications.warn(text === key ? `Initiative Sidecar: ${escapeHTML(w.message)}` : text, { permanent: true });
        log.warn(`the sidecar warns: ${w.code} ${w.message}`);
      }
    } else if (status === "unreachable") {
      if (!this.warned) {
        this.warned = true;
        n("warn", "INITIATIVE_SIDECAR.notify.unreachable", { url });
        log.warn(`the sidecar at ${url} is not reachable; retrying in the background`);
      }
    } else if (status === "refused") {
      if (prev !== "refused") {
        const mismatch = detail?.code === "protocol_mismatch";
        const message = withoutToken(detail?.message, this.client?.auth?.token);
        n("error", mismatch ? "INITIATIVE_SIDECAR.warning.protocol_mismatch" : "INITIATIVE_SIDECAR.notify.refused", { code: detail?.code ?? "?", message });
        log.error(`the sidecar refused the connection: ${detail?.code}`);
      }
      this.warned = true;
    } else if (status === "superseded") {
      log.warn("another connection took over this world; this page stopped");
      this.superseded();
    }
  }

  /**
   * `welcome`: align seq numbers. The current state of each combat is sent when the sidecar
   * lost its history, when the outbox dropped what it could not keep, or when a page of this
   * world closed before its messages were sent (never merely because a page opened).
   */
  welcome(welcome) {
    this.learnRules(welcome);
    this.handlers.onRevisions?.(welcome.combats ?? []);
    const { lostHistory } = this.outbox.welcome(welcome.last_seq);
    if (lostHistory) {
      log.warn(`the sidecar lost its history (last_seq ${welcome.last_seq}); resending the current state`);
      notify(this.env, "warn", "INITIATIVE_SIDECAR.notify.lostHistory");
    }
    if (lostHistory || this.outbox.needsResync) {
      this.outbox.resynced();
      for (const combat of this.env.game.combats ?? []) this.resync(combat);
    }
    // messages the sidecar had already stored left the outbox without an ack
    this.handlers.onSettled?.();
  }

  /**
   * Does a message about this combat still wait for the sidecar's answer? (its plans wait too)
   * @param {string} combatId
   */
  awaiting(combatId) { return this.outbox.holds(combatId); }

  /**
   * Keep what the sidecar says of its ruleset (intents it accepts, skipped acts) in a world
   * setting every client reads; written only when it changed.
   * @param {{ruleset:string, intents?:string[], skipped_acts?:string[]}} welcome
   */
  learnRules(welcome) {
    const rules = { ruleset: welcome.ruleset, intents: [...(welcome.intents ?? [])], skipped_acts: [...(welcome.skipped_acts ?? [])] };
    const old = getSetting(this.env, SETTINGS.RULES) ?? {};
    if (JSON.stringify(old) !== JSON.stringify(rules)) return setSetting(this.env, SETTINGS.RULES, rules);
    return null;
  }

  /**
   * Send a combat's whole current state: a snapshot, then each combatant's last roll (from
   * its flags) or its value as the GM's edit.
   * @param {object} combat
   */
  resync(combat) {
    const user = this.env.game.user.id;
    this.hook("createCombat", combat, user, {});
    for (const c of combat.combatants) {
      const mark = c.flags?.[MODULE_ID]?.roll;
      if (mark?.json) {
        try {
          this.hook("initiativeRoll", combat, user, undefined, undefined, initiativeRollField(c.id, JSON.parse(mark.json), undefined, rollingGroup(c)));
          continue;
        } catch { /* fall through */ }
      }
      if (Number.isFinite(c.initiative)) {
        this.intent({ user, kind: "initiative.set", combat_id: combat.id, combatant_id: c.id, args: { value: c.initiative } });
      }
    }
  }

  /**
   * Queue a hook message about `combat` and send it when connected.
   * @param {string} hook @param {object} combat @param {string} user
   * @param {object} [changed] @param {object} [options] @param {object} [roll]
   */
  hook(hook, combat, user, changed, options, roll) {
    const data = hookPayload({
      user, world_time: worldTime(this.env), hook,
      combat: snapshotOf(this.env, combat), current: currentOfCombat(combat),
      changed, options, roll
    });
    return this.enqueue("hook", data);
  }

  /**
   * Queue an intent. @param {{user:string, kind:string, combat_id?:string, combatant_id?:string, args?:object}} p
   * @returns {Promise<object>} the sidecar's ack for it
   */
  intent(p) {
    return this.enqueue("intent", intentPayload({ ...p, world_time: worldTime(this.env) }));
  }

  /**
   * Queue a message. A page taken over queues nothing (the page holding the world sends it);
   * it sends the current state if it takes over. @returns {Promise<object>} the ack
   */
  enqueue(event, data) {
    if (this.status === "superseded") {
      return Promise.resolve({ ok: false, seq: null, error: { code: "superseded", message: "another page of this GM holds the sidecar connection" } });
    }
    const message = this.outbox.enqueue(event, data);
    const done = new Promise((resolve) => this.waiters.set(message.data.seq, resolve));
    this.client?.pump();
    return done;
  }

  /** Route what an ack carries. */
  ack(message, ack) {
    if (ack.ok) {
      for (const plan of ack.plans ?? []) this.handlers.onPlan(plan);
      for (const prompt of ack.prompts ?? []) this.handlers.onPrompt(prompt);
      if (ack.notices?.length) this.handlers.onNotices(ack.notices, message);
    } else if (ack.error && !RESEND_CODES.includes(ack.error.code)) {
      log.warn(`${message.event} seq ${message.data.seq} refused: ${ack.error.code} ${ack.error.message}`);
      this.handlers.onRefused(message, ack.error);
    }
    // the outbox let this message go (before this call): a plan held for its answer may be
    // written now, even when this ack carries none (the plan did not change)
    this.handlers.onSettled?.();
    if (!ack.ok && RESEND_CODES.includes(ack.error?.code)) return;
    const waiter = this.waiters.get(message.data.seq);
    this.waiters.delete(message.data.seq);
    waiter?.(ack);
  }
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
