// pf2e's encounter roll in miniature: `EncounterPF2e.rollInitiative` and `setInitiative`
// [GitHub foundryvtt/pf2e `src/module/encounter/document.ts`]. A combatant whose actor has an
// initiative statistic rolls it (the actor's own check — a formula passed in is NOT used),
// and all of them are written by `setMultipleInitiatives`: ONE `updateEmbeddedDocuments`
// with `initiative` and `flags.pf2e.{initiativeStatistic, overridePriority: {[value]: …}}`,
// then `combat.update({turn: <index of the combatant current before>})`; the others go to
// core's `rollInitiative`. pf2e's check chat card is not modelled.

/** @param {typeof import("./documents.js").Combat} Base @param {object} client */
export function pf2eEncounter(Base, client) {
  return class EncounterPF2e extends Base {
    async rollInitiative(ids, options = {}) {
      ids = typeof ids === "string" ? [ids] : ids;
      const fighty = ids.map((id) => this.combatants.get(id)).filter((c) => c?.actor?.system?.attributes?.initiative);
      const initiatives = [];
      for (const c of fighty) {
        const init = c.actor.system.attributes.initiative;
        const roll = new client.Roll(`1d20 + ${init.mod ?? 0}`, c.actor.getRollData());
        await roll.evaluate();
        initiatives.push({ id: c.id, value: roll.total, statistic: init.statistic ?? "perception" });
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
