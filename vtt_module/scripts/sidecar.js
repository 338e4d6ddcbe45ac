/**
 * The active GM's link to the sidecar: the outbox, the connection, what each ack does (plans
 * applied, prompts routed, notices announced) and the current state sent when the sidecar may
 * lack it. What the GM is told about the link is in link-status.js.
 * @module sidecar
 */

import { MODULE_ID } from "./constants.js";
import { Outbox } from "./outbox.js";
import { SidecarClient } from "./sidecar-client.js";
import { connectAuth, hookPayload, intentPayload, initiativeRollField, rollingGroup } from "./payloads.js";
import { getSetting, setSetting, SETTINGS, rulesetSettings, tokenKey, urlKey } from "./settings.js";
import { gmIds, isActiveGM, snapshotOf, currentOfCombat, worldTime } from "./foundry-data.js";
import { showStatus, offerTakeOver } from "./link-status.js";
import { notify } from "./html.js";
import * as log from "./log.js";

/** The connection owner (exists on the active GM's client only). */
export class Sidecar {
  /**
   * @param {object} env Foundry globals @param {{onPlan:Function, onPrompt:Function, onNotices:Function,
   *   onRevisions?:Function, onSettled?:Function}} handlers `onSettled`: after each ack and welcome (held plans may be written)
   */
  constructor(env, handlers) {
    Object.assign(this, { env, handlers, client: null, status: "idle", warned: false, dropped: false, waiters: new WeakMap() });
    const world = env.game.world.id;
    // One flag per world in this browser: "a page of this world closed with messages unsent".
    const flags = () => getSetting(env, SETTINGS.UNSENT) ?? {};
    this.outbox = new Outbox({
      onFull: (count) => {
        this.dropped = true; // messages the sidecar never saw: their rolls and values go at the welcome
        log.warn(`the outbox passed its bound: ${count} unsent messages dropped; the current state is sent once the sidecar is back`);
        notify(env, "warn", "INITIATIVE_SIDECAR.notify.storageFull", { what: "outbox", count });
      },
      onDrop: (messages) => { for (const m of messages) this.answer(m, { ok: false, seq: null, error: { code: "superseded", message: "left the outbox unanswered: already stored, or replaced by the current state" } }); },
      onPending: (waiting) => {
        const { [world]: _, ...others } = flags();
        setSetting(env, SETTINGS.UNSENT, waiting ? { ...others, [world]: true } : others);
      }
    });
    this.outbox.resync = Boolean(flags()[world]);
  }

  /** Does this page hold (or seek) the world's connection? Only then does it answer players. */
  get serving() { return this.client !== null; }

  /** The connect auth from the settings and the world. */
  auth() {
    const { game } = this.env;
    return connectAuth({
      token: getSetting(this.env, tokenKey(this.env)), world: game.world.id,
      ruleset: getSetting(this.env, SETTINGS.RULESET), settings: rulesetSettings(this.env), gm_users: gmIds(this.env),
      module_version: game.modules.get(MODULE_ID).version, foundry_version: game.release.version, system: game.system.id
    });
  }

  /** Connect (active GM only; without a token it only says so). */
  start() {
    if (!isActiveGM(this.env)) return false;
    const auth = this.auth();
    if (!auth.token) { notify(this.env, "warn", "INITIATIVE_SIDECAR.notify.noToken"); return false; }
    const url = getSetting(this.env, urlKey(this.env));
    this.status = "idle";
    const events = { onWelcome: (w) => this.welcome(w), onAck: (...a) => this.ack(...a), onPlan: (plan) => this.handlers.onPlan(plan),
      onPrompt: (prompt) => this.handlers.onPrompt(prompt), onStatus: (status, detail) => this.setStatus(status, detail, url) };
    this.client = new SidecarClient({ io: this.env.io, url, auth, outbox: this.outbox, events }).connect();
    log.info(`connecting to the sidecar at ${url} as world ${auth.world} (${auth.ruleset})`);
    return true;
  }

  /** Close and reconnect (a setting changed). A page that was taken over stays stopped. */
  restart() { if (this.status !== "superseded") { this.stop(); this.start(); } }

  /** Close the connection. */
  stop() { this.client?.close(); Object.assign(this, { client: null, status: "idle" }); }

  /** The link's state changed: tell the GM (link-status.js); a page taken over stops. */
  setStatus(status, detail, url) {
    const prev = this.status;
    this.status = status;
    showStatus(this, prev, status, detail, url);
    if (status !== "superseded") return;
    this.client?.close(); // this page stops: the hooks it sees reach the page holding the world too
    this.client = null;
    offerTakeOver(this.env).then((take) => take && this.takeOver());
  }

  /** This page takes the world back: what it had queued the other page sent; the current state goes at the welcome. */
  takeOver() {
    if (this.status !== "superseded") return false;
    this.outbox.clear();
    return this.start();
  }

  /** The welcomed connection (the world's recording is asked on it), or null. */
  get socket() { return this.client?.ready ? this.client.socket : null; }

  /**
   * `welcome`: align seq numbers. The current state of each combat is sent when the sidecar
   * lost its history, when the outbox dropped what it could not keep, or when a page of this
   * world closed before its messages were sent (never merely because a page opened); the rolls
   * and values behind it only for a combat the sidecar does not know (a lost history, a page
   * closed before sending it), or when the outbox dropped messages: a sidecar that saw them
   * would take them for new ones (rescored, a dash or hold undone).
   */
  welcome(welcome) {
    this.learnRules(welcome);
    this.handlers.onRevisions?.(welcome.combats ?? []);
    const { lostHistory } = this.outbox.welcome(welcome.last_seq);
    if (lostHistory) {
      log.warn(`the sidecar lost its history (last_seq ${welcome.last_seq}); resending the current state`);
      notify(this.env, "warn", "INITIATIVE_SIDECAR.notify.lostHistory");
    }
    if (lostHistory || this.outbox.resync) {
      const known = new Set((welcome.combats ?? []).map((c) => c.combat_id));
      const dropped = this.dropped;
      Object.assign(this, { dropped: false }).outbox.resync = false;
      for (const combat of this.env.game.combats ?? []) this.resync(combat, lostHistory || dropped || !known.has(combat.id));
    }
    this.handlers.onSettled?.(); // messages the sidecar had stored left the outbox without an ack
  }

  /** Does a message about this combat still wait for the sidecar's answer? (its plans wait too) @param {string} combatId */
  awaiting(combatId) { return this.outbox.holds(combatId); }

  /** Keep what the sidecar says of its ruleset (intents it accepts, skipped acts) in a world setting every client reads, if it changed. */
  learnRules(welcome) {
    const rules = { ruleset: welcome.ruleset, intents: [...(welcome.intents ?? [])], skipped_acts: [...(welcome.skipped_acts ?? [])] };
    const old = getSetting(this.env, SETTINGS.RULES) ?? {};
    return JSON.stringify(old) === JSON.stringify(rules) ? null : setSetting(this.env, SETTINGS.RULES, rules);
  }

  /** Send a combat's current state: a snapshot, then (`values`) each combatant's last roll (its flags) or value (the GM's edit). */
  resync(combat, values) {
    const user = this.env.game.user.id;
    this.hook("createCombat", combat, user, {});
    if (values) for (const c of combat.combatants) {
      const mark = c.flags?.[MODULE_ID]?.roll;
      try {
        if (mark?.json) { this.hook("initiativeRoll", combat, user, undefined, undefined, initiativeRollField(c.id, JSON.parse(mark.json), undefined, rollingGroup(c))); continue; }
      } catch { /* an unreadable mark: its value instead */ }
      if (Number.isFinite(c.initiative)) this.intent({ user, kind: "initiative.set", combat_id: combat.id, combatant_id: c.id, args: { value: c.initiative } });
    }
  }

  /**
   * Queue a hook message about `combat` and send it when connected.
   * @param {string} hook @param {object} combat @param {string} user @param {object} [changed] @param {object} [options] @param {object} [roll]
   */
  hook(hook, combat, user, changed, options, roll) {
    const data = hookPayload({ user, world_time: worldTime(this.env), hook, combat: snapshotOf(this.env, combat), current: currentOfCombat(combat), changed, options, roll });
    return this.enqueue("hook", data);
  }

  /** Queue an intent. @param {{user:string, kind:string, combat_id?:string, combatant_id?:string, args?:object}} p @returns {Promise<object>} */
  intent(p) { return this.enqueue("intent", intentPayload({ ...p, world_time: worldTime(this.env) })); }

  /** Queue a message; a page taken over queues nothing (the page holding the world sends it). @returns {Promise<object>} the ack */
  enqueue(event, data) {
    if (this.status === "superseded") return Promise.resolve({ ok: false, seq: null, error: { code: "superseded", message: "another page of this GM holds the sidecar connection" } });
    const message = this.outbox.enqueue(event, data);
    const done = new Promise((resolve) => this.waiters.set(message, resolve)); // by message: welcome renumbers seqs
    this.client?.pump();
    return done;
  }

  /** Route what an ack carries. @param {object} message @param {object} ack @param {"done"|"resend"} [verdict] the outbox's */
  ack(message, ack, verdict) {
    const resend = verdict === "resend";
    if (ack.ok) {
      for (const plan of ack.plans ?? []) this.handlers.onPlan(plan);
      for (const prompt of ack.prompts ?? []) this.handlers.onPrompt(prompt);
      if (ack.notices?.length) this.handlers.onNotices(ack.notices, message);
    } else if (ack.error && !resend) log.warn(`${message.event} seq ${message.data.seq} refused: ${ack.error.code} ${ack.error.message}`);
    // the outbox let this message go: a plan held for its answer may be written now, even without a plan here
    this.handlers.onSettled?.();
    if (!resend) this.answer(message, ack);
  }

  /** Settle the promise of a message's `enqueue`. */
  answer(message, ack) { this.waiters.get(message)?.(ack); this.waiters.delete(message); }
}
