// Tracker badges in a real browser: the saved v13-shaped tracker fixture, decorated by the
// module's tracker.js with its CSS, rendered by headless Chromium (Debian's `chromium`).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, mkdirSync, statSync } from "node:fs";
import path from "node:path";
import { ROOT, serve, chromium } from "./helpers/chromium.js";
const ARTIFACTS = path.join(ROOT, "test/artifacts");

const STATES = {
  p8HkD2sLq7Vt4XmN: { acts: "full", reaction: { available: true, reason: "available" }, tags: ["surprise_immune", "ready_to_strike"], detail: {}, rules: ["BI-3"] },
  Wz3Lr9QyT6bJ1cVe: { acts: "movement_or_action", reaction: { available: false, reason: "dashed" }, tags: ["dashed", "no_dominance"], detail: { dash: 5 }, rules: ["BI-4"] },
  e5NbG7uK2pXa9RsD: { acts: "held", reaction: null, tags: ["held"], detail: {}, rules: ["ST-1"] },
  Rf6Nc2XwQ8kT3mHa: { acts: "none", reaction: null, tags: ["hesitating", "critical_failure"], detail: { turns_lost: 2 }, rules: ["DP-4"] },
  Jq4Tm8vC1zYh6LwF: { acts: "full", reaction: { available: false, reason: "before_first_turn" }, tags: ["reroll_pending"], detail: { natural: 3 }, rules: ["BI-2"] }
};

function page() {
  const fixture = readFileSync(path.join(ROOT, "test/fixtures/combat-tracker-v13.html"), "utf8");
  const lang = readFileSync(path.join(ROOT, "lang/en.json"), "utf8");
  return `<!doctype html><html><head><meta charset="utf-8"><title>tracker badges</title>
<link rel="stylesheet" href="/styles/tracker.css">
<style>body{background:#1d1d1d;color:#eee;font:14px sans-serif;width:300px;margin:8px}
li.combatant{display:flex;gap:6px;align-items:center;padding:4px;border-bottom:1px solid #444;list-style:none}
li.combatant.active{background:#333}.token-image{width:32px;height:32px;background:#777}.token-name{flex:1}
ol{padding:0;margin:0}.token-initiative{width:40px;text-align:right}</style></head><body>
${fixture}
<script type="module">
import { decorateTracker } from "/scripts/tracker.js";
const lang = ${lang};
const get = (k) => k.split(".").reduce((o, p) => o?.[p], lang) ?? k;
const t = (k, d = {}) => get(k).replace(/\\{(\\w+)\\}/g, (_, x) => d[x] ?? "");
const n = decorateTracker(document.querySelector("#combat"), ${JSON.stringify(STATES)}, t);
document.body.dataset.badges = String(n);
// a v14 popped-out tracker lives in another window: badges built by that window's document
const frame = document.createElement("iframe");
frame.srcdoc = ${JSON.stringify(fixture).replace(/</g, "\\u003c")};
frame.addEventListener("load", () => {
  const root = frame.contentDocument.querySelector("#combat");
  // rows whose initiatives carry decimals also show the plain rule score
  const m = decorateTracker(root, ${JSON.stringify(STATES)}, t, { p8HkD2sLq7Vt4XmN: 17, Wz3Lr9QyT6bJ1cVe: 13 });
  const boxes = [...root.querySelectorAll(".initiative-sidecar-badges")];
  document.body.dataset.popout = JSON.stringify({ badges: m, own: boxes.every((b) => b.ownerDocument === frame.contentDocument && b.ownerDocument !== document),
    scores: [...root.querySelectorAll('[data-badge="rule-score"]')].map((b) => b.textContent) });
});
document.body.append(frame);
</script></body></html>`;
}

test("the tracker shows each combatant's badges in headless Chromium", async () => {
  const server = await serve(page);
  const url = `http://127.0.0.1:${server.address().port}/`;
  try {
    const dom = await chromium(["--dump-dom", url]);
    assert.match(dom, /data-badges="9"/, "nine badges added");
    const row = (id) => dom.split(`data-combatant-id="${id}"`)[1].split("</li>")[0];
    assert.match(row("p8HkD2sLq7Vt4XmN"), /isc-badge isc-reaction"[^>]*data-badge="reaction"/);
    assert.match(row("p8HkD2sLq7Vt4XmN"), /data-badge="ready"/);
    assert.match(row("Wz3Lr9QyT6bJ1cVe"), /data-badge="no-reaction" data-tooltip-text="No reaction: dashed"/);
    assert.match(row("Wz3Lr9QyT6bJ1cVe"), />Move or act</);
    assert.match(row("e5NbG7uK2pXa9RsD"), />Held</);
    assert.match(row("Rf6Nc2XwQ8kT3mHa"), />Hesitates 2</);
    assert.match(row("Jq4Tm8vC1zYh6LwF"), />Reroll\?</);
    const popout = JSON.parse(dom.match(/data-popout="([^"]*)"/)[1].replace(/&quot;/g, '"'));
    assert.deepEqual(popout, { badges: 11, own: true, scores: ["17", "13"] }, "a popped-out tracker gets its badges from its own document, rule scores shown plainly");
    mkdirSync(ARTIFACTS, { recursive: true });
    const shot = path.join(ARTIFACTS, "tracker-badges.png");
    await chromium([`--screenshot=${shot}`, "--window-size=320,330", url]);
    assert.ok(statSync(shot).size > 1000, "a screenshot was taken");
  } finally {
    server.close();
  }
});
