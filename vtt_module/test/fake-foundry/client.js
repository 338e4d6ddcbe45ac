// One fake Foundry client: the globals a module sees (`game`, `Hooks`, `CONFIG`, `ui`,
// `foundry`, `ChatMessage`, `Roll`, `io`, `document`, and on v14 `_del`), bound to one user
// of a shared World, in the World's generation.

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { io } from "socket.io-client";
import { Hooks } from "./hooks.js";
import { makeDocumentClasses } from "./documents.js";
import { makeRoll, LEGACY_MODES } from "./roll.js";
import { CombatTracker, newWindow } from "./combat-tracker.js";
import { recordDeprecation, packageCompatible } from "./generation.js";
import { deepClone, getProperty, setProperty, expandObject, mergeInto, randomID, diffObject, ForcedDeletion, DELETE, escapeHTML, cleanHTML } from "./utils.js";
import { tokenRegion } from "./turn-events.js";

const LANG = JSON.parse(readFileSync(fileURLToPath(new URL("../../lang/en.json", import.meta.url)), "utf8"));
/** The module's real manifest: whether the world can activate it depends on its `compatibility`. */
const MANIFEST = JSON.parse(readFileSync(fileURLToPath(new URL("../../module.json", import.meta.url)), "utf8"));

function localize(key) { return getProperty(LANG, key) ?? key; }
function format(key, data = {}) { return localize(key).replace(/\{(\w+)\}/g, (_, k) => (k in data ? String(data[k]) : `{${k}}`)); }

/** `foundry.utils.isNewerVersion(v1, v0)`: is v1 newer than v0 (dotted numbers). */
function isNewerVersion(v1, v0) {
  const a = String(v1).split(".").map(Number), b = String(v0).split(".").map(Number);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  }
  return false;
}

export function makeClient(world, userId, storage) {
  const v14 = world.generation >= 14;
  const client = { world, userId, storage, notifications: [], dialogs: [], downloads: [], received: [], deprecations: [], windows: [] };
  client.deprecate = (message, opts) => recordDeprecation(client, message, opts);
  client.Hooks = new Hooks();
  // dnd5e groups the tracker's rows from its own renderCombatTracker hook, registered when the
  // system loads, before any module [GitHub foundryvtt/dnd5e `dnd5e.mjs`: Hooks.on("renderCombatTracker", (app, html) => app.renderGroups(html))]
  if (world.systemRolls === "dnd5e") client.Hooks.on("renderCombatTracker", (app, html) => app.renderGroups(html));
  // the defeated status id [F13 client/config.mjs specialStatusEffects.DEFEATED: "dead"]
  client.CONFIG = { Combat: { initiative: { formula: null, decimals: 2 } }, Combatant: {}, queries: {}, ChatMessage: {}, Dice: {}, specialStatusEffects: { DEFEATED: "dead" } };
  const { Combat, Combatant, Collection } = makeDocumentClasses(client);
  client.CONFIG.Combat.documentClass = Combat;
  client.CONFIG.Combatant.documentClass = Combatant;
  // message modes: v13 CONST.DICE_ROLL_MODES / CONFIG.Dice.rollModes; v14 CONFIG.ChatMessage.modes [D13 CONST.DICE_ROLL_MODES; types 14 config.d.mts; research §10]
  if (v14) client.CONFIG.ChatMessage.modes = { public: { label: "CHAT.MODES.public" }, gm: { label: "CHAT.MODES.gm" }, blind: { label: "CHAT.MODES.blind" }, self: { label: "CHAT.MODES.self" } };
  const ROLL_MODES = { publicroll: "CHAT.RollPublic", gmroll: "CHAT.RollPrivate", blindroll: "CHAT.RollBlind", selfroll: "CHAT.RollSelf" };
  if (!v14) client.CONFIG.Dice.rollModes = ROLL_MODES;
  else Object.defineProperty(client.CONFIG.Dice, "rollModes", { get() { client.deprecate("CONFIG.Dice.rollModes is deprecated in favor of CONFIG.ChatMessage.modes", { since: 14, until: 16 }); return ROLL_MODES; } });
  client.Roll = makeRoll(world.dice, client);

  const userDoc = (u) => ({
    id: u._id, _id: u._id, name: u.name,
    get role() { return u.role; },
    get active() { return world.user(u._id)?.active ?? false; },
    get isGM() { return u.role >= 3; },
    get isSelf() { return u._id === userId; },
    get isActiveGM() { return users.activeGM?.id === u._id && u._id === userId; },
    hasRole(r) { return u.role >= r; },
    async query(name, data, { timeout } = {}) { return world.query(client, u._id, name, data, { timeout }); }
  });
  const users = new Collection(world.users.map((u) => [u._id, userDoc(u)]));
  client.addUser = (u) => users.set(u._id, userDoc(u));
  client.removeUser = (id) => users.delete(id);
  Object.defineProperty(users, "activeGM", {
    get() {
      const gms = users.filter((u) => u.isGM && u.active).sort((a, b) => (b.role - a.role) || (a.id < b.id ? -1 : 1));
      return gms[0] ?? null;
    }
  });
  Object.defineProperty(users, "players", { get() { return users.filter((u) => !u.isGM); } });
  client.user = users.get(userId);

  const actorDoc = (a) => ({
    id: a._id, _id: a._id,
    get name() { return world.actors.get(a._id).name; },
    get system() { return world.actors.get(a._id).system; },
    get statuses() { return new Set(world.actors.get(a._id).statuses ?? []); },
    get ownership() { return world.actors.get(a._id).ownership; },
    get hasPlayerOwner() { return Object.entries(world.actors.get(a._id).ownership).some(([uid, lvl]) => lvl >= 3 && !world.isGM(uid)); },
    get isOwner() { return world.owns(userId, a._id); },
    testUserPermission(user, level) { return level === "OWNER" ? world.owns(user.id, a._id) : true; },
    getRollData() { return deepClone(world.actors.get(a._id).system); },
    toObject() { return deepClone(world.actors.get(a._id)); }
  });
  const actors = new Collection([...world.actors.values()].map((a) => [a._id, actorDoc(a)]));

  const combats = new Collection();
  client.addCombat = (source) => combats.set(source._id, new Combat(source));
  client.removeCombat = (id) => combats.delete(id);
  /** Token documents; `baseActor` is the world actor (unlinked tokens share it) — what dnd5e's sort compares. */
  const tokens = new Map();
  client.tokenDoc = (id) => {
    const t = world.tokens.get(id);
    if (!t) return undefined;
    if (!tokens.has(id)) {
      tokens.set(id, {
        id: t._id, _id: t._id,
        get name() { return world.tokens.get(id).name; },
        get actorLink() { return Boolean(world.tokens.get(id).actorLink); },
        get disposition() { return world.tokens.get(id).disposition ?? -1; },
        get actorId() { return world.tokens.get(id).actorId; },
        get actor() { return actors.get(world.tokens.get(id).actorId); },
        get baseActor() { return actors.get(world.tokens.get(id).actorId) ?? null; },
        get x() { return world.tokens.get(id).x; },
        get y() { return world.tokens.get(id).y; },
        regions: new Set([tokenRegion(world)]),
        update: (data) => world.updateToken(client, id, data)
      });
    }
    return tokens.get(id);
  };

  // ---------------------------------------------------------------- settings
  // world scope shared through the World, client scope in this browser's storage. Core's roll
  // visibility setting: `core.rollMode` on 13, `core.messageMode` on 14 [research §10; dnd5e
  // 5.3.3 basic-roll.mjs reads one or the other by generation]; v13 has no messageMode, and
  // v14 answers `core.rollMode` (mapped from messageMode) with a deprecation recorded.
  const registry = new Map([["core.combatTrackerConfig", { scope: "world", default: { resource: "", skipDefeated: false } }]]);
  if (world.systemRolls === "dnd5e") { // dnd5e's world settings the initiative roll reads [dnd5e 5.3.3 settings.mjs]
    registry.set("dnd5e.initiativeDexTiebreaker", { scope: "world", default: false });
    registry.set("dnd5e.initiativeScore", { scope: "world", default: "none" });
  }
  if (v14) registry.set("core.messageMode", { scope: "client", default: "public" });
  else registry.set("core.rollMode", { scope: "client", default: "publicroll" });
  /**
   * Client-scope settings live in the browser's localStorage, a few MB per origin [research
   * §9]: a write that would pass `world.storageQuota` bytes (UTF-16, keys and JSON values)
   * throws a QuotaExceededError, as `localStorage.setItem` does, and stores nothing.
   */
  const checkQuota = (id, value) => {
    let bytes = 0;
    for (const [k, v] of storage) if (k !== id) bytes += 2 * (k.length + JSON.stringify(v ?? null).length);
    bytes += 2 * (id.length + JSON.stringify(value ?? null).length);
    if (bytes > world.storageQuota) {
      const e = new Error(`Failed to execute 'setItem' on 'Storage': Setting the value of '${id}' exceeded the quota.`);
      e.name = "QuotaExceededError";
      throw e;
    }
  };
  /**
   * Where a setting lives by scope [research §10: scopes client, world, user]: `client` in
   * this browser's storage, `world` shared by everyone, `user` per user on the server
   * (shared by that user's clients only).
   */
  const storeOf = (scope) => {
    if (scope === "client") return storage;
    if (scope === "user") { if (!world.userSettings.has(userId)) world.userSettings.set(userId, new Map()); return world.userSettings.get(userId); }
    return world.worldSettings;
  };
  const settings = {
    register(ns, key, config) { registry.set(`${ns}.${key}`, config); },
    registerMenu() {},
    get(ns, key) {
      if (v14 && ns === "core" && key === "rollMode") {
        client.deprecate("The core.rollMode setting is deprecated in favor of core.messageMode", { since: 14, until: 16 });
        return Object.entries(LEGACY_MODES).find(([, m]) => m === settings.get("core", "messageMode"))?.[0] ?? "publicroll";
      }
      const id = `${ns}.${key}`;
      const cfg = registry.get(id);
      if (!cfg) throw new Error(`"${id}" is not a registered game setting`);
      const store = storeOf(cfg.scope);
      return store.has(id) ? deepClone(store.get(id)) : deepClone(cfg.default);
    },
    /**
     * A client-scope write is stored at once (localStorage). A world- or user-scope setting is
     * a Setting document: the write is a server round trip, and until the server's answer is
     * applied `get` still answers the old value, on the writer's client too [F13
     * `client/helpers/client-settings.mjs` `ClientSettings#set` awaits `#setWorld`, which
     * awaits `Setting#update` (or `Setting.create`); `client/data/client-backend.mjs`
     * `_updateDocuments` dispatches the request and applies `updateSource` only in the
     * response's handler; v14: world and user settings are still Setting documents in the
     * `world` storage, D14 `ClientSettings#storage`, `SettingData`, research §10]. Then
     * `onChange` runs on every client concerned (`Setting#_onUpdate`). The value goes out as
     * it was at the call (it is serialized before the request).
     */
    async set(ns, key, value) {
      const id = `${ns}.${key}`;
      const cfg = registry.get(id);
      if (!cfg) throw new Error(`"${id}" is not a registered game setting`);
      if (cfg.scope === "world" && !client.user.isGM) throw new Error("only a GM may change world settings");
      if (cfg.scope === "client") {
        checkQuota(id, value);
        storage.set(id, deepClone(value));
        cfg.onChange?.(value);
        return value;
      }
      const sent = deepClone(value);
      await world.settingRoundTrip();
      storeOf(cfg.scope).set(id, sent);
      for (const c of world.clients) if (cfg.scope === "world" || c.userId === userId) c.settingChanged(id, deepClone(sent));
      return value;
    },
    registry
  };
  client.settingChanged = (id, value) => registry.get(id)?.onChange?.(value);

  const socketHandlers = new Map();
  client.deliver = (event, data, senderId) => {
    client.received.push({ event, data, senderId });
    for (const fn of socketHandlers.get(event) ?? []) fn(data, senderId);
  };

  const compat = packageCompatible(world.manifest?.compatibility ?? MANIFEST.compatibility, world.release);
  const module = { id: MANIFEST.id, version: MANIFEST.version, active: compat.ok, compatibility: MANIFEST.compatibility, api: null };
  client.game = {
    world: { id: world.id },
    system: { id: world.system },
    version: world.release.version,
    release: world.release,
    ready: false,
    user: client.user,
    users,
    actors,
    combats,
    get combat() { return combats.find((c) => c.active) ?? null; },
    settings,
    i18n: { lang: world.lang, localize, format },
    time: { get worldTime() { return world.worldTime; } },
    socket: {
      on(event, fn) { if (!socketHandlers.has(event)) socketHandlers.set(event, []); socketHandlers.get(event).push(fn); },
      emit(event, data, options) { world.relay(client, event, data, options); }
    },
    modules: new Map([[module.id, module]]),
    get userTargets() { return []; }
  };
  client.game.user.targets = new Set();
  // a page loaded mid-session (a reload) starts with the world's combats, sorted by the system's
  // comparator, which reads game.i18n: so only once `game` exists
  for (const source of world.combats.values()) client.addCombat(deepClone(source));

  // ---------------------------------------------------------------- chat
  /**
   * Message visibility. v13: `rollMode` gmroll → whisper the GMs, blindroll → GMs + blind,
   * selfroll → the author only, publicroll → everyone ("roll" = the user's setting)
   * [D13 ChatMessage.applyRollMode; CONST.DICE_ROLL_MODES]. v14: `messageMode` public/gm/
   * blind/self with the same meaning [research §10]; v14 still takes `rollMode` (mapped).
   */
  const applyModes = (data, { rollMode, messageMode } = {}) => {
    let mode;
    if (v14) mode = messageMode ?? (rollMode !== undefined ? LEGACY_MODES[rollMode] : undefined);
    else mode = rollMode === "roll" ? settings.get("core", "rollMode") : rollMode;
    mode = { publicroll: "public", gmroll: "gm", blindroll: "blind", selfroll: "self" }[mode] ?? mode;
    const out = { ...data };
    if (mode === "gm") out.whisper = world.gmIds();
    else if (mode === "blind") { out.whisper = world.gmIds(); out.blind = true; }
    else if (mode === "self") out.whisper = [userId];
    return out;
  };
  /**
   * `ChatMessage.create`: `preCreateChatMessage(document, data, options, userId)` first, on the
   * creating client only, where `false` cancels (then nothing is created); then the message
   * [research §1.2: the generic document CRUD hooks, T13 hooks.d.mts, F13 client-backend.mjs].
   * The double's "document" is the message data with its modes applied and its `author`.
   */
  const createMessage = async (data, options = {}) => {
    const message = { ...applyModes(data, options), author: userId };
    if (client.Hooks.call("preCreateChatMessage", message, data, options, userId) === false) return undefined;
    return world.createChatMessage(client, message, options);
  };
  client.ChatMessage = {
    create: createMessage,
    applyModes,
    applyRollMode: (data, rollMode) => Object.assign(data, applyModes(data, { rollMode })),
    getWhisperRecipients: (name) => users.filter((u) => u.name === name)
  };

  // ---------------------------------------------------------------- UI
  client.notify = (level) => (m) => { client.notifications.push({ level, message: m }); return m; };
  const { window, document } = newWindow();
  client.window = window;
  client.document = document;
  client.ui = {
    notifications: { info: client.notify("info"), warn: client.notify("warn"), error: client.notify("error") }
  };
  client.ui.combat = new CombatTracker(client);

  /**
   * A dialog is shown. Its `content`, a string, is HTML cleaned by `foundry.utils.cleanHTML`
   * and inserted as markup [D13/D14 DialogV2Configuration: "If string, the content is cleaned
   * with foundry.utils.cleanHTML"; research §6 (`content: "<p>…</p>"`)]. The window title and
   * each button's label are set as text, localized [F13 `client/applications/api/dialog.mjs`
   * `_renderButtons`, `client/applications/api/application.mjs` (the title's `innerText`), as
   * issue 25's review of 13.350 found]: markup in a label shows as its characters. `confirm`
   * adds Yes/No, `prompt` and `input` an OK button; a dialog without buttons throws ("You must
   * define at least one entry in options.buttons", [F13] dialog.mjs
   * `_initializeApplicationOptions`), which `wait({buttons: []})` turns into a rejection. The
   * element is kept on the record so a test can look for markup a hostile name smuggled in.
   */
  const BUTTONS = { confirm: [{ action: "yes", label: "Yes" }, { action: "no", label: "No", default: true }], prompt: [{ action: "ok", label: "Confirm", default: true }], input: [{ action: "ok", label: "Confirm", default: true }] };
  const respond = async (kind, config = {}) => {
    const given = { yes: config.yes, no: config.no, ok: config.ok };
    const buttons = [...(BUTTONS[kind] ?? []).map((b) => ({ ...b, ...given[b.action] })), ...(config.buttons ?? [])];
    if (!buttons.length) throw new Error("You must define at least one entry in options.buttons");
    const element = client.document.createElement("dialog");
    element.className = "application dialog";
    element.innerHTML = `<header class="window-header"><h1 class="window-title"></h1></header><div class="window-content">${typeof config.content === "string" ? cleanHTML(config.content) : ""}</div><footer class="form-footer"></footer>`;
    element.querySelector(".window-title").textContent = localize(config.window?.title ?? "");
    for (const b of buttons) {
      const button = client.document.createElement("button");
      button.dataset.action = b.action;
      button.append(client.document.createElement("span"));
      button.firstChild.textContent = localize(b.label ?? "");
      element.querySelector("footer").append(button);
    }
    client.document.body.append(element);
    client.dialogs.push({ kind, config, element });
    try { return client.respond ? await client.respond(kind, config, element) : null; } finally { element.remove(); }
  };
  /**
   * The chat log: every message this user may see is rendered with its `content` and
   * `flavor` as HTML [D14 ChatMessageData: "The HTML content of this chat message"].
   */
  client.chatLog = client.document.createElement("ol");
  client.chatLog.id = "chat-log";
  client.document.body.append(client.chatLog);
  client.showMessage = (message) => {
    const li = client.document.createElement("li");
    li.className = "chat-message message";
    li.dataset.messageId = message.id;
    li.innerHTML = `<header class="message-header">${message.flavor ? `<span class="flavor-text">${message.flavor}</span>` : ""}</header><div class="message-content">${message.content ?? ""}</div>`;
    client.chatLog.append(li);
    return li;
  };
  /** DialogV2: confirm, prompt, input, wait on 13 and 14; query (another user's answer) [research §6]. */
  const DialogV2 = {
    confirm: (config) => respond("confirm", config),
    prompt: (config) => respond("prompt", config),
    input: (config) => respond("input", config),
    wait: (config) => respond("wait", config),
    query: (user, type, config) => world.dialogQuery(client, typeof user === "string" ? user : user.id, type, config)
  };
  /** The V1 `Dialog` global is deprecated since v13 until v16 [research §6]. */
  const DialogV1 = {
    confirm: (config) => { client.deprecate("You are using the Dialog class which is deprecated in favor of DialogV2", { since: 13, until: 16 }); return respond("confirm", config); },
    prompt: (config) => { client.deprecate("You are using the Dialog class which is deprecated in favor of DialogV2", { since: 13, until: 16 }); return respond("prompt", config); }
  };
  client.foundry = {
    utils: {
      deepClone, getProperty, setProperty, expandObject, randomID, diffObject, isNewerVersion, escapeHTML, cleanHTML,
      mergeObject: (a, b) => mergeInto(a, b),
      saveDataToFile: (data, type, filename) => client.downloads.push({ data, type, filename }),
      logCompatibilityWarning: (message, { since, until } = {}) => client.deprecate(message, { since, until })
    },
    applications: { api: { DialogV2 }, sidebar: { tabs: { CombatTracker } } },
    data: v14 ? { operators: { ForcedDeletion } } : {}
  };
  // A socket left open by a failed test must not keep the test process alive: the double's
  // `io` unrefs its timers and connection (engine.io-client's Node-only `autoUnref`).
  const unrefIo = (url, opts = {}) => io(url, { autoUnref: true, ...opts });
  client.io = unrefIo;
  // The globals object a module receives (`globalThis` in Foundry).
  client.env = {
    game: client.game, Hooks: client.Hooks, CONFIG: client.CONFIG, ui: client.ui,
    foundry: client.foundry, ChatMessage: client.ChatMessage, Roll: client.Roll, io: unrefIo,
    Dialog: DialogV1, document, window,
    // the page's `localStorage` global: this browser's storage, where client settings live (see settings)
    localStorage: { removeItem: (k) => { storage.delete(k); } },
    CONST: { DICE_ROLL_MODES: { PUBLIC: "publicroll", PRIVATE: "gmroll", BLIND: "blindroll", SELF: "selfroll" }, USER_ROLES: { ...world.constructor.ROLES },
      // [D14 CONST.REGION_EVENTS; F13 combat.mjs passes these names to `#triggerRegionEvents`]
      REGION_EVENTS: { TOKEN_TURN_START: "tokenTurnStart", TOKEN_TURN_END: "tokenTurnEnd", TOKEN_ROUND_START: "tokenRoundStart", TOKEN_ROUND_END: "tokenRoundEnd" } }
  };
  if (v14) client.env._del = DELETE; // v14 global singleton [types 14 client.d.mts]

  /**
   * Foundry's start-up on this client. The once-hooks in their documented order `init`,
   * `i18nInit`, `setup`, `initializeDynamicTokenRingConfig`, `initializeCombatConfiguration`
   * (`canvasConfig` only with a canvas, which the double has not), `ready` [D13 hookEvents,
   * "Once Hooks"]; before `ready` the UI is set up — the sidebar renders every tab, the
   * combat tracker's FIRST render included (so its context menu is built then) [research §9:
   * Game#initializeUI runs before Hooks.callAll("ready")].
   */
  client.boot = () => {
    if (!module.active) throw new Error(`Foundry ${world.release.version} cannot activate module ${module.id}: ${compat.reason}`);
    for (const hook of ["init", "i18nInit", "setup", "initializeDynamicTokenRingConfig", "initializeCombatConfiguration"]) client.Hooks.callAll(hook);
    client.ui.combat.render();
    client.game.ready = true;
    client.Hooks.callAll("ready");
    return client;
  };
  /** Open another browser window of this client (v14 pops sidebar tabs out into one). */
  client.openWindow = () => { const w = newWindow(); client.windows.push(w); return w; };
  return client;
}
