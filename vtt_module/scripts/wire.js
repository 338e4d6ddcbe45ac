/** Wiring: which handler runs on which Foundry hook. No logic of its own. @module wire */

import { MODULE_ID, UNDELIVERED_CODES } from "./constants.js";
import { registerSettings, guardSettings } from "./settings.js";
import { Sidecar } from "./sidecar.js";
import { registerForwarder } from "./forwarder.js";
import { wrapInitiativeRoll, registerRollMarking } from "./initiative.js";
import { PlanApplier } from "./applier.js";
import { registerSteering } from "./turns.js";
import { Relay } from "./relay.js";
import { Actions } from "./actions.js";
import { showPrompt, promptRecipients } from "./prompts.js";
import { announce } from "./announce.js";
import { ReadyWatch } from "./ready.js";
import { onRenderTracker, downloadRecording } from "./tracker-ui.js";
import { isActiveGM } from "./foundry-data.js";
import * as log from "./log.js";

/**
 * Register the module's hooks against a Foundry client's globals. @param {object} env `globalThis` in Foundry; a fake client in tests
 * @returns {{state: object}} the module's live parts (for tests and the API)
 */
export function wireModule(env) {
  const state = { sidecar: null, relay: null, applier: null, actions: null, ready: null, pending: null, prompts: new Set() };
  const sidecar = () => state.sidecar;

  // A prompt is shown once per page while its dialog is open or answered. A dialog closed
  // without an answer (X, Escape) sends nothing, and an answer may never reach the sidecar
  // (away, no GM): then its id is forgotten, so the prompt is shown again when the sidecar
  // repeats it (a duplicate ack carries its combat's pending prompts).
  const showOnce = (prompt) => {
    if (state.prompts.has(prompt.prompt_id)) return;
    state.prompts.add(prompt.prompt_id);
    Promise.resolve(showPrompt(env, prompt, state.relay)).then((sent) => {
      if (!sent || (!sent.ok && UNDELIVERED_CODES.includes(sent.error?.code))) state.prompts.delete(prompt.prompt_id);
    });
  };
  // On the active GM every arrival is passed on: the player's page filters what it shows, and
  // one that closed the dialog or was reloaded meanwhile shows it again.
  const routePrompt = (prompt) => {
    const { game } = env;
    if (!isActiveGM(env)) return showOnce(prompt);
    const to = promptRecipients(prompt, game.users.filter((u) => u.active).map((u) => u.id), game.user.id);
    const others = to.filter((id) => id !== game.user.id);
    if (others.length) state.relay.forwardPrompt(prompt, others);
    if (to.includes(game.user.id)) showOnce(prompt);
  };

  const startOrStop = () => {
    if (isActiveGM(env) && !state.sidecar) {
      state.sidecar = new Sidecar(env, {
        onPlan: (plan) => state.applier.take(plan),
        onRevisions: (combats) => state.applier.align(combats),
        onSettled: () => state.applier.release(),
        onPrompt: routePrompt,
        onNotices: (notices, message) => { state.ready.learn(notices); announce(env, notices, message); }
      });
      state.sidecar.start(); // without a token it stays idle until the setting changes
    } else if (!isActiveGM(env) && state.sidecar) {
      state.sidecar.stop();
      state.sidecar = null;
    }
  };

  const onSettingChange = () => (state.sidecar ? state.sidecar.restart() : startOrStop());

  // Everything Foundry may call before `ready` is registered at `init`: the sidebar renders
  // the tracker (first render, context menu built once) during initializeUI, before `ready`
  // [F13 `client/game.mjs`, `sidebar/tabs/combat-tracker.mjs` `_onFirstRender`].
  const api = {
    state,
    request: (intent) => state.relay.request(intent),
    ...Object.fromEntries(["perform", "setInitiative", "readyStart", "readyConfirm"].map((name) => [name, (...args) => state.actions[name](...args)])),
    takeOver: () => state.sidecar?.takeOver() ?? false,
    // the sidecar stores every message: the GM's download is its export of this world
    download: async () => (state.sidecar ? downloadRecording(env, state.sidecar.socket) : null)
  };
  state.api = api;
  env.Hooks.once("init", () => {
    registerSettings(env, { onChange: onSettingChange });
    env.game.modules.get(MODULE_ID).api = api; // at init: other modules' `setup`/`ready` code may call it
    state.applier = new PlanApplier(env, { awaiting: (combatId) => state.sidecar?.awaiting(combatId) ?? false });
    state.relay = new Relay(env, { sidecar, onPrompt: routePrompt });
    state.actions = new Actions(env, state.relay);
    state.ready = new ReadyWatch(env, sidecar);
    registerForwarder(env, sidecar);
    registerRollMarking(env, () => state.pending);
    registerSteering(env, state.applier);
    state.ready.register();
    env.Hooks.on("renderCombatTracker", (app, html) => onRenderTracker(env, app, html, api));
    env.Hooks.on("getCombatTrackerContextOptions", (_app, items) => state.actions.extendTrackerMenu(items));
    env.Hooks.on("renderTokenHUD", (hud, html) => state.actions.decorateTokenHUD(hud, html));
    env.Hooks.on("renderSettingsConfig", (_app, html) => guardSettings(env, html));
  });
  env.Hooks.once("setup", () => { state.pending = wrapInitiativeRoll(env); });
  env.Hooks.once("ready", () => {
    // 0.1.0 kept the token (in plain text), the outbox and the recording under these keys
    for (const key of ["token", "outbox", "recording"]) env.localStorage?.removeItem(`${MODULE_ID}.${key}`);
    state.relay.listen();
    env.Hooks.on("userConnected", () => startOrStop());
    // A role changed: the active GM may be someone else now, and the sidecar's list of GMs
    // (who may approve) is out of date until the connection is made again with a new one.
    const gmsChanged = () => { const before = state.sidecar; startOrStop(); if (before && state.sidecar === before) before.restart(); };
    env.Hooks.on("updateUser", (_user, changed) => { if (changed && "role" in changed) gmsChanged(); });
    // A GM user created or deleted mid-session (an assistant GM added for the evening): the
    // same. Both hooks get (user, options, userId) on every client, after the collection
    // changed [T13 `client/hooks.d.mts` CreateDocument/DeleteDocument; D14 hookEvents].
    env.Hooks.on("createUser", (user) => { if (user?.isGM) gmsChanged(); });
    env.Hooks.on("deleteUser", (user) => { if (user?.isGM) gmsChanged(); });
    startOrStop();
    log.info("ready");
  });
  return { state };
}
