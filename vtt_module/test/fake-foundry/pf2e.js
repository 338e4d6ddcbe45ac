// pf2e's encounter roll in miniature: `EncounterPF2e.rollInitiative` and `setInitiative`
// [GitHub foundryvtt/pf2e `src/module/encounter/document.ts`, the same in the pf2e 7.x line
// (Foundry 13: `rollMode`) and the 8.x line (Foundry 14: `messageMode`)]. A combatant whose
// actor has an initiative statistic rolls it (the actor's own check — a formula passed in is
// NOT used, and `getInitiativeRoll` is never called): `ActorInitiative#roll` with
// `updateTracker: false` [`src/module/actor/initiative.ts`], whose check is of type
// "initiative", so `CheckPF2e.roll` posts its chat card flagged `core.initiativeRoll: true` and
// `pf2e.context.type: "initiative"`, speaker the actor and token, a hidden combatant's card
// private, and awaits it [`src/module/system/check/check.ts`]. Only then are all of them
// written by `setMultipleInitiatives`: ONE `updateEmbeddedDocuments` with `initiative` and
// `flags.pf2e.{initiativeStatistic, overridePriority: {[value]: …}}`, then
// `combat.update({turn: <index of the combatant current before>})`; the others go to core's
// `rollInitiative`. The roll is a `CheckRoll` ("1d20+<modifier>", options `rollerId`,
// `totalModifier`, `domains`) [check.ts, `src/module/system/check/roll.ts`]. Not modelled:
// the check dialog, fortune/misfortune, a hero-point reroll.

/** @param {typeof import("./documents.js").Combat} Base @param {object} client */
export function pf2eEncounter(Base, client) {
  return class EncounterPF2e extends Base {
    async rollInitiative(ids, options = {}) {
      ids = typeof ids === "string" ? [ids] : ids;
      const fighty = ids.map((id) => this.combatants.get(id)).filter((c) => c?.actor?.system?.attributes?.initiative);
      const initiatives = [];
      for (const c of fighty) {
        const init = c.actor.system.attributes.initiative;
        const statistic = init.statistic ?? "perception";
        const roll = await checkRoll(client, init.mod ?? 0, statistic).evaluate();
        await roll.toMessage(initiativeCard(c, statistic), c.hidden ? privateMode(client) : {});
        initiatives.push({ id: c.id, value: roll.total, statistic });
      }
      await this.setMultipleInitiatives(initiatives);
      const rest = ids.filter((id) => !fighty.some((c) => c.id === id));
      return rest.length ? super.rollInitiative(rest, options) : this;
    }

    async setMultipleInitiatives(initiatives) {
      if (!initiatives.length) return;
      const currentId = this.combatant?.id;
      const updates = initiatives.map((i) => ({ _id: i.id, initiative: i.value, flags: { pf2e: { initiativeStatistic: i.statistic ?? null, overridePriority: { [i.value]: i.overridePriority } } } }));
      await this.updateEmbeddedDocuments("Combatant", updates);
      const turn = this.turns.findIndex((c) => c.id === currentId);
      if (turn >= 0) await this.update({ turn }); // pf2e writes -1 before the start; the double skips that
    }

    async setInitiative(id, value) {
      const c = this.combatants.get(id);
      if (c?.actor?.system?.attributes?.initiative) return this.setMultipleInitiatives([{ id, value, statistic: c.actor.system.attributes.initiative.statistic || "perception" }]);
      return super.setInitiative(id, value);
    }
  };
}

/** pf2e's `CheckRoll` of a check with this total modifier [check.ts, check/roll.ts]. */
function checkRoll(client, modifier, statistic) {
  const roll = new client.Roll(`1d20${modifier === 0 ? "" : `+${modifier}`}`); // pf2e writes "+-2" for a penalty
  roll.options = { rollerId: client.userId, isReroll: false, totalModifier: modifier, domains: ["all", "initiative", statistic] };
  const toJSON = roll.toJSON.bind(roll);
  roll.toJSON = () => ({ ...toJSON(), class: "CheckRoll" });
  return roll;
}

/** The initiative check's chat card data [check.ts `CheckPF2e.roll`]. */
function initiativeCard(combatant, statistic) {
  return {
    speaker: { actor: combatant.actorId, token: combatant.tokenId, alias: combatant.name },
    flavor: `<h4 class="action">${statistic}</h4>`,
    flags: {
      core: { canPopout: true, initiativeRoll: true },
      pf2e: { context: { type: "initiative", actor: combatant.actorId, token: combatant.tokenId, domains: ["all", "initiative", statistic], isReroll: false } }
    }
  };
}

/** A hidden combatant's roll is private [`initiative.ts`: `CONST.DICE_ROLL_MODES.PRIVATE`; v14 `messageMode`]. */
function privateMode(client) {
  return client.world.generation >= 14 ? { messageMode: "gm" } : { rollMode: "gmroll" };
}
