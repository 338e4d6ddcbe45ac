/**
 * The connection to the sidecar (socket.io through Foundry's global `io`), owned by the
 * active GM's client only. Sends the outbox strictly in seq order, one message in flight,
 * each with an ack; reconnects with backoff; resends after `welcome`.
 * @module sidecar-client
 */

import { FATAL_CONNECT_CODES } from "./constants.js";
import * as log from "./log.js";

/**
 * @typedef {object} ClientEvents
 * @property {(welcome:object) => void} onWelcome called before the outbox is pumped again
 * @property {(message:object, ack:object) => void} onAck every ack (ok or not)
 * @property {(plan:object) => void} onPlan broadcast plans
 * @property {(prompt:object) => void} onPrompt broadcast prompts
 * @property {(state:"connected"|"unreachable"|"refused"|"superseded", detail?:object) => void} onStatus
 */

/** One socket.io connection to the sidecar, feeding from an {@link Outbox}. */
export class SidecarClient {
  /**
   * @param {{io:Function, url:string, auth:object, outbox:import("./outbox.js").Outbox,
   *   events:ClientEvents, ackTimeoutMs?:number, recorder?:import("./recorder.js").Recorder}} opts
   */
  constructor({ io, url, auth, outbox, events, ackTimeoutMs = 10000, recorder }) {
    this.io = io;
    this.url = url;
    this.auth = auth;
    this.outbox = outbox;
    this.events = events;
    this.ackTimeoutMs = ackTimeoutMs;
    this.recorder = recorder;
    this.socket = null;
    this.ready = false;       // welcomed and not disconnected
    this.pumping = false;
    this.closed = false;
    this.retryTimer = null;
    this.retryDelay = 1000;
  }

  /** Open the connection (socket.io reconnects by itself after transport failures). */
  connect() {
    this.closed = false;
    const socket = this.io(this.url, {
      transports: ["websocket"],
      auth: this.auth,               // the token travels here, never in the URL
      query: { world: this.auth.world }, // hosted: nginx routes by world (deploy/nginx.conf)
      reconnection: true,
      reconnectionDelay: 500,
      reconnectionDelayMax: 5000,
      forceNew: true
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
      // A server-side disconnect is not retried by socket.io: retry ourselves.
      if (reason === "io server disconnect" && !this.closed) this.retryLater();
    });
    socket.on("connect_error", (err) => {
      this.ready = false;
      const code = err?.data?.code ?? err?.data?.reason ?? err?.message;
      if (FATAL_CONNECT_CODES.includes(code)) {
        this.events.onStatus("refused", { code, message: err?.data?.message ?? "" });
        this.retryLater(30000);      // a setting must change; try again now and then
      } else {
        this.events.onStatus("unreachable", { message: String(err?.message ?? err) });
        if (!socket.active) this.retryLater();
      }
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
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.socket?.removeAllListeners();
    this.socket?.disconnect();
    this.socket = null;
  }

  /**
   * Send everything in the outbox, oldest first, one at a time. Safe to call any time.
   * @returns {Promise<void>}
   */
  async pump() {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.ready && this.socket) {
        const message = this.outbox.peek();
        if (!message) break;
        this.recorder?.record(message);
        let ack;
        try {
          ack = await this.socket.timeout(this.ackTimeoutMs).emitWithAck(message.event, message.data);
        } catch {
          // no ack (disconnected or slow): the message stays. Disconnected: resent after the
          // next welcome. Still connected: try again shortly (a late first answer makes the
          // second one a harmless duplicate, which carries the current plans and prompts).
          if (this.ready) setTimeout(() => this.pump(), this.retryMs ?? 1000);
          break;
        }
        const verdict = this.outbox.settle(message.data.seq, ack);
        try { this.events.onAck(message, ack); } catch (e) { log.error("handling an ack failed", e); }
        if (verdict === "resend") {
          if (ack.error?.code === "superseded") {
            // not stored: another connection writes the world now (its `superseded` event follows)
            this.superseded({ world: this.auth.world, message: ack.error.message });
            break;
          }
          if (ack.error?.code === "out_of_order" || ack.error?.code === "served_elsewhere") {
            // The sidecar misses earlier messages, or (hosted) another process serves the world
            // now: reconnect so the welcome of whoever serves it says where to resume.
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
