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
    this.lines.push(line);
    this.store.save(this.lines);
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
