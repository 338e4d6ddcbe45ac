/**
 * The outbox: every message for the sidecar gets the next `seq` and waits in this page's memory
 * until acked. Pure. Invariants: `seq` strictly increases; `pending` is sorted by seq. Nothing is
 * persisted (client settings are shared by every world of the server; the sidecar stores what it
 * acks): what a closed page never sent is covered by the current state at the next `welcome`
 * (`resync`; sidecar.js keeps one flag per world). Bounded: past `maxChars` all but the
 * oldest (maybe in flight) are dropped, numbering goes on without a gap, the state is resent.
 * @module outbox
 */

import { RESEND_CODES } from "./constants.js";

/** @typedef {{event:"hook"|"intent", data:object}} Message */

/** Characters of unacked messages kept at most (a long outage): 4 MB of the page's memory. */
export const OUTBOX_MAX_CHARS = 2_000_000;

const sizeOf = (m) => JSON.stringify(m).length;

/** The unacked messages and sequence numbers of one world, in memory. */
export class Outbox {
  /**
   * @param {{maxChars?:number, onFull?:(dropped:number) => void, onPending?:(waiting:boolean) => void,
   *   onDrop?:(messages:Message[]) => void}} [opts] `onPending`: messages started (true) or stopped
   *   (false) waiting for the sidecar; `onDrop`: messages that left without an ack (they get none)
   */
  constructor({ maxChars = OUTBOX_MAX_CHARS, onFull, onPending, onDrop } = {}) {
    // resync: something may not have reached the sidecar, so each combat's current state goes at the next welcome
    Object.assign(this, { maxChars, onFull, onPending, onDrop, chars: 0, welcomed: false, resync: false });
    this.state = { seq: 0, acked: 0, pending: [] };
  }

  /** Forget every unacked message (another page sent them); the current state goes instead. */
  clear() { this.keep(() => false); this.resync = true; }

  /** Number a payload and keep it until acked. @param {"hook"|"intent"} event @param {object} data @returns {Message} */
  enqueue(event, data) {
    const size = sizeOf({ event, data: { seq: this.state.seq + 1, ...data } });
    if (this.chars + size > this.maxChars && this.size > 1) {
      const [head, ...rest] = this.state.pending;
      Object.assign(this.state, { seq: head.data.seq, pending: [head] });
      this.resync = true;
      this.chars = sizeOf(head);
      this.onDrop?.(rest);
      this.onFull?.(rest.length);
    }
    const message = { event, data: { seq: ++this.state.seq, ...data } };
    this.state.pending.push(message);
    this.chars += size;
    if (this.size === 1) this.onPending?.(true);
    return message;
  }

  /** The oldest unacked message, or null. @returns {Message|null} */
  peek() { return this.state.pending[0] ?? null; }

  /** How many messages wait for an ack. */
  get size() { return this.state.pending.length; }

  /** Does a message about this combat (a hook's `combat._id`, an intent's `combat_id`) wait for its ack? @param {string} combatId */
  holds(combatId) { return this.state.pending.some((m) => (m.data.combat?._id ?? m.data.combat_id) === combatId); }

  /** Record the sidecar's ack for `seq`. @returns {"done"|"resend"} `resend` when the seq was not used up (gap, rate limit) */
  settle(seq, ack) {
    if (!ack.ok && RESEND_CODES.includes(ack.error?.code)) return "resend";
    this.keep((m) => m.data.seq !== seq, false);
    this.state.acked = Math.max(this.state.acked, seq);
    return "done";
  }

  /** Keep the pending messages that pass `test`; the others are dropped (`onDrop`) unless `acked`. */
  keep(test, dropped = true) {
    const before = this.state.pending;
    this.state.pending = before.filter(test);
    if (dropped && this.size < before.length) this.onDrop?.(before.filter((m) => !this.state.pending.includes(m)));
    this.chars = this.state.pending.reduce((n, m) => n + sizeOf(m), 0);
    if (before.length && !this.size) this.onPending?.(false);
  }

  /**
   * Align with the sidecar's `welcome.last_seq`: what it stored already (sent before a
   * reconnection; nothing at a page's first welcome) is dropped, the rest numbered on from
   * `last_seq + 1`. If `last_seq` is behind what it acked to this page (a new database), its
   * history is lost: the unacked messages go (the caller sends the current state instead).
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
