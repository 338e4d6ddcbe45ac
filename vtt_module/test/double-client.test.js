// The double's client, corrected against Foundry's own contracts (issue 25, corrections 1 and
// 3): client-scope settings belong to the browser's origin, not to a world; DialogV2 shows
// titles and button labels as text, cleans its HTML content, and refuses a dialog without
// buttons.
import { test } from "node:test";
import assert from "node:assert/strict";
import { World, eachGeneration, makeTable, browser } from "./fake-foundry/index.js";

const GM = "gmUser0000000001";
const users = [{ _id: GM, name: "GM", role: World.ROLES.GAMEMASTER }];

eachGeneration(test, "client-scope settings live in the browser's origin under namespace.key: every world of the server reads the same value", async (generation) => {
  const origin = browser();
  const a = new World({ id: "world-a", generation, users }).connect(GM, { storage: origin });
  const b = new World({ id: "world-b", generation, users }).connect(GM, { storage: origin });
  for (const c of [a, b]) {
    c.game.settings.register("mod", "kept", { scope: "client", default: "" });
    c.game.settings.register("mod", "shared", { scope: "world", default: "" });
  }
  await a.game.settings.set("mod", "kept", "written in world A");
  await a.game.settings.set("mod", "shared", "world A only");
  assert.equal(b.game.settings.get("mod", "kept"), "written in world A", "world B reads world A's client setting");
  assert.equal(b.game.settings.get("mod", "shared"), "", "a world setting stays in its world");
  assert.deepEqual([...origin.keys()], ["mod.kept"], "the key names no world");
  // another browser (another origin, or another machine) has its own
  const elsewhere = new World({ id: "world-a", generation, users }).connect(GM, { storage: browser() });
  elsewhere.game.settings.register("mod", "kept", { scope: "client", default: "" });
  assert.equal(elsewhere.game.settings.get("mod", "kept"), "");
});

eachGeneration(test, "DialogV2 sets the window title and button labels as text: markup in a name shows as its characters", async (generation) => {
  const t = makeTable({ generation });
  const name = `Do'Urden <b>the</b> & co`;
  let seen = null;
  t.gm.respond = (_kind, _config, element) => {
    seen = { title: element.querySelector(".window-title").textContent, labels: [...element.querySelectorAll("footer button")].map((b) => b.textContent), bold: element.querySelectorAll("b").length };
    return "a";
  };
  await t.gm.env.foundry.applications.api.DialogV2.wait({ window: { title: name }, buttons: [{ action: "a", label: name }, { action: "b", label: "Do&#39;Urden" }] });
  assert.deepEqual(seen, { title: name, labels: [name, "Do&#39;Urden"], bold: 0 }, "an entity in a label is read as typed, never decoded");
  await t.gm.env.foundry.applications.api.DialogV2.confirm({ content: "<p>sure?</p>" });
  assert.deepEqual([...t.gm.dialogs[1].element.querySelectorAll("footer button")].map((b) => b.dataset.action), ["yes", "no"]);
});

eachGeneration(test, "DialogV2 content is HTML cleaned by cleanHTML: markup stays markup, scripts and event attributes go", async (generation) => {
  const t = makeTable({ generation });
  t.gm.respond = () => true;
  await t.gm.env.foundry.applications.api.DialogV2.confirm({ content: `<p><b>bold</b><img src=x onerror="alert(1)"><script>alert(2)</script><a href="javascript:alert(3)">x</a>` });
  const content = t.gm.dialogs[0].element.querySelector(".window-content");
  assert.equal(content.querySelectorAll("b, img").length, 2, "markup in content becomes elements");
  assert.equal(content.querySelectorAll("script, [onerror]").length, 0);
  assert.equal(content.querySelector("a").getAttribute("href"), null);
  assert.equal(t.gm.env.foundry.utils.cleanHTML("<p>open"), "<p>open</p>", "unbalanced tags are closed");
});

eachGeneration(test, "DialogV2.wait with no buttons rejects and shows nothing", async (generation) => {
  const t = makeTable({ generation });
  await assert.rejects(t.gm.env.foundry.applications.api.DialogV2.wait({ window: { title: "x" }, buttons: [], rejectClose: false }), /at least one entry in options.buttons/);
  assert.equal(t.gm.dialogs.length, 0);
});
