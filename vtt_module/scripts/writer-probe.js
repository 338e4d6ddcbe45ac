/**
 * One GM, two pages (two tabs, or two browsers): Foundry lets the same user log in twice and
 * keeps both sessions (foundryvtt issues #9425, #14728), and each page is the active GM. The
 * page that connects last takes the world over; the other gets `superseded`. That page then
 * stays quiet while another page of its user holds the connection, and takes it back once
 * none does, never in a loop: it asks its own user's pages over the module socket (with
 * `recipients`, every socket of those users [research §6]) and reconnects only when no page
 * answers within `waitMs`. It asks every `everyMs`, and at once when a hook comes.
 * @module writer-probe
 */

import { SOCKET_NAME, SOCKET_TYPES } from "./constants.js";

/** Asks and answers "does a page of this GM hold the sidecar connection?" */
export class WriterProbe {
  /**
   * @param {object} env
   * @param {{holding:() => boolean, onHeard:() => void, onGone:() => void}} handlers
   *   `holding`: this page holds (or seeks) the connection; `onHeard`: another page answered
   *   this page's ask; `onGone`: nobody did
   */
  constructor(env, { holding, onHeard, onGone }) {
    this.env = env;
    this.holding = holding;
    this.onHeard = onHeard;
    this.onGone = onGone;
    this.everyMs = 15000;
    this.waitMs = 2000;
    /** this page, among the user's pages */
    this.page = `${Date.now().toString(36)}.${Math.random().toString(36).slice(2, 10)}`;
    this.active = false;
    this.timer = null;
    /** the ask waiting for an answer, or null */
    this.asking = null;
    this.counter = 0;
  }

  /** Start asking (this page was superseded). */
  start() {
    this.active = true;
    this.later(this.everyMs);
  }

  /** Stop asking (this page holds the connection again, or lets it go). */
  stop() {
    this.active = false;
    this.asking = null;
    clearTimeout(this.timer);
    this.timer = null;
  }

  /** @param {number} ms */
  later(ms) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.ask(), ms);
  }

  /** Ask the user's other pages now (unless an ask is already out). */
  ask() {
    if (!this.active || this.asking) return;
    const ref = ++this.counter;
    this.asking = ref;
    this.emit({ type: SOCKET_TYPES.WRITER_ASK, page: this.page, ref });
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      if (!this.active || this.asking !== ref) return;
      this.stop();
      this.onGone();
    }, this.waitMs);
  }

  /** A module socket message (every one comes here; only this user's asks and answers count). */
  receive(data, senderId) {
    const me = this.env.game.user.id;
    if (senderId !== me || !data || data.page === this.page) return;
    if (data.type === SOCKET_TYPES.WRITER_ASK && this.holding()) {
      this.emit({ type: SOCKET_TYPES.WRITER_HERE, page: this.page, for: data.page, ref: data.ref });
    } else if (data.type === SOCKET_TYPES.WRITER_HERE && data.for === this.page && this.active && data.ref === this.asking) {
      this.asking = null;
      this.later(this.everyMs);
      this.onHeard();
    }
  }

  /** To this user's pages only (the sender's own page gets it too and ignores it). */
  emit(data) {
    const me = this.env.game.user.id;
    this.env.game.socket.emit(SOCKET_NAME, data, { recipients: [me] });
  }
}
