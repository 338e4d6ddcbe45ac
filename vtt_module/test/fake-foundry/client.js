// One fake Foundry client: the globals a module sees (`game`, `Hooks`, `CONFIG`, `ui`,
// `foundry`, `ChatMessage`, `Roll`, `io`), bound to one user of a shared World.

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { io } from "socket.io-client";
import { Hooks } from "./hooks.js";
import { makeDocumentClasses } from "./documents.js";
import { makeRoll } from "./roll.js";
import { deepClone, getProperty, setProperty, expandObject, mergeInto, randomID } from "./utils.js";

const LANG = JSON.parse(readFileSync(fileURLToPath(new URL("../../lang/en.json", import.meta.url)), "utf8"));

function localize(key) { return getProperty(LANG, key) ?? key; }
function format(key, data = {}) { return localize(key).replace(/\{(\w+)\}/g, (_, k) => (k in data ? String(data[k]) : `{${k}}`)); }

export function makeClient(world, userId, storage) {
  const client = { world, userId, storage, notifications: [], dialogs: [], downloads: [], received: [] };
  client.Hooks = new Hooks();
  const { Combat, Combatant, Collection } = makeDocumentClasses(client);
  client.Roll = makeRoll(world.dice);

  const userDoc = (u) => ({
    id: u._id, _id: u._id, name: u.name, role: u.role,
    get active() { return world.user(u._id).active; },
    get isGM() { return u.role >= 3; },
    get isSelf() { return u._id === userId; },
    get isActiveGM() { return users.activeGM?.id === u._id && u._id === userId; },
    hasRole(r) { return u.role >= r; }
  });
  const users = new Collection(world.users.map((u) => [u._id, userDoc(u)]));
  Object.defineProperty(users, "activeGM", {
    get() {
      const gms = users.filter((u) => u.isGM && u.active).sort((a, b) => (b.role - a.role) || (a.id < b.id ? -1 : 1));
      return gms[0] ?? null;
    }
  });
  Object.defineProperty(users, "players", { get() { return users.filter((u) => !u.isGM); } });
  client.user = users.get(userId);

  const actorDoc = (a) => ({
    id: a._id, _id: a._id, name: a.name,
    get system() { return world.actors.get(a._id).system; },
    get hasPlayerOwner() { return Object.entries(world.actors.get(a._id).ownership).some(([uid, lvl]) => lvl >= 3 && !world.isGM(uid)); },
    get isOwner() { return world.owns(userId, a._id); },
    testUserPermission(user, level) { return level === "OWNER" ? world.owns(user.id, a._id) : true; },
    getRollData() { return deepClone(world.actors.get(a._id).system); },
    toObject() { return deepClone(world.actors.get(a._id)); }
  });
  const actors = new Collection([...world.actors.values()].map((a) => [a._id, actorDoc(a)]));

  const combats = new Collection();
  client.addCombat = (source) => combats.set(source._id, new Combat(source));
  client.replaceCombat = (source) => {
    const doc = combats.get(source._id);
    if (!doc) return client.addCombat(source);
    doc._source = source;
    doc.rebuild();
  };
  client.removeCombat = (id) => combats.delete(id);
  for (const source of world.combats.values()) client.addCombat(deepClone(source));
  client.tokenDoc = (id) => {
    const t = world.tokens.get(id);
    return t && { id: t._id, _id: t._id, name: t.name, actorId: t.actorId, get actor() { return actors.get(t.actorId); }, x: t.x, y: t.y, update: (data) => world.updateToken(client, t._id, data) };
  };

  // settings: world scope shared through the World, client scope in this browser's storage
  const registry = new Map([["core.combatTrackerConfig", { scope: "world", default: { resource: "", skipDefeated: false } }]]);
  const settings = {
    register(ns, key, config) { registry.set(`${ns}.${key}`, config); },
    registerMenu() {},
    get(ns, key) {
      const id = `${ns}.${key}`;
      const cfg = registry.get(id);
      if (!cfg) throw new Error(`setting ${id} is not registered`);
      const store = cfg.scope === "client" ? storage : world.worldSettings;
      return store.has(id) ? deepClone(store.get(id)) : deepClone(cfg.default);
    },
    async set(ns, key, value) {
      const id = `${ns}.${key}`;
      const cfg = registry.get(id);
      if (!cfg) throw new Error(`setting ${id} is not registered`);
      if (cfg.scope !== "client" && !client.user.isGM) throw new Error("only a GM may change world settings");
      (cfg.scope === "client" ? storage : world.worldSettings).set(id, deepClone(value));
      if (cfg.scope === "client") cfg.onChange?.(value);
      else for (const c of world.clients) c.settingChanged(id, value);
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

  const module = { id: "initiative-sidecar", version: "0.1.0", active: true, api: null };
  client.game = {
    world: { id: world.id },
    system: { id: world.system },
    version: "13.350",
    release: { generation: 13, version: "13.350" },
    user: client.user,
    users,
    actors,
    combats,
    get combat() { return combats.find((c) => c.active) ?? null; },
    settings,
    i18n: { lang: "en", localize, format },
    time: { get worldTime() { return world.worldTime; } },
    socket: {
      on(event, fn) { if (!socketHandlers.has(event)) socketHandlers.set(event, []); socketHandlers.get(event).push(fn); },
      emit(event, data, options) { world.relay(client, event, data, options); }
    },
    modules: new Map([["initiative-sidecar", module]]),
    get userTargets() { return []; }
  };
  client.game.user.targets = new Set();

  const respond = async (kind, config) => {
    client.dialogs.push({ kind, config });
    return client.respond ? client.respond(kind, config) : null;
  };
  client.ChatMessage = { create: (data) => world.createChatMessage(client, data) };
  client.Roll.ChatMessage = client.ChatMessage;
  client.CONFIG = { Combat: { documentClass: Combat }, Combatant: { documentClass: Combatant }, queries: {} };
  client.ui = {
    notifications: {
      info: (m) => client.notifications.push({ level: "info", message: m }),
      warn: (m) => client.notifications.push({ level: "warn", message: m }),
      error: (m) => client.notifications.push({ level: "error", message: m })
    }
  };
  client.foundry = {
    utils: {
      deepClone, getProperty, setProperty, expandObject, randomID,
      mergeObject: (a, b) => mergeInto(a, b),
      saveDataToFile: (data, type, filename) => client.downloads.push({ data, type, filename })
    },
    applications: {
      api: {
        DialogV2: {
          confirm: (config) => respond("confirm", config),
          input: (config) => respond("input", config),
          wait: (config) => respond("wait", config),
          prompt: (config) => respond("prompt", config)
        }
      }
    }
  };
  client.io = io;
  // The globals object a module receives (`globalThis` in Foundry).
  client.env = {
    game: client.game, Hooks: client.Hooks, CONFIG: client.CONFIG, ui: client.ui,
    foundry: client.foundry, ChatMessage: client.ChatMessage, Roll: client.Roll, io
  };
  return client;
}
