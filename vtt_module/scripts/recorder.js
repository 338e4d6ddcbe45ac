/**
 * The recorder: every message sent to the sidecar, as a recording (JSON Lines, issue 2):
 * line 1 `{"event":"session","data":<connect auth minus token>}`, then one
 * `{"event":"hook"|"intent","data":<payload as sent>}` per message, each seq once.
 * Pure: storage is injected (`load()`/`save(lines)`).
 * @module recorder
 */

import { sessionOf } from "./payloads.js";

/** A recording kept on the GM's machine. */
export class Recorder {
  /** @param {{load:() => (string[]|null|undefined), save:(lines:string[]) => void}} store */
  constructor(store) {
    this.store = store;
    /** @type {string[]} */
    this.lines = store.load() ?? [];
    this.seen = new Set();
    for (const line of this.lines) {
      try { const o = JSON.parse(line); if (o.data?.seq !== undefined) this.seen.add(o.data.seq); } catch { /* keep */ }
    }
    this.enabled = false;
  }

  /**
   * Start (or keep) recording a session. A new session line is written when the auth differs
   * from the recording's first line (a recording holds one session).
   * @param {object} auth the connect auth (the token is removed here)
   */
  session(auth) {
    if (!this.enabled) return;
    const line = JSON.stringify({ event: "session", data: sessionOf(auth) });
    if (this.lines[0] === line) return;
    if (this.lines.length === 0) { this.lines.push(line); this.store.save(this.lines); }
  }

  /**
   * Record a message as sent (resends of the same seq are recorded once).
   * @param {{event:string, data:{seq:number}}} message
   */
  record(message) {
    if (!this.enabled || this.lines.length === 0 || this.seen.has(message.data.seq)) return;
    this.seen.add(message.data.seq);
    this.lines.push(JSON.stringify({ event: message.event, data: message.data }));
    this.store.save(this.lines);
  }

  /**
   * Start over with a new session line (the sidecar lost its history and numbering restarted).
   * @param {object} auth
   */
  restart(auth) {
    if (!this.enabled) return;
    this.lines = [JSON.stringify({ event: "session", data: sessionOf(auth) })];
    this.seen.clear();
    this.store.save(this.lines);
  }

  /** The recording as JSON Lines text. @returns {string} */
  text() { return this.lines.map((l) => l + "\n").join(""); }

  /** Forget the recording. */
  clear() { this.lines = []; this.seen.clear(); this.store.save(this.lines); }
}
