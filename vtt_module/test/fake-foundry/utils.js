// Data helpers of the double, written from the facts in ../shared/research/foundry-api.md
// (never from Foundry's code): dotted keys expand, objects merge recursively, arrays are
// replaced, `-=key` deletes a key (v13; deprecated since v14), `ForcedDeletion` (`_del`)
// deletes a key (v14), and an update carries only its difference (`diffObject`).

import { parseHTML } from "linkedom";

/**
 * v14's deletion operator (`foundry.data.operators.ForcedDeletion`, global `_del`).
 * Source: foundry-vtt-types 14.366 `src/foundry/common/data/operators.d.mts` (class, toJSON
 * as `{"__$OPERATOR$__": "ForcedDeletion"}`), `src/foundry/client/client.d.mts` (`_del`, a
 * reusable singleton). Exists only in generation 14 worlds (dnd5e 5.3.3 `item.mjs` uses
 * `_del` on 14 and `-=key` on 13).
 */
export const OPERATOR_IDENTIFIER = "__$OPERATOR$__";
export class ForcedDeletion {
  toJSON() { return { [OPERATOR_IDENTIFIER]: "ForcedDeletion", value: undefined }; }
  static create() { return DELETE; }
}
export const DELETE = new ForcedDeletion();

export function isDeletion(v) {
  return v instanceof ForcedDeletion || (isObject(v) && v[OPERATOR_IDENTIFIER] === "ForcedDeletion");
}

/** A deep copy that keeps the deletion operator (structuredClone would turn it into `{}`). */
export function deepClone(v) {
  if (v === undefined) return undefined;
  if (isDeletion(v)) return DELETE;
  if (Array.isArray(v)) return v.map(deepClone);
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, deepClone(x)]));
  return v;
}

/** What a socket does to data: JSON round trip (undefined values vanish, operators reconstruct). */
export function overTheWire(v) {
  return v === undefined ? undefined : reconstruct(JSON.parse(JSON.stringify(v)));
}
function reconstruct(v) {
  if (isDeletion(v)) return DELETE;
  if (Array.isArray(v)) return v.map(reconstruct);
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, reconstruct(x)]));
  return v;
}

export function getProperty(obj, key) {
  return key.split(".").reduce((o, k) => (o == null ? undefined : o[k]), obj);
}

export function setProperty(obj, key, value) {
  const parts = key.split(".");
  let o = obj;
  for (const p of parts.slice(0, -1)) {
    if (typeof o[p] !== "object" || o[p] === null) o[p] = {};
    o = o[p];
  }
  o[parts.at(-1)] = value;
  return true;
}

/** Expand dotted keys into nested objects (recursively, arrays of objects included). */
export function expandObject(obj) {
  if (Array.isArray(obj)) return obj.map((v) => (isObject(v) ? expandObject(v) : v));
  const out = {};
  for (const [k, v] of Object.entries(obj)) {
    const value = (isObject(v) && !isDeletion(v)) || Array.isArray(v) ? expandObject(v) : v;
    if (k.includes(".")) {
      const parts = k.split(".");
      let o = out;
      for (const p of parts.slice(0, -1)) o = o[p] ??= {};
      const last = parts.at(-1);
      o[last] = isPlain(o[last]) && isPlain(value) ? { ...o[last], ...value } : value;
    } else {
      out[k] = isPlain(out[k]) && isPlain(value) ? { ...out[k], ...value } : value;
    }
  }
  return out;
}

export function isObject(v) { return v !== null && typeof v === "object" && !Array.isArray(v); }
function isPlain(v) { return isObject(v) && !isDeletion(v); }

/** Every deletion in (expanded) update data: `{legacy: ["a.-=b"], operator: ["a.c"]}`. */
export function deletionsIn(changes, prefix = "") {
  const found = { legacy: [], operator: [] };
  for (const [k, v] of Object.entries(changes ?? {})) {
    const path = prefix ? `${prefix}.${k}` : k;
    if (k.startsWith("-=")) found.legacy.push(path);
    else if (isDeletion(v)) found.operator.push(path);
    else if (isObject(v)) {
      const inner = deletionsIn(v, path);
      found.legacy.push(...inner.legacy);
      found.operator.push(...inner.operator);
    } else if (Array.isArray(v)) {
      for (const row of v) if (isObject(row)) {
        const inner = deletionsIn(row, `${path}[]`);
        found.legacy.push(...inner.legacy);
        found.operator.push(...inner.operator);
      }
    }
  }
  return found;
}

/**
 * Merge `changes` into `target` in place: recursive for objects, arrays replaced, `-=key`
 * and the deletion operator delete, `undefined` values ignored (they do not survive the
 * socket's JSON).
 */
export function mergeInto(target, changes) {
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined) continue;
    if (k.startsWith("-=")) { delete target[k.slice(2)]; continue; }
    if (isDeletion(v)) { delete target[k]; continue; }
    if (isObject(v) && isObject(target[k])) mergeInto(target[k], v);
    else if (isObject(v)) { target[k] = {}; mergeInto(target[k], v); }
    else target[k] = deepClone(v);
  }
  return target;
}

function equal(a, b) {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => equal(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a), kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => equal(a[k], b[k]));
  }
  return false;
}

/**
 * The part of `changes` that differs from `source` (Foundry's `diffObject`, which the client
 * sends instead of the requested update [F13 `client/data/client-backend.mjs`, research §9]):
 * unchanged keys, nested ones too, are dropped; a deletion counts only when the key exists;
 * arrays count as one value. An empty result means "nothing to send".
 */
export function diffObject(source, changes) {
  const out = {};
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined) continue;
    if (k.startsWith("-=")) { if (source && k.slice(2) in source) out[k] = v; continue; }
    if (isDeletion(v)) { if (source && k in source) out[k] = v; continue; }
    const before = source?.[k];
    if (isObject(v) && isObject(before)) {
      const inner = diffObject(before, v);
      if (Object.keys(inner).length) out[k] = inner;
    } else if (!equal(before, v)) out[k] = deepClone(v);
  }
  return out;
}

let counter = 0;
export function randomID(length = 16) {
  const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  counter += 1;
  let s = "";
  let x = counter * 2654435761 % 4294967296;
  for (let i = 0; i < length; i++) { x = (x * 1103515245 + 12345) % 2147483648; s += chars[x % chars.length]; }
  return s;
}

/**
 * `foundry.utils.escapeHTML` (v13 and v14): escapes only `&`, `<`, `>`, `"` and `'`
 * [foundry-vtt-types `src/foundry/common/utils/helpers.d.mts` escapeHTML]. The double's own
 * templates use it as Handlebars' `{{…}}` escaping.
 */
export function escapeHTML(s) {
  return String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;" }[c]));
}

/**
 * `foundry.utils.cleanHTML(raw)`: "Clean a provided HTML fragment, closing unbalanced tags and
 * stripping some undesirable properties" [D14 foundry.utils.cleanHTML; D13 the same]. The
 * double's cleaning: parsed as a fragment (which closes unbalanced tags), then `<script>`
 * elements, `on…` event attributes and `javascript:` URLs are removed. Markup itself stays
 * markup: a name put into `content` unescaped still becomes elements (`<b>`, `<img>`).
 */
export function cleanHTML(raw) {
  const { document } = parseHTML("<!doctype html><html><body><template></template></body></html>");
  const box = document.createElement("div");
  box.innerHTML = String(raw ?? "");
  for (const s of box.querySelectorAll("script")) s.remove();
  for (const el of box.querySelectorAll("*")) {
    for (const { name, value } of [...el.attributes]) {
      if (/^on/i.test(name) || (/^(href|src|action|formaction)$/i.test(name) && /^\s*javascript:/i.test(value))) el.removeAttribute(name);
    }
  }
  return box.innerHTML;
}
