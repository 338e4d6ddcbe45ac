// A stand-in for the parts of foundry.utils the module and the fake use, written from the
// research notes (dotted keys expand, objects merge recursively, arrays are replaced,
// `-=key` deletes a key).

export function deepClone(v) { return v === undefined ? undefined : structuredClone(v); }

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
    const value = isObject(v) || Array.isArray(v) ? expandObject(v) : v;
    if (k.includes(".")) {
      const parts = k.split(".");
      let o = out;
      for (const p of parts.slice(0, -1)) o = o[p] ??= {};
      const last = parts.at(-1);
      o[last] = isObject(o[last]) && isObject(value) ? { ...o[last], ...value } : value;
    } else {
      out[k] = isObject(out[k]) && isObject(value) ? { ...out[k], ...value } : value;
    }
  }
  return out;
}

export function isObject(v) { return v !== null && typeof v === "object" && !Array.isArray(v); }

/** Merge `changes` into `target` in place: recursive for objects, `-=key` deletes. */
export function mergeInto(target, changes) {
  for (const [k, v] of Object.entries(changes)) {
    if (k.startsWith("-=")) { delete target[k.slice(2)]; continue; }
    if (isObject(v) && isObject(target[k])) mergeInto(target[k], v);
    else if (isObject(v)) { target[k] = {}; mergeInto(target[k], v); }
    else target[k] = deepClone(v);
  }
  return target;
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
