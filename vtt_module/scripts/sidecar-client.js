/**
 * The connection to the sidecar (socket.io through Foundry's global `io`), owned by the
 * active GM's client only. Sends the outbox strictly in seq order, one message in flight,
 * each with an ack; reconnects with backoff; resends after `welcome`. A failed connection is
 * told apart (./sidecar-reach.js) and each case has its own text (`INITIATIVE_SIDECAR.reach.*`).
 * @module sidecar-client
 */

import { FATAL_CONNECT_CODES } from "./constants.js";
import * as log from "./log.js";
import { refusalKey, socketTarget, whyUnreachable } from "./sidecar-reach.js";

/**
 * @typedef {object} ClientEvents
 * @property {(welcome:object) => void} onWelcome called before the outbox is pumped again
 * @property {(message:object, ack:object, verdict:"done"|"resend") => void} onAck every ack (ok or not), with the outbox's verdict
 * @property {(plan:object) => void} onPlan broadcast plans
 * @property {(prompt:object) => void} onPrompt broadcast prompts
 * @property {(state:"connected"|"unreachable"|"refused"|"superseded", detail?:object) => void} onStatus
 *   (refused, unreachable: `detail.key` is the text naming the case, `detail.origin` the page's)
 */

/** How long a message waits for its ack before it is sent again. */
const ACK_TIMEOUT_MS = 10000;

/** One socket.io connection to the sidecar, feeding from an {@link Outbox}. */
export class SidecarClient {
  /** @param {{io:Function, url:string, auth:object, outbox:import("./outbox.js").Outbox, events:ClientEvents}} opts */
  constructor({ io, url, auth, outbox, events }) {
    Object.assign(this, { io, url, auth, outbox, events });
    this.socket = this.retryTimer = null;
    this.ready = this.pumping = this.closed = false; // ready: welcomed and not disconnected
    this.retryDelay = 1000;
  }

  /** Open the connection (socket.io reconnects by itself after transport failures). */
  connect() {
    this.closed = false;
    const { origin, path } = socketTarget(this.url); // the URL may carry a path (docs/setups.md)
    const socket = this.io(origin, {
      path, transports: ["websocket"], forceNew: true,
      auth: this.auth,                   // the token travels here, never in the URL
      query: { world: this.auth.world }, // hosted: nginx routes by world (deploy/nginx.conf)
      reconnection: true, reconnectionDelay: 500, reconnectionDelayMax: 5000
    });
    this.socket = socket;
    socket.on("welcome", (welcome) => {
      this.ready = true;
      this.retryDelay = 1000;
      this.events.onStatus("connected", welcome);
      this.events.onWelcome(welcome);
      this.pump();
    });
    socket.on("plan", (plan) => this.events.onPlan(plan));
    socket.on("prompt", (prompt) => this.events.onPrompt(prompt));
    socket.on("superseded", (data) => this.superseded(data));
    socket.on("disconnect", (reason) => {
      this.ready = false;
      log.info(`disconnected from the sidecar (${reason})`);
      if (reason === "io server disconnect" && !this.closed) this.retryLater(); // socket.io would not
    });
    socket.on("connect_error", (err) => {
      this.ready = false;
      const code = err?.data?.code ?? err?.data?.reason ?? err?.message;
      const page = globalThis.location?.origin ?? "";
      if (FATAL_CONNECT_CODES.includes(code)) {
        this.events.onStatus("refused", { code, message: err?.data?.message ?? "", key: refusalKey(code), origin: page });
        return this.retryLater(30000); // a setting must change; try again now and then
      }
      if (!socket.active) this.retryLater();
      whyUnreachable(this.url).then((reason) => {
        if (this.socket !== socket || this.ready) return; // closed or connected meanwhile
        const detail = { message: String(err?.message ?? err), reason, origin: page };
        this.events.onStatus("unreachable", { ...detail, key: `INITIATIVE_SIDECAR.reach.${reason}` });
      });
    });
    return this;
  }

  /** Another connection took the world over: close (the owner decides when to come back). */
  superseded(data) {
    if (this.closed) return;
    this.ready = false;
    this.events.onStatus("superseded", data);
    this.close();
  }

  /** Retry a refused or dropped connection later, with backoff. @param {number} [floor] */
  retryLater(floor = 0) {
    if (this.closed || this.retryTimer) return;
    const delay = Math.max(floor, this.retryDelay);
    this.retryDelay = Math.min(this.retryDelay * 2, 30000);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (!this.closed && this.socket && !this.socket.connected) this.socket.connect();
    }, delay);
  }

  /** Close this connection for good (settings changed, another page took over, or shutdown). */
  close() {
    this.closed = true;
    this.ready = false;
    clearTimeout(this.retryTimer ?? undefined);
    this.socket?.removeAllListeners();
    this.socket?.disconnect();
    this.socket = this.retryTimer = null;
  }

  /** Send everything in the outbox, oldest first, one at a time. Safe to call any time. @returns {Promise<void>} */
  async pump() {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.ready && this.socket) {
        const message = this.outbox.peek();
        if (!message) break;
        let ack;
        try {
          ack = await this.socket.timeout(ACK_TIMEOUT_MS).emitWithAck(message.event, message.data);
        } catch {
          // no ack: the message stays. Disconnected: resent after the next welcome. Still
          // connected: again shortly (a late answer makes the second a harmless duplicate).
          if (this.ready) setTimeout(() => this.pump(), 1000);
          break;
        }
        const verdict = this.outbox.settle(message.data.seq, ack);
        try { this.events.onAck(message, ack, verdict); } catch (e) { log.error("handling an ack failed", e); }
        if (verdict === "resend") {
          if (ack.error?.code === "superseded") {
            // not stored: another connection writes the world now (its `superseded` event follows)
            this.superseded({ world: this.auth.world, message: ack.error.message });
            break;
          }
          if (ack.error?.code === "out_of_order" || ack.error?.code === "served_elsewhere") {
            // earlier messages missed, or (hosted) another process serves the world: reconnect,
            // the welcome of whoever serves it says where to resume
            this.ready = false;
            this.socket.disconnect().connect();
            break;
          }
          await new Promise((r) => setTimeout(r, 1000));
        }
      }
    } finally {
      this.pumping = false;
    }
  }
}
