// A small Roll: formulas of dice terms (`NdF` with `cs>=N`, `df=N`, `r...` kept as written),
// numbers, `@path` roll data, `+`/`-`. Dice come from the world's dice source so tests can
// script results. `toJSON()` follows Roll#toJSON() of the research notes.

import { getProperty } from "./utils.js";

export function makeRoll(dice, client) {
  class Roll {
    static client = client;
    constructor(formula, data = {}) {
      this.data = data;
      this.formula = String(formula).replace(/@([\w.]+)/g, (_, p) => String(getProperty(data, p) ?? 0));
      this.options = {};
      this.terms = [];
      this.total = undefined;
      this._evaluated = false;
    }
    get evaluated() { return this._evaluated; }
    async evaluate() { return this.evaluateSync(); }
    evaluateSync() {
      const tokens = this.formula.replace(/\s+/g, "").match(/(\d*d\d+[^+\-]*|\d+(?:\.\d+)?|[+\-])/g) ?? [];
      let sign = 1, total = 0;
      for (const tok of tokens) {
        if (tok === "+" || tok === "-") {
          sign = tok === "-" ? -1 : 1;
          this.terms.push({ class: "OperatorTerm", options: {}, evaluated: true, operator: tok });
          continue;
        }
        const m = tok.match(/^(\d*)d(\d+)(.*)$/);
        if (m) {
          const number = Number(m[1] || 1), faces = Number(m[2]);
          const modifiers = (m[3].match(/([a-z]+)([^a-z]*)/g) ?? []);
          const results = [];
          for (let i = 0; i < number; i++) results.push({ result: dice.next(faces), active: true });
          const cs = modifiers.map((x) => x.match(/^cs(>=|>|=|<=|<)?(\d+)$/)).find(Boolean);
          const df = modifiers.map((x) => x.match(/^df(>=|>|=|<=|<)?(\d+)$/)).find(Boolean);
          const cmp = (v, op, n) => ({ ">=": v >= n, ">": v > n, "=": v === n, "<=": v <= n, "<": v < n }[op ?? ">="]);
          if (cs) {
            for (const r of results) { r.success = cmp(r.result, cs[1], Number(cs[2])); r.count = r.success ? 1 : 0; }
            if (df) {
              for (const r of results) {
                if (cmp(r.result, df[1] ?? "=", Number(df[2]))) { r.failure = true; delete r.success; r.count = -1; }
              }
            }
          }
          const value = results.reduce((s, r) => s + (r.active ? (r.count ?? r.result) : 0), 0);
          total += sign * value;
          this.terms.push({ class: "Die", options: {}, evaluated: true, number, faces, modifiers, results });
        } else {
          total += sign * Number(tok);
          this.terms.push({ class: "NumericTerm", options: {}, evaluated: true, number: Number(tok) });
        }
      }
      this.total = total;
      this._evaluated = true;
      return this;
    }
    toJSON() {
      return { class: "Roll", options: this.options, dice: [], formula: this.formula, terms: structuredClone(this.terms), total: this.total, evaluated: this._evaluated };
    }
    /**
     * `Roll#toMessage(messageData, {rollMode | messageMode, create})`. v13 takes `rollMode`
     * (publicroll, gmroll, blindroll, selfroll). v14 takes `messageMode` (public, gm, blind,
     * self); `rollMode` still works there but is deprecated since 14 until 16
     * [foundry-vtt-types 14.366 `src/foundry/client/dice/roll.d.mts` ToMessageOptions;
     * research §10]. v13 does not know `messageMode` (ignored: the message goes public).
     */
    async toMessage(data = {}, { rollMode, messageMode, create = true } = {}) {
      if (!this._evaluated) await this.evaluate();
      const client = Roll.client;
      const options = {};
      if (client.world.generation >= 14) {
        if (rollMode !== undefined) client.deprecate("The rollMode option of Roll#toMessage is deprecated in favor of messageMode, a string value in CONFIG.ChatMessage.modes", { since: 14, until: 16 });
        options.messageMode = messageMode ?? (rollMode !== undefined ? LEGACY_MODES[rollMode] ?? rollMode : undefined);
      } else if (rollMode !== undefined) options.rollMode = rollMode;
      const messageData = { content: String(this.total), ...data, rolls: [this.toJSON()] };
      if (!create) return client.ChatMessage.applyModes(messageData, options);
      return client.ChatMessage.create(messageData, options);
    }
  }
  return Roll;
}

/** v14 `Roll._mapLegacyRollMode`: a v13 roll mode → a v14 message mode [types roll.d.mts; research §10]. */
export const LEGACY_MODES = Object.freeze({ publicroll: "public", gmroll: "gm", blindroll: "blind", selfroll: "self", roll: undefined });

/** Dice: scripted results first (per faces), then a seeded generator. */
export class Dice {
  constructor(seed = 42) { this.seed = seed; this.queue = []; }
  script(...results) { this.queue.push(...results); }
  next(faces) {
    if (this.queue.length) return this.queue.shift();
    this.seed = (this.seed * 1103515245 + 12345) % 2147483648;
    return 1 + (this.seed % faces);
  }
}
