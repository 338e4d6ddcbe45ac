// Foundry's Hooks, per client: synchronous; `call` stops at the first handler returning
// false; `callAll` ignores return values; a returned Promise is not awaited
// [research §1, F13 `client/helpers/hooks.mjs`]. A handler's error is caught and logged.

export class Hooks {
  constructor() { this.events = new Map(); this.nextId = 1; this.ids = new Map(); }
  on(name, fn, { once = false } = {}) {
    const id = this.nextId++;
    if (!this.events.has(name)) this.events.set(name, []);
    this.events.get(name).push({ fn, id, once });
    this.ids.set(id, name);
    return id;
  }
  once(name, fn) { return this.on(name, fn, { once: true }); }
  off(name, fnOrId) {
    const list = this.events.get(name) ?? [];
    this.events.set(name, list.filter((h) => h.fn !== fnOrId && h.id !== fnOrId));
  }
  callAll(name, ...args) {
    for (const h of [...(this.events.get(name) ?? [])]) {
      if (h.once) this.off(name, h.id);
      try { h.fn(...args); } catch (e) { this.errors.push({ name, error: e }); console.error(`hook ${name} failed`, e); }
    }
    return true;
  }
  call(name, ...args) {
    for (const h of [...(this.events.get(name) ?? [])]) {
      if (h.once) this.off(name, h.id);
      let r;
      try { r = h.fn(...args); } catch (e) { this.errors.push({ name, error: e }); console.error(`hook ${name} failed`, e); continue; }
      if (r === false) return false;
    }
    return true;
  }
  errors = [];
}
