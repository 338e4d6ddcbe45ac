// The double itself: pf2e's initiative check card and the chat pre-create hook
// (fake-foundry/README.md lists the sources).
import { test } from "node:test";
import assert from "node:assert/strict";
import { makeTable, addCombat, eachGeneration, assertNoDeprecations } from "./fake-foundry/index.js";

const ARIA = "tokAria000000001", GOB = "tokGobA000000001";
const byToken = (combat, tokenId) => combat.combatants.find((c) => c.tokenId === tokenId);

eachGeneration(test, "pf2e's initiative roll posts its check card before it writes the initiatives; a hidden combatant's card is private", async (generation) => {
  const t = makeTable({ generation, system: "pf2e" });
  const combat = await addCombat(t);
  await byToken(combat, GOB).update({ hidden: true });
  const events = [];
  t.gm.Hooks.on("preCreateChatMessage", (m) => { events.push(["card", m.speaker.token, structuredClone(m.flags), m.rolls[0], m.whisper ?? []]); });
  t.gm.Hooks.on("updateCombatant", (c, changed) => { if ("initiative" in changed) events.push(["write", c.tokenId, changed.initiative]); });
  t.world.dice.script(11, 6);
  await combat.rollInitiative([byToken(combat, ARIA).id, byToken(combat, GOB).id]);
  assert.deepEqual(events.map((e) => e.slice(0, 2)), [["card", ARIA], ["card", GOB], ["write", ARIA], ["write", GOB]], "both cards, then one write of both");
  const [aria, gob] = events;
  assert.equal(aria[2].core.initiativeRoll, true);
  assert.equal(aria[2].pf2e.context.type, "initiative");
  assert.equal(aria[2].pf2e.context.isReroll, false);
  assert.equal(aria[3].class, "CheckRoll");
  assert.equal(aria[3].formula, "1d20", "no modifier: no '+0'");
  assert.equal(aria[3].total, 11);
  assert.deepEqual(aria[3].options.domains, ["all", "initiative", "perception"]);
  assert.deepEqual(aria[4], [], "public");
  assert.deepEqual(gob[4], t.world.gmIds(), "the hidden goblin's card goes to the GMs");
  assert.equal(events[2][2], 11);
  assertNoDeprecations(t.world);
});

eachGeneration(test, "pf2e writes a modifier as '+<n>', a penalty as '+-<n>'", async (generation) => {
  const t = makeTable({ generation, system: "pf2e" });
  const combat = await addCombat(t);
  const aria = byToken(combat, ARIA);
  t.world.actors.get(aria.actorId).system.attributes.initiative.mod = -2;
  const cards = [];
  t.gm.Hooks.on("preCreateChatMessage", (m) => { cards.push(m.rolls[0]); });
  t.world.dice.script(10);
  await combat.rollInitiative([aria.id]);
  assert.deepEqual([cards[0].formula, cards[0].total, aria.initiative], ["1d20+-2", 8, 8]);
});

eachGeneration(test, "preCreateChatMessage fires on the creating client only, before the message; false cancels it", async (generation) => {
  const t = makeTable({ generation });
  const seen = [];
  for (const [name, client] of Object.entries({ gm: t.gm, alice: t.alice, bob: t.bob })) {
    client.Hooks.on("preCreateChatMessage", (m, data, _o, userId) => { seen.push([name, "pre", m.author, data.content, userId]); });
    client.Hooks.on("createChatMessage", () => { seen.push([name, "create"]); });
  }
  await t.alice.ChatMessage.create({ content: "hello" });
  assert.deepEqual(seen[0], ["alice", "pre", t.alice.userId, "hello", t.alice.userId]);
  assert.equal(seen.filter((s) => s[1] === "pre").length, 1, "only on Alice's client");
  assert.equal(seen.filter((s) => s[1] === "create").length, 3, "then on every client");
  const before = t.world.chat.length;
  t.bob.Hooks.on("preCreateChatMessage", () => false);
  assert.equal(await t.bob.ChatMessage.create({ content: "no" }), undefined);
  assert.equal(t.world.chat.length, before, "cancelled: nothing created");
});
