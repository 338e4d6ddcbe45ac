// The combat tracker of one fake client (`ui.combat`): an ApplicationV2-shaped sidebar tab
// that renders the viewed combat into a DOM (linkedom), builds its context menu ONCE at its
// first render, and fires the render hooks. v14 can pop the tab out into its own window,
// i.e. another `ownerDocument`.

import { parseHTML } from "linkedom";
import { escapeHTML } from "./utils.js";

/** A browser window of its own (document + window). */
export function newWindow() {
  return parseHTML("<!doctype html><html><head></head><body></body></html>");
}

/**
 * The context menu of the tracker's combatant rows. Entry shapes differ by generation
 * [research §10; foundry-vtt-types 14.366 `src/foundry/client/applications/ux/context-menu.d.mts`
 * ContextMenu.Entry]:
 * - v13: `{name, icon, condition(li), callback(li)}` (li: the row HTMLElement; the v13
 *   CombatTracker builds its menu with `jQuery: false`, research §1.4/§9).
 * - v14: `{label, icon, visible(li), onClick(event, target)}`; `name`/`condition`/`callback`
 *   still work but are deprecated since 14 until 16 (recorded when the menu is built).
 * A v13 menu reads only the v13 keys: a v14-shaped entry has no name and no callback there.
 */
export class ContextMenu {
  constructor(client, items) {
    this.client = client;
    this.items = items;
    this.v14 = client.world.generation >= 14;
    if (this.v14) {
      for (const [key, replacement] of [["name", "label"], ["callback", "onClick"], ["condition", "visible"]]) {
        if (items.some((i) => key in i)) client.deprecate(`ContextMenuEntry#${key} is deprecated. Use ContextMenuEntry#${replacement} instead.`, { since: 14, until: 16 });
      }
    }
  }
  label(item) { return this.v14 ? (item.label ?? item.name) : item.name; }
  shown(item, target) {
    const test = this.v14 ? (item.visible ?? item.condition) : item.condition;
    if (test === undefined) return true;
    if (test === null) return false;
    return typeof test === "function" ? Boolean(test(target)) : Boolean(test);
  }
  /** The entries shown for a row (what a right click opens): `[{label, icon, item}]`. */
  entriesFor(target) {
    return this.items.filter((i) => this.shown(i, target)).map((i) => ({ label: this.label(i), icon: i.icon, item: i }));
  }
  /** Click the shown entry with this label (localized or key) on a row. */
  click(label, target) {
    const entry = this.entriesFor(target).find((e) => e.label === label || this.client.game.i18n.localize(e.label ?? "") === label);
    if (!entry) throw new Error(`no context menu entry "${label}" for this row`);
    const event = { type: "click", currentTarget: target, target };
    if (this.v14) {
      if (entry.item.onClick) return entry.item.onClick(event, target);
      return entry.item.callback(target, event);
    }
    return entry.item.callback(target); // TypeError if the entry has no callback, as in Foundry
  }
}

/** `foundry.applications.sidebar.tabs.CombatTracker` in miniature. */
export class CombatTracker {
  constructor(client, { popOut = false } = {}) {
    this.client = client;
    this.popOut = popOut;
    this.rendered = false;
    this.renders = 0;
    this.element = null;
    this.contextMenu = null;
    this.menuBuilds = 0;
    this.document = client.document;
    this.popouts = [];
  }
  get id() { return "combat"; }
  /** The combat shown: the active one [D13 CombatTracker#viewed]. */
  get viewed() { return this.client.game.combat; }

  /**
   * Core's row entries, in the generation's shape (placeholders for what core offers:
   * update, clear, reroll, remove — GM only) [F13 combat-tracker.mjs `_getEntryContextOptions`].
   */
  _getEntryContextOptions() {
    const gm = () => this.client.game.user.isGM;
    const combatant = (li) => this.viewed?.combatants.get(li.dataset.combatantId);
    const entry = (key, icon, fn) => (this.client.world.generation >= 14
      ? { label: `COMBAT.${key}`, icon: `<i class="${icon}"></i>`, visible: gm, onClick: (_e, li) => fn(combatant(li)) }
      : { name: `COMBAT.${key}`, icon: `<i class="${icon}"></i>`, condition: gm, callback: (li) => fn(combatant(li)) });
    return [
      entry("CombatantClear", "fa-solid fa-arrow-rotate-left", (c) => c?.update({ initiative: null })),
      entry("CombatantReroll", "fa-solid fa-dice-d20", (c) => c && this.viewed.rollInitiative([c.id])),
      entry("CombatantRemove", "fa-solid fa-trash", (c) => c?.delete())
    ];
  }

  /**
   * `_onFirstRender`: create the row context menu and call
   * `getCombatTrackerContextOptions(app, menuItems)` — once per app [research §1.4, §9].
   */
  _createContextMenu() {
    const items = this._getEntryContextOptions();
    this.client.Hooks.call("getCombatTrackerContextOptions", this, items);
    this.contextMenu = new ContextMenu(this.client, items);
    this.menuBuilds += 1;
  }

  /**
   * The render context: `turns[]` of the combatants VISIBLE to this user, with `initiative`
   * formatted; when any initiative has decimals every row shows two decimals (`hasDecimals`)
   * [research §1.4, §9 "Decimals change the tracker"].
   */
  _prepareContext() {
    const combat = this.viewed;
    const turns = combat ? combat.turns.filter((c) => c.visible) : [];
    const hasDecimals = turns.some((c) => Number.isFinite(c.initiative) && !Number.isInteger(c.initiative));
    const decimals = this.client.CONFIG.Combat.initiative.decimals ?? 2;
    return {
      combat, round: combat?.round ?? 0, hasDecimals,
      turns: turns.map((c) => ({
        id: c.id, name: c.name, img: c.img, hidden: c.hidden, isDefeated: c.isDefeated, isOwner: c.isOwner,
        active: combat.combatant?.id === c.id, canPing: false, effects: [], resource: null, hasDecimals,
        initiative: Number.isFinite(c.initiative) ? (hasDecimals ? c.initiative.toFixed(decimals) : String(c.initiative)) : null,
        css: [combat.combatant?.id === c.id ? "active" : "", c.hidden ? "hide" : "", c.isDefeated ? "defeated" : ""].filter(Boolean).join(" ")
      }))
    };
  }

  /**
   * The HTML (names escaped as Handlebars does). Rows are `li.combatant[data-combatant-id]`
   * with `.token-name` and `.token-initiative`; the GM gets an inline initiative input, which
   * becomes plain text when any initiative has decimals [research §9].
   */
  _renderHTML(context) {
    const gm = this.client.game.user.isGM;
    const rows = context.turns.map((t) => {
      const init = t.initiative === null ? `<span class="initiative none">–</span>`
        : (gm && !context.hasDecimals ? `<input type="text" class="initiative-input" inputmode="numeric" value="${escapeHTML(t.initiative)}">` : `<span class="initiative">${escapeHTML(t.initiative)}</span>`);
      return `<li class="combatant ${t.css}" data-combatant-id="${escapeHTML(t.id)}"><img class="token-image" alt="" src="${escapeHTML(t.img ?? "")}"><div class="token-name"><strong class="name">${escapeHTML(t.name)}</strong></div><div class="token-initiative">${init}</div></li>`;
    }).join("");
    return `<header class="combat-tracker-header"><h4 class="encounter-title">${context.combat ? `Round ${context.round}` : "No combat"}</h4></header><ol class="combat-tracker plain">${rows}</ol><nav class="combat-controls"></nav>`;
  }

  /**
   * Render (ApplicationV2 order): context, HTML into the element, `_onFirstRender` (the
   * context menu) on the first render only, then the render hooks for the class and its
   * parents: `renderCombatTracker(app, element, context, options)`, `renderAbstractSidebarTab`,
   * `renderHandlebarsApplication`, `renderApplicationV2` [research §1.4].
   */
  render(options = {}) {
    const first = !this.rendered;
    const context = this._prepareContext();
    if (!this.element || this.element.ownerDocument !== this.document) {
      this.element = this.document.createElement("section");
      this.element.id = this.popOut ? "combat-popout" : "combat";
      this.element.className = "tab sidebar-tab combat-sidebar flexcol";
      this.element.dataset.tab = "combat";
      this.document.body.append(this.element);
    }
    this.element.innerHTML = this._renderHTML(context);
    this.rendered = true;
    this.renders += 1;
    if (first) this._createContextMenu();
    const opts = { ...options, isFirstRender: first };
    for (const cls of ["CombatTracker", "AbstractSidebarTab", "HandlebarsApplication", "ApplicationV2"]) this.client.Hooks.callAll(`render${cls}`, this, this.element, context, opts);
    return this;
  }

  /**
   * The GM types into a row's inline initiative input (present only for a GM while no
   * initiative has decimals, research §9): the combatant's initiative becomes that number
   * (empty → null). Throws when the row shows text instead of an input.
   */
  async typeInitiative(combatantId, text) {
    const input = this.row(combatantId)?.querySelector("input.initiative-input");
    if (!input) throw new Error(`no inline initiative input for ${combatantId} (decimals, or not a GM)`);
    input.setAttribute("value", text);
    const value = String(text).trim() === "" ? null : Number(text);
    return this.viewed.combatants.get(combatantId).update({ initiative: value });
  }

  /**
   * dnd5e `CombatTracker5e#renderGroups` (dnd5e worlds): for each group of `createGroups()`, a
   * `li.combatant.combatant-group` (class `collapsed` unless expanded, `active` when it holds the
   * current row) is inserted before the group's first row in the list, and the group's rows move
   * into its `ol.group-children`, so the group shows where its first member is [GitHub
   * foundryvtt/dnd5e `module/applications/combat/combat-tracker.mjs`].
   */
  renderGroups(html) {
    const groups = this.client.world.systemRolls === "dnd5e" && this.viewed ? this.viewed.createGroups() : new Map();
    const list = html.querySelector(".directory-list, .combat-tracker");
    for (const [key, { combatants, expanded }] of groups) {
      const children = [...list.querySelectorAll(combatants.map((c) => `[data-combatant-id="${c.id}"]`).join(", "))];
      if (!children.length) continue;
      const group = html.ownerDocument.createElement("li");
      group.className = `combatant combatant-group collapsible${expanded ? "" : " collapsed"}${children.some((r) => r.classList.contains("active")) ? " active" : ""}`;
      group.dataset.groupKey = key;
      group.innerHTML = `<div class="group-header flexrow"><div class="token-name"><strong class="name"></strong></div></div><div class="collapsible-content"><ol class="group-children"></ol></div>`;
      children[0].before(group);
      group.querySelector(".group-children").replaceChildren(...children);
    }
  }

  /** Re-render after a change, if rendered (and each popped-out copy). */
  refresh() {
    if (this.rendered) this.render();
    for (const p of this.popouts) p.refresh();
  }

  /** The row element of a combatant in the current DOM. */
  row(combatantId) { return this.element?.querySelector(`li.combatant[data-combatant-id="${combatantId}"]`) ?? null; }

  /**
   * Pop the tracker out. v14: the sidebar tab itself moves into its own browser window — the
   * same app, a new `ownerDocument` [research §10]. v13: a separate popped-out CombatTracker
   * app in the same page, with its own first render and so its own context menu
   * [research §9: "only a popped-out tracker would get it"].
   */
  popOutWindow() {
    if (this.client.world.generation >= 14) {
      const w = this.client.openWindow();
      this.element?.remove(); // the tab leaves the sidebar
      this.document = w.document;
      this.element = null;
      return this.render();
    }
    const app = new CombatTracker(this.client, { popOut: true });
    this.popouts.push(app);
    return app.render();
  }
}
