/**
 * The outbox: every message for the sidecar gets the next `seq` and stays here, persisted,
 * until the sidecar acks it. Pure: storage is injected (`load()`/`save(state)`).
 *
 * Invariants: `seq` strictly increases per world and survives reloads; `pending` is sorted
 * by seq; `acked` is the highest seq the sidecar acknowledged.
 *
 * Bounded: it lives in a client setting, i.e. the browser's localStorage (a few MB per origin,
 * shared with Foundry). When the unacked messages pass `maxChars` (the sidecar has been away
 * a long time), all but the oldest (maybe in flight) are dropped and numbering continues
 * after it: the sidecar never sees a gap, and `resync` tells the owner to send each combat's current state once the
 * sidecar is back (as after a lost history). `onFull` warns the GM. A save the browser refuses
 * (QuotaExceededError) keeps the messages in memory and warns too.
 * @module outbox
 */

import { RESEND_CODES } from "./constants.js";

/**
 * @typedef {{event:"hook"|"intent", data:object}} Message
 * @typedef {{seq:number, acked:number, pending:Message[]}} OutboxState
 * @typedef {{load:() => (OutboxState|null|undefined), save:(state:OutboxState) => void}} OutboxStore
 */

/** Characters of unacked messages kept at most: 1 MB of localStorage (UTF-16), with the recording 3 MB of the usual 5 MB per origin. */
export const OUTBOX_MAX_CHARS = 500_000;

/** The persisted outbox and sequence numbers of one world. */
export class Outbox {
  /**
   * @param {OutboxStore} store
   * @param {{maxChars?:number, onFull?:(dropped:number) => void}} [opts]
   */
  constructor(store, { maxChars = OUTBOX_MAX_CHARS, onFull } = {}) {
    this.store = store;
    this.maxChars = maxChars;
    this.onFull = onFull;
    const loaded = store.load();
    /** @type {OutboxState & {resync?:boolean}} */
    this.state = {
      seq: Number(loaded?.seq) || 0,
      acked: Number(loaded?.acked) || 0,
      pending: Array.isArray(loaded?.pending) ? loaded.pending : [],
      resync: Boolean(loaded?.resync)
    };
    this.chars = this.state.pending.reduce((n, m) => n + JSON.stringify(m).length, 0);
  }

  /**
   * Persist the state. A save the browser refuses (localStorage full: Foundry's and other
   * modules' data count too) keeps the messages in memory, where they are still sent; the GM
   * is warned once, and the current state is sent again at the next welcome in case a reload
   * lost what was not saved.
   */
  save() {
    const fail = () => {
      this.state.resync = true;
      if (!this.refused) { this.refused = true; this.onFull?.(this.state.pending.length); }
    };
    try {
      const r = this.store.save(structuredClone(this.state));
      if (r && typeof r.then === "function") r.then(() => { this.refused = false; }, fail);
      else this.refused = false;
    } catch { fail(); }
  }

  /**
   * Drop the unacked messages but the oldest (it may be in flight: its seq stays used); the
   * owner resends the current state instead (`resync`).
   */
  overflow() {
    const [head, ...rest] = this.state.pending;
    if (!rest.length) return;
    this.state = { seq: head.data.seq, acked: this.state.acked, pending: [head], resync: true };
    this.chars = JSON.stringify(head).length;
    const dropped = rest.length;
    try { this.store.save(structuredClone(this.state)); } catch { /* nothing more to drop */ }
    this.onFull?.(dropped);
  }

  /** Was the outbox emptied since the last resync? (then send each combat's state) */
  get needsResync() { return this.state.resync; }

  /** The current state was sent again. */
  resynced() { this.state.resync = false; this.save(); }

  /**
   * Number a payload and keep it until acked.
   * @param {"hook"|"intent"} event @param {object} data payload without seq
   * @returns {Message} the message with `data.seq` set
   */
  enqueue(event, data) {
    const size = JSON.stringify({ event, data: { seq: this.state.seq + 1, ...data } }).length;
    if (this.chars + size > this.maxChars) this.overflow();
    const seq = ++this.state.seq;
    const message = { event, data: { seq, ...data } };
    this.state.pending.push(message);
    this.chars += size;
    this.save();
    return message;
  }

  /** The oldest unacked message, or null. @returns {Message|null} */
  peek() { return this.state.pending[0] ?? null; }

  /** How many messages wait for an ack. */
  get size() { return this.state.pending.length; }

  /**
   * Does a message about this combat still wait for its ack (queued, or sent and not answered)?
   * A hook names it as `combat._id`, an intent as `combat_id`.
   * @param {string} combatId
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
    this.state.pending = this.state.pending.filter((m) => m.data.seq !== seq);
    this.chars = this.state.pending.reduce((n, m) => n + JSON.stringify(m).length, 0);
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
      this.state = { seq: last, acked: last, pending: [], resync: false };
      this.chars = 0;
      this.save();
      return { lostHistory: true, dropped };
    }
    this.state.pending = this.state.pending.filter((m) => m.data.seq > last);
    this.chars = this.state.pending.reduce((n, m) => n + JSON.stringify(m).length, 0);
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
