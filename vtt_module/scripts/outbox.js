/**
 * The outbox: every message for the sidecar gets the next `seq` and waits here, in this page's
 * memory, until the sidecar acks it. Pure.
 *
 * Invariants: `seq` strictly increases; `pending` is sorted by seq; `acked` is the highest seq
 * the sidecar acknowledged while this page lived.
 *
 * Nothing is persisted: Foundry's client settings live in the browser's localStorage, shared
 * by every world of the server, and the sidecar stores every message it acks. What a page never
 * sent (closed during an outage) is covered by the combats' current state at the next `welcome`
 * (`needsResync`; sidecar.js keeps one flag per world saying so). Bounded: past `maxChars` of
 * unacked messages all but the oldest (maybe in flight) are dropped, numbering continues after
 * it (the sidecar never sees a gap), the current state is sent instead, and `onFull` is told.
 * @module outbox
 */

import { RESEND_CODES } from "./constants.js";

/**
 * @typedef {{event:"hook"|"intent", data:object}} Message
 * @typedef {{seq:number, acked:number, pending:Message[], resync:boolean}} OutboxState
 */

/** Characters of unacked messages kept at most (a long outage): 4 MB of the page's memory. */
export const OUTBOX_MAX_CHARS = 2_000_000;

const sizeOf = (m) => JSON.stringify(m).length;

/** The unacked messages and sequence numbers of one world, in memory. */
export class Outbox {
  /**
   * @param {{maxChars?:number, onFull?:(dropped:number) => void,
   *   onPending?:(waiting:boolean) => void}} [opts] `onPending`: messages started (true) or
   *   stopped (false) waiting for the sidecar
   */
  constructor({ maxChars = OUTBOX_MAX_CHARS, onFull, onPending } = {}) {
    Object.assign(this, { maxChars, onFull, onPending, chars: 0 });
    /** @type {OutboxState} */
    this.state = { seq: 0, acked: 0, pending: [], resync: false };
  }

  /** Tell the owner whether messages wait, when that changed. */
  changed(before) {
    if (before !== this.state.pending.length > 0) this.onPending?.(!before);
  }

  /** Should each combat's current state be sent at the next welcome? */
  get needsResync() { return this.state.resync; }

  /** Something was not (or may not have been) sent: send the current state at the next welcome. */
  missed() { this.state.resync = true; }

  /** The current state was sent again. */
  resynced() { this.state.resync = false; }

  /** Forget every unacked message (another page sent them); the current state goes instead. */
  clear() {
    const before = this.size > 0;
    Object.assign(this.state, { pending: [], resync: true });
    this.chars = 0;
    this.changed(before);
  }

  /**
   * Number a payload and keep it until acked.
   * @param {"hook"|"intent"} event @param {object} data payload without seq
   * @returns {Message} the message with `data.seq` set
   */
  enqueue(event, data) {
    const before = this.size > 0;
    const size = sizeOf({ event, data: { seq: this.state.seq + 1, ...data } });
    if (this.chars + size > this.maxChars && this.size > 1) {
      const [head, ...rest] = this.state.pending;
      Object.assign(this.state, { seq: head.data.seq, pending: [head], resync: true });
      this.chars = sizeOf(head);
      this.onFull?.(rest.length);
    }
    const message = { event, data: { seq: ++this.state.seq, ...data } };
    this.state.pending.push(message);
    this.chars += size;
    this.changed(before);
    return message;
  }

  /** The oldest unacked message, or null. @returns {Message|null} */
  peek() { return this.state.pending[0] ?? null; }

  /** How many messages wait for an ack. */
  get size() { return this.state.pending.length; }

  /**
   * Does a message about this combat still wait for its ack (queued, or sent and not answered)?
   * A hook names it as `combat._id`, an intent as `combat_id`. @param {string} combatId
   */
  holds(combatId) {
    return this.state.pending.some((m) => (m.data.combat?._id ?? m.data.combat_id) === combatId);
  }

  /**
   * Record the sidecar's ack for `seq`.
   * @param {number} seq @param {{ok:boolean, error?:{code:string}}} ack
   * @returns {"done"|"resend"} `resend` when the seq was not used up (gap, rate limit)
   */
  settle(seq, ack) {
    if (!ack.ok && RESEND_CODES.includes(ack.error?.code)) return "resend";
    this.keep((m) => m.data.seq !== seq);
    this.state.acked = Math.max(this.state.acked, seq);
    return "done";
  }

  /** Keep the pending messages that pass `test`. */
  keep(test) {
    const before = this.size > 0;
    this.state.pending = this.state.pending.filter(test);
    this.chars = this.state.pending.reduce((n, m) => n + sizeOf(m), 0);
    this.changed(before);
  }

  /**
   * Align with the sidecar's `welcome.last_seq`: what it stored already (sent before a
   * reconnection: never at this page's first welcome) is dropped here, the rest is numbered on
   * from `last_seq + 1` without a gap. If `last_seq` is behind what it had acked to this page
   * (it got a new database), its history is lost: the unacked messages go (the caller sends
   * the current state instead) and `lostHistory` is true.
   * @param {number} lastSeq @returns {{lostHistory:boolean}}
   */
  welcome(lastSeq) {
    const last = Number(lastSeq) || 0;
    const lostHistory = last < this.state.acked;
    const sent = this.welcomed || this.state.acked > 0; // numbered in step with the sidecar
    this.welcomed = true;
    this.keep((m) => !lostHistory && !(sent && m.data.seq <= last));
    let next = last;
    for (const m of this.state.pending) m.data.seq = ++next;
    Object.assign(this.state, { seq: next, acked: last });
    return { lostHistory };
  }
}
