// Chat, user queries and the module socket of the fake server (mixed into World).

import { deepClone, randomID, overTheWire } from "./utils.js";

export class Messaging {
  /** A chat message: shown to whoever may see it (whispers: recipients, GMs, the author unless blind). */
  async createChatMessage(client, data, options = {}) {
    await this.tick();
    const message = { id: randomID(), rolls: [], whisper: [], blind: false, content: "", flags: {}, speaker: {}, author: client.userId, ...deepClone(data) };
    this.chat.push(message);
    for (const c of this.clients) {
      if (message.whisper.length && !message.whisper.includes(c.userId) && !this.isGM(c.userId) && !(message.author === c.userId && !message.blind)) continue;
      c.showMessage(message);
      c.Hooks.callAll("createChatMessage", deepClone(message), { ...options }, client.userId);
    }
    return message;
  }

  /**
   * `User#query(name, data, {timeout})`: runs `CONFIG.queries[name]` on the target user's
   * client; fails when the user is inactive or the query unregistered [research §6].
   */
  async query(client, targetId, name, data, { timeout } = {}) {
    const target = this.clients.find((c) => c.userId === targetId);
    if (!target || !this.user(targetId)?.active) throw new Error(`User ${targetId} is not active`);
    const handler = target.CONFIG.queries[name];
    if (!handler) throw new Error(`The query "${name}" is not registered`);
    await this.tick();
    return overTheWire(await handler(overTheWire(data), { timeout }));
  }

  /** `DialogV2.query(user, type, config)`: the dialog shown on that user's client [research §6]. */
  async dialogQuery(client, targetId, type, config) {
    const target = this.clients.find((c) => c.userId === targetId);
    if (!target || !this.user(targetId)?.active) throw new Error(`User ${targetId} is not active`);
    await this.tick();
    return overTheWire(await target.foundry.applications.api.DialogV2[type](overTheWire(config)));
  }

  /** The module socket: to `recipients` (sender included if listed) or to every other client [§6]. */
  relay(sender, event, data, { recipients } = {}) {
    const targets = recipients ? this.clients.filter((c) => recipients.includes(c.userId)) : this.clients.filter((c) => c !== sender);
    this.record("socket", { from: sender.userId, to: targets.map((c) => c.userId), type: data?.type });
    for (const c of targets) setImmediate(() => c.deliver(event, overTheWire(data), sender.userId));
  }
}
