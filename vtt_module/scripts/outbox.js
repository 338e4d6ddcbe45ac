/**
 * The outbox: every message for the sidecar gets the next `seq` and stays here, persisted,
 * until the sidecar acks it. Pure: storage is injected (`load()`/`save(state)`).
 *
 * Invariants: `seq` strictly increases per world and survives reloads; `pending` is sorted
 * by seq; `acked` is the highest seq the sidecar acknowledged.
 * @module outbox
 */

import { RESEND_CODES } from "./constants.js";

/**
 * @typedef {{event:"hook"|"intent", data:object}} Message
 * @typedef {{seq:number, acked:number, pending:Message[]}} OutboxState
 * @typedef {{load:() => (OutboxState|null|undefined), save:(state:OutboxState) => void}} OutboxStore
 */

/** The persisted outbox and sequence numbers of one world. */
export class Outbox {
  /** @param {OutboxStore} store */
  constructor(store) {
    this.store = store;
    const loaded = store.load();
    /** @type {OutboxState} */
    this.state = {
      seq: Number(loaded?.seq) || 0,
      acked: Number(loaded?.acked) || 0,
      pending: Array.isArray(loaded?.pending) ? loaded.pending : []
    };
  }

  /** Persist the state. */
  save() { this.store.save(structuredClone(this.state)); }

  /**
   * Number a payload and keep it until acked.
   * @param {"hook"|"intent"} event @param {object} data payload without seq
   * @returns {Message} the message with `data.seq` set
   */
  enqueue(event, data) {
    const seq = this.state.seq + 1;
    this.state.seq = seq;
    const message = { event, data: { seq, ...data } };
    this.state.pending.push(message);
    this.save();
    return message;
  }

  /** The oldest unacked message, or null. @returns {Message|null} */
  peek() { return this.state.pending[0] ?? null; }

  /** How many messages wait for an ack. */
  get size() { return this.state.pending.length; }

  /**
   * Record the sidecar's ack for `seq`.
   * @param {number} seq @param {{ok:boolean, error?:{code:string}}} ack
   * @returns {"done"|"resend"} `resend` when the seq was not used up (gap, rate limit)
   */
  settle(seq, ack) {
    if (!ack.ok && RESEND_CODES.includes(ack.error?.code)) return "resend";
    this.state.pending = this.state.pending.filter((m) => m.data.seq !== seq);
    this.state.acked = Math.max(this.state.acked, seq);
    this.save();
    return "done";
  }

  /**
   * Align with the sidecar's `welcome.last_seq`.
   * - Messages at or below `last_seq` are stored there already: dropped here.
   * - If `last_seq` is behind what the sidecar had acked (a new database), its history is
   *   lost: numbering continues from `last_seq + 1`, the unacked messages are dropped (the
   *   caller resends the current state instead) and `lostHistory` is true.
   * - If `last_seq` is ahead of our numbering (a cleared browser), numbering continues after it.
   * @param {number} lastSeq
   * @returns {{lostHistory:boolean, dropped:Message[]}}
   */
  welcome(lastSeq) {
    const last = Number(lastSeq) || 0;
    if (last < this.state.acked) {
      const dropped = this.state.pending;
      this.state = { seq: last, acked: last, pending: [] };
      this.save();
      return { lostHistory: true, dropped };
    }
    this.state.pending = this.state.pending.filter((m) => m.data.seq > last);
    this.state.acked = Math.max(this.state.acked, last);
    if (this.state.seq < last) this.state.seq = last;
    // Unacked messages must follow last_seq without a gap: renumber if the sidecar is behind.
    let next = last;
    for (const m of this.state.pending) m.data.seq = ++next;
    this.state.seq = Math.max(this.state.seq, next);
    if (this.state.pending.length) this.state.seq = next;
    this.save();
    return { lostHistory: false, dropped: [] };
  }
}

/**
 * An in-memory store (tests, and the fallback when no persistent storage exists).
 * @param {OutboxState} [initial] @returns {OutboxStore & {state: OutboxState|null}}
 */
export function memoryStore(initial) {
  const box = { state: initial ?? null, load() { return box.state ? structuredClone(box.state) : null; }, save(s) { box.state = s; } };
  return box;
}
