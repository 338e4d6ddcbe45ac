/**
 * The recorder: every message sent to the sidecar, as a recording (JSON Lines, issue 2):
 * line 1 `{"event":"session","data":<connect auth minus token>}`, then one
 * `{"event":"hook"|"intent","data":<payload as sent>}` per message, each seq once.
 * Pure: storage is injected (`load()`/`save(lines)`).
 *
 * Bounded: the recording lives in the browser's localStorage. Once it would pass `maxChars`
 * (or the browser refuses a save), recording stops, what was recorded is kept for download,
 * and `onFull` warns the GM once.
 * @module recorder
 */

import { sessionOf } from "./payloads.js";

/** Characters of recording kept at most: 2 MB of localStorage (UTF-16 units). */
export const RECORDING_MAX_CHARS = 1_000_000;

/** A recording kept on the GM's machine. */
export class Recorder {
  /**
   * @param {{load:() => (string[]|null|undefined), save:(lines:string[]) => void}} store
   * @param {{maxChars?:number, onFull?:(lines:number) => void}} [opts]
   */
  constructor(store, { maxChars = RECORDING_MAX_CHARS, onFull } = {}) {
    this.store = store;
    this.maxChars = maxChars;
    this.onFull = onFull;
    this.full = false;
    /** @type {string[]} */
    this.lines = store.load() ?? [];
    this.chars = this.lines.reduce((n, l) => n + l.length + 1, 0);
    this.seen = new Set();
    for (const line of this.lines) {
      try { const o = JSON.parse(line); if (o.data?.seq !== undefined) this.seen.add(o.data.seq); } catch { /* keep */ }
    }
    this.enabled = false;
  }

  /**
   * Start (or keep) recording a session. A session line is written at the start, when the
   * auth differs from the last session line (a new ruleset, other GMs), and when recording
   * resumes after a pause: replay takes a later session line as a reconnection and lets the
   * message after it skip the seqs that were not recorded.
   * @param {object} auth the connect auth (the token is removed here)
   * @param {{resumed?: boolean}} [opts]
   */
  session(auth, { resumed = false } = {}) {
    if (!this.enabled) return;
    const line = JSON.stringify({ event: "session", data: sessionOf(auth) });
    const last = [...this.lines].reverse().find((l) => l.startsWith('{"event":"session"'));
    if (last === line && !resumed) return;
    this.append(line);
  }

  /** Add a line and persist, unless the bound is reached (then recording stops). */
  append(line) {
    if (this.full) return;
    if (this.chars + line.length + 1 > this.maxChars) return this.stop();
    this.lines.push(line);
    this.chars += line.length + 1;
    try {
      const r = this.store.save(this.lines);
      if (r && typeof r.catch === "function") r.catch(() => { this.lines.pop(); this.stop(); });
    } catch { this.lines.pop(); this.stop(); }
  }

  /** The bound is reached: keep what is there, record no more, say so once. */
  stop() {
    if (this.full) return;
    this.full = true;
    this.onFull?.(this.lines.length);
  }

  /**
   * Record a message as sent (resends of the same seq are recorded once).
   * @param {{event:string, data:{seq:number}}} message
   */
  record(message) {
    if (!this.enabled || this.lines.length === 0 || this.seen.has(message.data.seq)) return;
    this.seen.add(message.data.seq);
    this.append(JSON.stringify({ event: message.event, data: message.data }));
  }

  /**
   * Start over with a new session line (the sidecar lost its history and numbering restarted).
   * @param {object} auth
   */
  restart(auth) {
    if (!this.enabled) return;
    this.lines = [];
    this.chars = 0;
    this.full = false;
    this.seen.clear();
    this.append(JSON.stringify({ event: "session", data: sessionOf(auth) }));
  }

  /** The recording as JSON Lines text. @returns {string} */
  text() { return this.lines.map((l) => l + "\n").join(""); }

  /** Forget the recording. */
  clear() { this.lines = []; this.chars = 0; this.full = false; this.seen.clear(); this.store.save(this.lines); }
}
