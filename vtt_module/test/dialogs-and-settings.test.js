// Issue 25: names read as typed in dialog titles and buttons (fault 5); "Act after…" alone in a
// combat says so (low); the API is there at `init` (low); the token is a password field on the
// settings screen (low); the GM's download is the sidecar's recording of the world.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { eachGeneration } from "./fake-foundry/index.js";
import { SidecarProcess } from "./helpers/sidecar.js";
import { GM, ALICE, newWorld, bootTable, until } from "./helpers/table.js";
import { wireModule } from "../scripts/wire.js";
import { settle } from "./helpers/play.js";

let sidecar;
before(async () => { sidecar = await new SidecarProcess().start(); });
after(async () => { await sidecar?.stop(); });

async function combatOf(world, gm, names) {
  const combat = await world.createCombat(gm, {});
  const tokens = [...world.tokens.values()].filter((t) => names.includes(t.name));
  await combat.createEmbeddedDocuments("Combatant", tokens.map((t) => ({ actorId: t.actorId, tokenId: t._id })));
  return combat;
}

eachGeneration(test, "Act after…: a name with an apostrophe or markup is its button's label as typed, never an entity", async (generation) => {
  const world = newWorld({ id: `anchor-names-${generation}`, generation });
  world.tokens.get([...world.tokens.values()].find((t) => t.name === "Brother Tolm")._id).name = "Do'Urden <b>&</b>";
  const table = bootTable(world, { users: [GM, ALICE] });
  const alice = table.clients[ALICE];
  const combat = await combatOf(world, table.clients[GM], ["Aria", "Do'Urden <b>&</b>"]);
  let labels = null;
  alice.respond = (_kind, _config, element) => { labels = [...element.querySelectorAll("footer button")].map((b) => b.textContent); return null; };
  const mine = alice.game.combats.get(combat.id);
  assert.equal(await alice.api.perform("act.after", mine, mine.combatants.find((c) => c.name === "Aria")), null);
  assert.deepEqual(labels, ["Do'Urden <b>&</b>"]);
});

eachGeneration(test, "Act after… with nobody else visible tells the player so instead of failing", async (generation) => {
  const world = newWorld({ id: `anchor-alone-${generation}`, generation });
  const table = bootTable(world, { users: [GM, ALICE] });
  const alice = table.clients[ALICE];
  const combat = await combatOf(world, table.clients[GM], ["Aria", "Hidden Boss"]);
  await combat.updateEmbeddedDocuments("Combatant", [{ _id: combat.combatants.find((c) => c.name === "Hidden Boss").id, hidden: true }]);
  const mine = alice.game.combats.get(combat.id);
  assert.equal(await alice.api.perform("act.after", mine, mine.combatants.find((c) => c.name === "Aria")), null);
  assert.equal(alice.dialogs.length, 0);
  assert.match(alice.notifications.at(-1)?.message ?? "", /nobody else/);
});

eachGeneration(test, "the module's API is published at init, before setup and ready", async (generation) => {
  const gm = newWorld({ id: `api-init-${generation}`, generation }).connect(GM);
  wireModule(gm.env);
  gm.Hooks.callAll("init");
  const api = gm.game.modules.get("initiative-sidecar").api;
  assert.equal(typeof api?.request, "function");
  assert.equal(typeof api?.download, "function");
});

/** Foundry's settings window, as far as the module's fields go: one form group per shown setting (restricted ones for GMs only). */
function settingsWindow(client) {
  const form = client.document.createElement("form");
  for (const [id, config] of client.game.settings.registry) {
    if (!id.startsWith("initiative-sidecar.") || !config.config || (config.restricted && !client.user.isGM)) continue;
    const group = client.document.createElement("div");
    group.className = "form-group";
    group.innerHTML = `<label></label><input type="text" name="${id}">`;
    group.querySelector("input").value = String(client.game.settings.get("initiative-sidecar", id.slice("initiative-sidecar.".length)));
    form.append(group);
  }
  client.Hooks.callAll("renderSettingsConfig", {}, form, {});
  return form;
}

eachGeneration(test, "the settings window: the GM's token is a password field, a player's window has none", async (generation) => {
  const world = newWorld({ id: `settings-screen-${generation}`, generation });
  const table = bootTable(world, { users: [GM, ALICE], token: "s3cret-token" });
  const gm = settingsWindow(table.clients[GM]);
  const token = [...gm.querySelectorAll("input")].find((i) => i.value === "s3cret-token");
  assert.ok(token, "the GM's window has the token field");
  assert.equal(token.type, "password", "never shown in plain text (a streamed screen)");
  assert.equal(token.getAttribute("autocomplete"), "off");
  const player = settingsWindow(table.clients[ALICE]);
  assert.deepEqual([...player.querySelectorAll("input")].map((i) => i.name), [], "no token field (the rest is the GM's)");
  table.clients[GM].module.state.sidecar.stop();
});

test("the GM's download is the sidecar's recording of this world, which replay reads", { timeout: 30000 }, async () => {
  const world = newWorld({ id: "download-world" });
  const table = bootTable(world, { url: sidecar.url, token: sidecar.token, users: [GM] });
  const gm = table.clients[GM];
  await until(() => gm.module.state.sidecar.status === "connected", { what: "the GM to connect" });
  const combat = await combatOf(world, gm, ["Aria", "Goblin A"]);
  await settle(table);
  const name = await gm.api.download();
  assert.match(name, /^initiative-sidecar-download-world-.*\.jsonl$/);
  const lines = gm.downloads[0].data.trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(lines[0].event, "session");
  assert.equal(lines[0].data.world, "download-world");
  assert.equal(lines[0].data.token, undefined, "the token is not in the recording");
  assert.deepEqual(lines.slice(1).map((l) => l.data.seq), table.sent.filter((m) => m.event !== "export").map((m) => m.data.seq), "every message sent, once");
  assert.ok(lines.some((l) => l.data.combat?._id === combat.id));
  assert.ok(gm.storage.size <= 3, "nothing of it kept in the browser (the token, the URL, the unsent flags)");
  gm.module.state.sidecar.stop();
  // without a connection the GM is told, and nothing is saved
  assert.equal(await gm.api.download(), null);
  assert.match(gm.notifications.at(-1).message, /did not send the recording/);
  assert.equal(gm.downloads.length, 1);
});
