// The pure helpers: payloads, outbox and seq, reading a plan, steering, badges, prompts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { currentOfCombat } from "../scripts/foundry-data.js";
import { combatSnapshot, whitelistOptions, hookPayload, intentPayload, connectAuth, readStats } from "../scripts/payloads.js";
import { Outbox } from "../scripts/outbox.js";
import { foundrySort, planUpdate, isStale } from "../scripts/plan.js";
import { deletion } from "../scripts/compat.js";
import { landing } from "../scripts/turns.js";
import { badgesFor } from "../scripts/badges.js";
import { promptAnswer, promptDialog, promptRecipients } from "../scripts/prompts.js";
import { availableActions, actionIntent } from "../scripts/actions.js";
import { classifyCombatantChange } from "../scripts/forwarder.js";
import { noticeMessage } from "../scripts/announce.js";
import { assertValid, invalid } from "./helpers/schemas.js";

const SAMPLES = JSON.parse(readFileSync(new URL("../../tests/fixtures/foundry-sample-payloads.json", import.meta.url), "utf8"));
const t = (k, d) => `${k}${d ? JSON.stringify(d) : ""}`;

test("a hook payload built from Foundry's real v13 shapes fits the hook schema", () => {
  const source = SAMPLES.combat_toObject_started.value;
  const names = SAMPLES.combat_toObject_started.derived_not_in_toObject.names;
  const extras = Object.fromEntries(source.combatants.map((c) => [c._id, { name: names[c._id], owners: [], is_npc: true, is_defeated: c.defeated, stats: { dex: 2 } }]));
  const combat = combatSnapshot(source, extras);
  const current = currentOfCombat({ current: SAMPLES.combat_toObject_started.derived_not_in_toObject.current });
  assert.deepEqual(current, SAMPLES.combat_toObject_started.derived_not_in_toObject.current);
  const options = SAMPLES.turn_change_hooks.updateCombat.args[2];
  const data = { seq: 1, ...hookPayload({ user: "zQ8mN2vB7xL4pR1s", world_time: 12, hook: "updateCombat", combat, current, changed: SAMPLES.turn_change_hooks.updateCombat.args[1], options: { ...options, parent: { live: "document" } } }) };
  assertValid("hook", data);
  assert.equal(data.options.parent, undefined, "options are whitelisted");
  assert.deepEqual(Object.keys(data.options).sort(), ["action", "diff", "direction", "modifiedTime", "recursive", "worldTime"]);
  const roll = { seq: 2, ...hookPayload({ user: "u1", world_time: 0, hook: "initiativeRoll", combat, current, roll: { combatant_id: "p8HkD2sLq7Vt4XmN", roll: SAMPLES.roll_initiative_1d20_plus_3.value } }) };
  assertValid("hook", roll);
});

test("current is Foundry's combat.current, an unset field null", () => {
  assert.deepEqual(currentOfCombat({ current: { round: 0, turn: null, combatantId: null } }), { round: 0, turn: null, combatantId: null, tokenId: null });
  assert.deepEqual(currentOfCombat({}), { round: null, turn: null, combatantId: null, tokenId: null });
});

test("whitelisted options drop live documents and functions", () => {
  assert.deepEqual(whitelistOptions({ parent: {}, direction: 1, render: true, fn() {}, combatTurn: 3, turnEvents: false }), { direction: 1, combatTurn: 3, turnEvents: false });
});

test("intents and the connect auth fit their schemas", () => {
  const auth = connectAuth({ token: "s3cret", world: "w", ruleset: "balanced-d20", settings: { auto_approve_rerolls: false }, gm_users: ["g"], module_version: "0.1.0", foundry_version: "13.350", system: "dnd5e" });
  assertValid("auth", auth);
  const kinds = [
    ["initiative.set", { value: 12 }], ["reaction.use", {}], ["dash", { amount: 5 }], ["hold", {}], ["hold", { next_round: true }],
    ["hold", { target_aware: true }], ["act", { after: "x" }], ["act", { before: "x" }], ["act", { now: true }],
    ["reroll.decide", { prompt_id: "p", accept: true }], ["reroll.approve", { prompt_id: "p", approve: false }],
    ["readied.declare", { mode: "preemptive", trigger: "t", action: "a", target_id: "x" }], ["readied.trigger", { readied_id: "r" }],
    ["opposed.result", { prompt_id: "p", actor_total: 14, target_total: 12 }]
  ];
  for (const [kind, args] of kinds) assertValid("intent", { seq: 1, ...intentPayload({ user: "u", world_time: 0, kind, combat_id: "c", combatant_id: "x", args }) });
  for (const [kind, args] of [["ready.start", { actor_id: "a", token_id: "t", owners: ["u"], watching: ["t2"], sees: true, weapon_ready: true }], ["ready.break", { actor_id: "a", reason: "moved" }], ["ready.confirm", { actor_id: "a" }]]) {
    assertValid("intent", { seq: 1, ...intentPayload({ user: "u", world_time: 0, kind, args }) });
  }
  assert.ok(invalid("intent", { seq: 1, ...intentPayload({ user: "u", world_time: 0, kind: "dash", combat_id: "c", combatant_id: "x", args: {} }) }));
});

test("every action builds a valid intent", () => {
  const extra = { amount: 3, anchor: "b", readied_id: "r1", mode: "standard", trigger: "if", action: "hit" };
  for (const action of ["dash", "hold", "hold.next_round", "hold.target_aware", "act.now", "act.after", "act.before", "reaction.use", "readied.declare", "readied.trigger"]) {
    assertValid("intent", { seq: 1, user: "u", world_time: 0, ...actionIntent(action, "c", "x", extra) });
  }
  // the actions come from the sidecar's plan entry (kept in the flag state), GM-only ones for GMs
  assert.deepEqual(availableActions(undefined, { isGM: false }), []);
  const held = { acts: "held", actions: ["act.now", "act.after", "act.before"], gm_actions: ["hold.target_aware"] };
  assert.deepEqual(availableActions(held, { isGM: false }), ["act.now", "act.after", "act.before"]);
  assert.deepEqual(availableActions(held, { isGM: true }), ["act.now", "act.after", "act.before", "hold.target_aware"]);
});

test("stats are read by path; dnd5e proficiencies become skill names", () => {
  const actor = { system: { abilities: { dex: { mod: 3 } }, skills: { ins: { proficient: 1 }, slt: { proficient: 0 } }, attributes: { reaction: { value: 3 } } } };
  assert.deepEqual(readStats(actor, { dex: "system.abilities.dex.mod", proficient: "system.skills", reaction: "system.attributes.reaction.value", wits: "system.nope" }), { dex: 3, proficient: ["insight"], reaction: 3 });
});

test("the outbox numbers, keeps until acked, and resends after welcome what the sidecar lacks", () => {
  const waiting = [];
  const box = new Outbox({ onPending: (w) => waiting.push(w) });
  const a = box.enqueue("hook", { user: "u" });
  const b = box.enqueue("intent", { user: "u" });
  assert.deepEqual([a.data.seq, b.data.seq], [1, 2]);
  assert.equal(box.settle(1, { ok: true, seq: 1 }), "done");
  assert.equal(box.settle(2, { ok: false, error: { code: "out_of_order" } }), "resend");
  assert.equal(box.settle(2, { ok: false, error: { code: "store_unavailable" } }), "resend", "not stored: kept");
  assert.equal(box.settle(2, { ok: false, error: { code: "served_elsewhere" } }), "resend", "hosted: another process owns it");
  assert.deepEqual(box.welcome(1), { lostHistory: false });
  assert.equal(box.peek().data.seq, 2, "resent after last_seq");
  assert.equal(box.settle(2, { ok: false, error: { code: "rule_violation" } }), "done", "a refusal uses the seq up");
  assert.equal(box.enqueue("hook", {}).data.seq, 3);
  assert.deepEqual(waiting, [true, false, true], "the owner hears when messages start and stop waiting");
});

test("a sidecar that lost its history: the unacked messages go, numbering continues from last_seq + 1", () => {
  const box = new Outbox();
  for (let i = 0; i < 40; i++) box.enqueue("hook", {});
  for (let seq = 1; seq <= 38; seq++) box.settle(seq, { ok: true });
  assert.deepEqual(box.welcome(0), { lostHistory: true });
  assert.equal(box.size, 0);
  assert.equal(box.enqueue("hook", {}).data.seq, 1);
});

test("a page that just opened numbers on after the sidecar's last_seq, its early messages included", () => {
  const box = new Outbox();
  box.enqueue("hook", {});
  box.welcome(17);
  assert.equal(box.peek().data.seq, 18);
  assert.equal(box.enqueue("hook", {}).data.seq, 19);
});

test("Foundry's sort: initiative descending, ties by _id (code points), null last", () => {
  const sorted = foundrySort([{ _id: "b", initiative: 10 }, { _id: "a", initiative: null }, { _id: "C", initiative: 10 }, { _id: "d", initiative: 12.5 }]);
  assert.deepEqual(sorted.map((c) => c._id), ["d", "C", "b", "a"]);
});

const source = () => ({
  _id: "cmb", round: 1, turn: 0, flags: {},
  combatants: [
    { _id: "a", initiative: 18, flags: {} }, { _id: "b", initiative: 12, flags: {} }, { _id: "c", initiative: 8, flags: {} }
  ]
});
const plan = (revision, current, order, nextRound = null) => ({
  combat_id: "cmb", revision, round: 1, turn: 0, current, next_round: nextRound,
  order: order.map(([id, initiative, acts = "full", detail = {}]) => ({ combatant_id: id, initiative, acts, reaction: null, tags: [], detail, rules: [] }))
});

test("a plan becomes combatant rows, the combatant the pointer moves to, and the combat's flag", () => {
  const s = source();
  const { data } = planUpdate(s, plan(3, "c", [["c", 13], ["a", 18], ["b", 12]]));
  assert.deepEqual(data.combatants.find((c) => c._id === "c").initiative, 13);
  assert.equal(data.current, "c", "a rule made c current (its index is Foundry's, after the rows)");
  assert.equal(data["flags.initiative-sidecar.plan"].revision, 3);
  assert.ok(isStale({ revision: 3 }, 3));
  assert.ok(!isStale({ revision: 4 }, 3));
});

test("a plan that changes nothing writes nothing; vanished detail keys are deleted", () => {
  const s = source();
  const p = plan(1, "a", [["a", 18, "full", { turns_lost: 2 }], ["b", 12], ["c", 8]]);
  const first = planUpdate(s, p).data;
  s.flags = { "initiative-sidecar": { plan: first["flags.initiative-sidecar.plan"] } };
  for (const row of first.combatants) s.combatants.find((c) => c._id === row._id).flags = { "initiative-sidecar": { state: row["flags.initiative-sidecar.state"] } };
  assert.equal(planUpdate(s, { ...p, revision: 2 }).data, null);
  const v13 = { game: { release: { generation: 13 } } };
  const next = planUpdate(s, plan(3, "a", [["a", 18], ["b", 12], ["c", 8]]), { del: (path, key) => deletion(v13, path, key) }).data;
  assert.ok("flags.initiative-sidecar.state.detail.-=turns_lost" in next.combatants[0]);
});

/** A live-like combat for `landing`: turns in order, each with its flags and isDefeated. */
const live = (s) => ({ round: s.round, flags: s.flags, turns: s.combatants.map((c) => ({ id: c._id, flags: c.flags, isDefeated: Boolean(c.defeated) })) });

test("steering skips none, defend_only and held turns and flips the round onto next_round.current", () => {
  const s = source();
  const skipped = { skipped: ["defend_only", "held", "none"] }; // as the sidecar's welcome lists them
  const st = (acts) => ({ "initiative-sidecar": { state: { acts } } });
  s.combatants[1].flags = st("held");
  assert.equal(landing(live(s), { round: 1, turn: 1 }, skipped), null, "no plan flag on the combat: core's choice stands");
  s.flags = { "initiative-sidecar": { plan: { revision: 1, round: 1, current: "a", next_round: null } } };
  assert.deepEqual(landing(live(s), { round: 1, turn: 1 }, skipped), { round: 1, turn: 2 });
  assert.equal(landing(live(s), { round: 1, turn: 1 }), null, "nothing is skipped before the sidecar said what is");
  s.combatants[2].flags = st("none");
  s.flags["initiative-sidecar"].plan.next_round = { round: 2, current: "b", order: [{ combatant_id: "b", initiative: 12, acts: "full" }, { combatant_id: "a", initiative: 11, acts: "full" }, { combatant_id: "c", initiative: 8, acts: "none" }] };
  assert.deepEqual(landing(live(s), { round: 1, turn: 1 }, skipped), { round: 2, turn: 1 }, "b, second under today's initiatives");
  assert.deepEqual(landing(live(s), { round: 2, turn: 0 }, skipped), { round: 2, turn: 1 }, "Next Round: the same");
  assert.equal(landing(live(s), { round: 2, turn: null }, skipped), null, "no one's turn stays no one's turn");
});

test("before the start, Begin Combat lands on the first who acts", () => {
  const s = { ...source(), round: 0, turn: null };
  s.flags = { "initiative-sidecar": { plan: { revision: 1, round: 0, current: null, next_round: null } } };
  s.combatants[0].flags = { "initiative-sidecar": { state: { acts: "held" } } };
  assert.deepEqual(landing(live(s), { round: 1, turn: 0 }, { skipped: ["held"] }), { round: 1, turn: 1 });
});

test("badges show reaction, dash, action limits, hold, hesitation and reroll", () => {
  const keys = (state) => badgesFor(state, t).map((b) => b.key);
  assert.deepEqual(keys({ acts: "full", reaction: { available: true, reason: null }, tags: [] }), ["reaction"]);
  assert.deepEqual(keys({ acts: "movement_or_action", reaction: { available: false, reason: "dashed" }, tags: ["dashed"], detail: { dash: 5 } }), ["no-reaction", "dashed", "movement-or-action"]);
  assert.deepEqual(keys({ acts: "none", tags: ["hesitating"], detail: { turns_lost: 2 } }), ["hesitating"]);
  assert.deepEqual(keys({ acts: "held", tags: ["reroll_pending", "readied"] }), ["held", "reroll-pending", "readied"]);
  assert.match(badgesFor({ acts: "full", reaction: { available: false, reason: "before_first_turn" } }, t)[0].tooltip, /before_first_turn/);
  // a dashed turn waiting behind the turn in progress: its rule score shown beside the number
  const waiting = badgesFor({ acts: "movement_or_action", tags: ["dashed"], detail: { dash: 5, score: 13 } }, t);
  assert.deepEqual(waiting.map((b) => b.key), ["dashed", "score", "movement-or-action"]);
  assert.match(waiting[1].text, /13/);
});

test("prompts: who sees them, their dialog, and the intent each answer sends", () => {
  assert.deepEqual(promptRecipients({ to: "gm" }, ["g", "p"], "g"), ["g"]);
  assert.deepEqual(promptRecipients({ to: ["p", "q"] }, ["g", "p"], "g"), ["p"]);
  assert.deepEqual(promptRecipients({ to: ["q"] }, ["g", "p"], "g"), ["g"], "the GM answers for an absent player");
  const offer = { prompt_id: "pr1", kind: "reroll", combat_id: "c", combatant_id: "x", to: ["p"], rule: "BI-2", data: { natural: 3 } };
  assert.equal(promptDialog(offer, t, "<b>Aria</b>").type, "confirm");
  assert.ok(!promptDialog(offer, t, "<b>Aria</b>").content.includes("<b>"), "names are escaped");
  assert.deepEqual(promptAnswer(offer, true), { combat_id: "c", kind: "reroll.decide", args: { prompt_id: "pr1", accept: true } });
  assert.equal(promptAnswer(offer, null), null);
  assert.deepEqual(promptAnswer({ ...offer, kind: "reroll.approval" }, false).args, { prompt_id: "pr1", approve: false });
  assert.deepEqual(promptAnswer({ ...offer, kind: "opposed_check" }, { actor_total: "14", target_total: "12" }).args, { prompt_id: "pr1", actor_total: 14, target_total: 12 });
});

test("an initiative change with a new roll mark is a roll; without it, the GM's manual edit", () => {
  const roll = SAMPLES.roll_initiative_1d20_plus_3.value;
  const mark = { json: JSON.stringify(roll), reroll_of: null, nonce: "n1", total: 17 };
  assert.equal(classifyCombatantChange({ initiative: 17, flags: { "initiative-sidecar": { roll: mark } } }, mark, 17).kind, "roll");
  assert.deepEqual(classifyCombatantChange({ initiative: 15 }, mark, 15), { kind: "set", value: 15 }, "the old mark's nonce is not in the diff");
  assert.equal(classifyCombatantChange({ hidden: true }).kind, "hook");
  assert.equal(classifyCombatantChange({ flags: { x: 1 } }).kind, "none");
});

test("rulings about hidden combatants are whispered to the GMs only", () => {
  const look = { hidden: (id) => id === "boss", gms: ["g"], owners: () => ["p"] };
  assert.deepEqual(noticeMessage({ kind: "dash", text: "Boss dashes", combatant_id: "boss" }, look).whisper, ["g"]);
  assert.deepEqual(noticeMessage({ kind: "dash", text: "Aria dashes", combatant_id: "aria" }, look).whisper, []);
  assert.deepEqual(noticeMessage({ kind: "ready_to_strike", text: "ready", actor_id: "a" }, look).whisper, ["g", "p"]);
  assert.equal(noticeMessage({ kind: "dice_pool.recount", text: "x" }, look), null);
});

test("the module speaks English and Russian: both language files have the same keys", () => {
  const keys = (o, p = "") => Object.entries(o).flatMap(([k, v]) => (v && typeof v === "object" ? keys(v, `${p}${k}.`) : [`${p}${k}`]));
  const en = keys(JSON.parse(readFileSync(new URL("../lang/en.json", import.meta.url), "utf8"))).sort();
  const ru = keys(JSON.parse(readFileSync(new URL("../lang/ru.json", import.meta.url), "utf8"))).sort();
  assert.deepEqual(ru, en);
  const manifest = JSON.parse(readFileSync(new URL("../module.json", import.meta.url), "utf8"));
  assert.deepEqual(manifest.languages.map((l) => l.lang), ["en", "ru"]);
  assert.deepEqual(manifest.compatibility, { minimum: "13", verified: "14.369", maximum: "14" });
});
