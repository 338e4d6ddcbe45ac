// The module's writes over the corpus of real Combat documents (tests/fixtures/real-combats,
// each with its provenance): every document is met first by the real sidecar (an updateCombat
// carrying it, as when a GM enables the module mid-fight), and the plan is turned into the
// module's update against the same document. Under foundry-core: zero writes. Under every other
// ruleset: only the sidecar's own flags, nothing of Foundry's (no initiative, round, turn,
// defeated or hidden: never null over a number, never a value rewritten).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { io } from "socket.io-client";
import { planUpdate } from "../scripts/plan.js";
import { SidecarProcess } from "./helpers/sidecar.js";

const DIR = new URL("../../tests/fixtures/real-combats/", import.meta.url);
const CORPUS = readdirSync(DIR).filter((f) => f.endsWith(".json")).sort()
  .map((f) => ({ name: f, ...JSON.parse(readFileSync(new URL(f, DIR), "utf8")) }));
const RULESETS = ["foundry-core", "balanced-d20", "dice-pool", "storyteller"];
const GM = "gmCorpus00000001";
const SKIPPED = ["defend_only", "held", "none"]; // as the sidecar's welcome lists them

let sidecar;
before(async () => { sidecar = await new SidecarProcess().start(); });
after(async () => { await sidecar?.stop(); });

/** Meet every document first, each in its own world, under a ruleset; the plan of each. */
async function plansUnder(ruleset) {
  const plans = new Map();
  for (const [i, fx] of CORPUS.entries()) {
    const auth = { token: sidecar.token, world: `corpus${ruleset.replace(/-/g, "")}${i}`, ruleset, settings: {}, gm_users: [GM], protocol: 1 };
    const socket = io(sidecar.url, { transports: ["websocket"], auth, forceNew: true, reconnection: false });
    await new Promise((resolve, reject) => { socket.once("welcome", resolve); socket.once("connect_error", reject); });
    const doc = fx.combat;
    const current = { round: doc.round ?? null, turn: null, combatantId: fx.foundry_current.combatantId, tokenId: null };
    const ack = await socket.timeout(10000).emitWithAck("hook", { seq: 1, user: GM, world_time: 0, hook: "updateCombat", combat: doc, current });
    socket.disconnect();
    assert.ok(ack.ok, `${fx.name}: ${JSON.stringify(ack.error)}`);
    if (ack.plans?.length) plans.set(fx.name, ack.plans[0]);
  }
  return plans;
}

test(`under foundry-core, each of the ${CORPUS.length} real combats met first leads to zero writes`, { timeout: 60000 }, async () => {
  assert.ok(CORPUS.length >= 25);
  const plans = await plansUnder("foundry-core");
  const written = [];
  for (const fx of CORPUS) {
    const plan = plans.get(fx.name);
    if (!plan) continue; // no plan: nothing to write
    const { data } = planUpdate(structuredClone(fx.combat), plan, { skipped: SKIPPED });
    if (data) written.push(`${fx.name}: ${JSON.stringify(data).slice(0, 300)}`);
  }
  assert.deepEqual(written, []);
});

/** What an update writes beyond the sidecar's own flags (`flags.initiative-sidecar.*`). */
function foundrysFieldsWritten(fx, data) {
  const sidecars = (key) => key.startsWith("flags.initiative-sidecar.");
  const written = Object.keys(data).filter((k) => k !== "combatants" && !sidecars(k))
    .map((k) => `${fx.name}: ${k} ${JSON.stringify(fx.combat[k])} → ${JSON.stringify(data[k])}`);
  for (const row of data.combatants ?? []) {
    const before = fx.combat.combatants.find((c) => c._id === row._id);
    assert.ok(before, `${fx.name}: a row for an unknown combatant ${row._id}`);
    for (const key of Object.keys(row).filter((k) => k !== "_id" && !sidecars(k))) {
      written.push(`${fx.name}: ${row._id}.${key} ${JSON.stringify(before[key])} → ${JSON.stringify(row[key])}`);
    }
  }
  return written;
}

for (const ruleset of RULESETS.slice(1)) {
  // the rules' state travels in the sidecar's flags; Foundry's own fields (initiative, round,
  // turn, defeated, hidden) stay as the document has them: no null over a number, no value rewritten
  test(`under ${ruleset}, a real combat met first gets the sidecar's flags and nothing of Foundry's written`, { timeout: 60000 }, async () => {
    const plans = await plansUnder(ruleset);
    const written = [];
    let updates = 0;
    for (const fx of CORPUS) {
      const plan = plans.get(fx.name);
      if (!plan) continue;
      const { data } = planUpdate(structuredClone(fx.combat), plan, { skipped: SKIPPED });
      if (!data) continue;
      updates += 1;
      written.push(...foundrysFieldsWritten(fx, data));
    }
    assert.ok(updates > 0, "no update at all: the check would say nothing");
    assert.deepEqual(written, []);
  });
}
