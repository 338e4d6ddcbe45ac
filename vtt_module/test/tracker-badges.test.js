// Tracker badges in a real browser: the saved v13-shaped tracker fixture, decorated by the
// module's tracker.js with its CSS, rendered by headless Chromium (Debian's `chromium`).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createServer } from "node:http";
import { readFileSync, mkdirSync, mkdtempSync, existsSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
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
</script></body></html>`;
}

function serve() {
  return new Promise((resolve) => {
    const server = createServer((req, res) => {
      const url = new URL(req.url, "http://x");
      if (url.pathname === "/") { res.setHeader("content-type", "text/html"); return res.end(page()); }
      const file = path.join(ROOT, path.normalize(url.pathname).replace(/^\/+/, ""));
      if (!file.startsWith(ROOT) || !existsSync(file)) { res.statusCode = 404; return res.end(); }
      res.setHeader("content-type", file.endsWith(".js") ? "text/javascript" : file.endsWith(".css") ? "text/css" : "application/json");
      res.end(readFileSync(file));
    });
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}

function chromium(args) {
  return new Promise((resolve, reject) => {
    const profile = mkdtempSync(path.join(tmpdir(), "isc-chromium-"));
    execFile("chromium", ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", `--user-data-dir=${profile}`, "--virtual-time-budget=3000", ...args],
      { timeout: 60000, maxBuffer: 10 * 1024 * 1024 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)));
  });
}

test("the tracker shows each combatant's badges in headless Chromium", async () => {
  const server = await serve();
  const url = `http://127.0.0.1:${server.address().port}/`;
  try {
    const dom = await chromium(["--dump-dom", url]);
    assert.match(dom, /data-badges="9"/, "nine badges added");
    const row = (id) => dom.split(`data-combatant-id="${id}"`)[1].split("</li>")[0];
    assert.match(row("p8HkD2sLq7Vt4XmN"), /isc-badge isc-reaction"[^>]*data-badge="reaction"/);
    assert.match(row("p8HkD2sLq7Vt4XmN"), /data-badge="ready"/);
    assert.match(row("Wz3Lr9QyT6bJ1cVe"), /data-badge="no-reaction" data-tooltip="No reaction: dashed"/);
    assert.match(row("Wz3Lr9QyT6bJ1cVe"), />Move or act</);
    assert.match(row("e5NbG7uK2pXa9RsD"), />Held</);
    assert.match(row("Rf6Nc2XwQ8kT3mHa"), />Hesitates 2</);
    assert.match(row("Jq4Tm8vC1zYh6LwF"), />Reroll\?</);
    mkdirSync(ARTIFACTS, { recursive: true });
    const shot = path.join(ARTIFACTS, "tracker-badges.png");
    await chromium([`--screenshot=${shot}`, "--window-size=320,330", url]);
    assert.ok(statSync(shot).size > 1000, "a screenshot was taken");
  } finally {
    server.close();
  }
});
