// Every player-controlled string that becomes HTML, rendered with a hostile name in headless
// Chromium the way Foundry renders it (innerHTML for dialog contents, chat cards,
// notifications; innerText for button labels and window titles; data-tooltip as HTML, data-tooltip-text as text). The
// test fails if any script runs or any of the name's markup turns into elements.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { ROOT, dumpDom } from "./helpers/chromium.js";

const HOSTILE = `<img src=x onerror="window.__xss=(window.__xss||0)+1"><script>window.__xss=(window.__xss||0)+1</script><b class="evil">bold</b><svg onload="window.__xss=(window.__xss||0)+1"></svg>"' onmouseover="window.__xss=1`;

function page() {
  const lang = readFileSync(path.join(ROOT, "lang/en.json"), "utf8");
  return `<!doctype html><html><head><meta charset="utf-8"><title>hostile names</title></head><body>
<div id="out"></div>
<script type="module">
import { dashContent, anchorButtons, readiedContent, setInitiativeContent } from "/scripts/dialogs.js";
import { promptDialog } from "/scripts/prompts.js";
import { noticeMessage } from "/scripts/announce.js";
import { rerollFlavor } from "/scripts/initiative.js";
import { decorateTracker } from "/scripts/tracker.js";
import { notify } from "/scripts/html.js";
const lang = ${lang};
const get = (k) => k.split(".").reduce((o, p) => o?.[p], lang) ?? k;
const t = (k, d) => (d ? get(k).replace(/\\{(\\w+)\\}/g, (_, x) => (x in d ? String(d[x]) : "{" + x + "}")) : get(k));
const bad = ${JSON.stringify(HOSTILE).replace(/</g, "\\u003c")};
const out = document.getElementById("out");
const cases = {};
const render = (name, html) => {
  const box = document.createElement("section");
  box.id = "case-" + name;
  box.innerHTML = html;
  out.append(box);
  cases[name] = box;
};
const turns = [{ id: "self0000", name: "Me" }, { id: "other000", name: bad }, { id: "other001", name: "ok" }];
// dialogs: contents, and buttons as DialogV2 puts them into markup
render("dash", dashContent(t));
// DialogV2 sets a button's label (and the window title) with innerText [F13 dialog.mjs _renderButtons]
render("anchors", "");
for (const b of anchorButtons(turns, "self0000")) { const el = document.createElement("button"); el.dataset.action = b.action; el.innerText = b.label; cases.anchors.append(el); }
render("readied", readiedContent(t, turns, "self0000"));
render("set-initiative", setInitiativeContent(t, { name: bad, initiative: 17.25, score: 17 }));
for (const kind of ["reroll", "reroll.approval", "opposed_check", "reroll.roll", bad]) {
  const d = promptDialog({ prompt_id: "p", kind, rule: bad, data: { natural: bad } }, t, bad);
  render("prompt-" + (kind === bad ? "unknown" : kind), "<h1></h1>" + d.content);
  cases["prompt-" + (kind === bad ? "unknown" : kind)].querySelector("h1").innerText = d.title;
}
// chat cards
render("notice", noticeMessage({ kind: "dash", text: bad + " dashes", combatant_id: "x" }, { hidden: () => false, gms: [], owners: () => [] }).content);
render("reroll-flavor", rerollFlavor(bad));
// notifications, rendered as HTML as Foundry's Notifications may
const env = { game: { i18n: { localize: (k) => t(k), format: (k, d) => t(k, d) } }, ui: { notifications: {} } };
for (const level of ["info", "warn", "error"]) env.ui.notifications[level] = (m) => render("notify-" + level + "-" + Object.keys(cases).length, m);
notify(env, "warn", "INITIATIVE_SIDECAR.notify.refusedIntent", { message: bad + " may not act" });
notify(env, "warn", "INITIATIVE_SIDECAR.notify.unreachable", { url: bad });
notify(env, "error", "INITIATIVE_SIDECAR.notify.refused", { code: bad, message: bad });
notify(env, "info", "INITIATIVE_SIDECAR.notify.connected", { ruleset: bad });
// tracker badges, with a tooltip manager that shows data-tooltip as HTML, data-tooltip-text as text
render("tracker", '<ol><li class="combatant" data-combatant-id="c1"><span class="token-name">x</span></li></ol>');
decorateTracker(cases.tracker, { c1: { acts: "defend_only", reaction: { available: false, reason: bad }, tags: ["dashed", "hesitating"], detail: { dash: bad, score: bad, turns_lost: 2 } } }, t, { c1: 3 });
const tip = document.createElement("aside");
tip.id = "tooltips";
for (const el of cases.tracker.querySelectorAll("[data-tooltip], [data-tooltip-text]")) {
  const p = document.createElement("p");
  if (el.dataset.tooltip !== undefined) p.innerHTML = el.dataset.tooltip; else p.textContent = el.dataset.tooltipText;
  tip.append(p);
}
out.append(tip);
setTimeout(() => {
  const report = {};
  for (const [name, box] of Object.entries(cases)) {
    report[name] = { evil: box.querySelectorAll("img, script, b, svg, [onmouseover], [onerror], [onload]").length, text: box.textContent.includes("onerror") };
  }
  report.labels = { evil: 0, text: true, exact: cases.anchors.textContent.includes(bad) && cases["prompt-unknown"].querySelector("h1").textContent === bad };
  report.tooltips = { evil: tip.querySelectorAll("img, script, b, svg").length, text: tip.textContent.includes("onerror") };
  document.body.dataset.report = JSON.stringify(report);
  document.body.dataset.xss = String(window.__xss ?? 0);
}, 500);
</script></body></html>`;
}

test("every player-controlled string becomes text, never markup or script, in headless Chromium", async () => {
  const dom = await dumpDom(page);
  const xss = dom.match(/data-xss="(\d+)"/);
  assert.ok(xss, "the page ran to its end");
  const raw0 = dom.match(/data-report="([^"]*)"/)?.[1] ?? "";
  assert.equal(xss[1], "0", `no script of the hostile name ran: ${raw0.replace(/&quot;/g, "\"")}`);
  const raw = dom.match(/data-report="([^"]*)"/)[1].replace(/&quot;/g, '"').replace(/&amp;/g, "&");
  const report = JSON.parse(raw);
  const names = Object.keys(report);
  for (const required of ["dash", "anchors", "readied", "set-initiative", "prompt-reroll", "prompt-reroll.approval", "prompt-opposed_check", "prompt-unknown", "notice", "reroll-flavor", "tracker", "tooltips"]) {
    assert.ok(names.includes(required), `case ${required} rendered`);
  }
  assert.equal(names.filter((n) => n.startsWith("notify-")).length, 4, "four notifications rendered");
  for (const [name, r] of Object.entries(report)) assert.equal(r.evil, 0, `${name}: the hostile name made elements`);
  assert.ok(report.labels.exact, "button labels and titles read as typed (DialogV2 sets them as text: no entities)");
  // where the name or the sidecar's text appears, it shows as text
  for (const name of ["anchors", "readied", "set-initiative", "prompt-reroll", "prompt-reroll.approval", "prompt-opposed_check", "notice", "reroll-flavor", "tooltips"]) {
    assert.ok(report[name].text, `${name}: the hostile name is shown as text`);
  }
});
