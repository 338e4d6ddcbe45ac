"""The plan: what the module shows and writes for one combat.

``plan`` = ``{combat_id, revision, round, turn, current, next_round, order: [entry...]}``;
each entry = ``{combatant_id, initiative, acts, reaction, tags, detail, rules}`` plus, when
they say something, ``actions``/``gm_actions`` (:mod:`.actions`) and ``formula`` (the dice
the ruleset needs rolled, ``Ruleset.formula``). The
``initiative`` numbers come from :func:`adapter.engine.order.encode_initiatives`, so that
Foundry's own sort reproduces ``order`` on every client.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import orjson

from .actions import actions_now
from .adopt import adopted_values
from .model import Combat, Combatant
from .order import encode_initiatives
from .ruleset import Entry, Ruleset


def plan_body(
    rs: Ruleset,
    combat: Combat,
    next_round: dict[str, Any] | None,
    formula: Callable[[Combatant], str | None] | None = None,
) -> dict[str, Any]:
    """The plan without its ``combat_id`` and revision (kept as ``Combat.last_plan``, compared to
    the last one to see whether it changed; :func:`adapter.engine.apply.plan_of` adds both);
    ``next_round`` is :func:`next_round_view` of the preview (:mod:`.preview`)."""
    order, views, values = _entries(rs, combat)
    current = combat.current
    intents, started, combatants = rs.intent_kinds, combat.started, combat.combatants
    # the menu is a function of the view: asked once per distinct view (most combatants
    # share one, e.g. Foundry's own "acts fully" entry)
    menus: dict[int, tuple[list[str], list[str]]] = {}
    entries = []
    for cid in order:
        view = views[cid]
        menu = menus.get(id(view))
        if menu is None:
            menu = menus[id(view)] = actions_now(intents, started, view)
        combatant = combatants[cid]
        entries.append(_extras(_entry(cid, view, values[cid], combatant.score), menu,
                               formula(combatant) if formula is not None else None))
    return {
        "round": combat.round,
        "turn": order.index(current) if current in order else None,
        "current": current,
        "next_round": next_round,
        "order": entries,
    }


def plan_text(body: dict[str, Any]) -> str:
    """A plan body as the JSON text kept in ``Combat.last_plan``: orjson's, or the standard
    library's where orjson refuses (an integer beyond 64 bits, e.g. a stat a player typed:
    the schema bounds no stat, and dice-pool shows its pool's stats in the plan)."""
    try:
        return orjson.dumps(body).decode()
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


def plan_from_text(text: str) -> dict[str, Any]:
    """The plan body :func:`plan_text` wrote, value for value. Read by the standard library:
    orjson would read an integer beyond 64 bits as a float; this runs only for a resent
    message and the status page."""
    body: dict[str, Any] = json.loads(text)
    return body


def next_round_view(rs: Ruleset, upcoming: Combat) -> dict[str, Any]:
    """The plan's ``next_round``: the round, current and order the preview starts with."""
    up_order, up_views, up_values = _entries(rs, upcoming)
    return {
        "round": upcoming.round,
        "current": upcoming.current,
        "order": [
            {"combatant_id": cid, "initiative": up_values[cid], "acts": up_views[cid].acts}
            for cid in up_order
        ],
    }


def _entries(
    rs: Ruleset, combat: Combat
) -> tuple[list[str], dict[str, Entry], dict[str, float | None]]:
    order = list(combat.order)
    views = {cid: rs.describe(combat, combat.combatants[cid]) for cid in order}
    hints = {cid: v.hint for cid, v in views.items() if v.hint is not None}
    scores = {cid: combat.combatants[cid].score for cid in order}
    return order, views, encode_initiatives(order, scores, hints, adopted_values(combat))


def _entry(cid: str, view: Entry, value: float | None, score: float | None) -> dict[str, Any]:
    detail = dict(view.detail)
    if value is not None and score is not None and math.floor(value) != math.floor(score):
        detail["score"] = score
    return {
        "combatant_id": cid,
        "initiative": value,
        "acts": view.acts,
        "reaction": dict(view.reaction) if view.reaction is not None else None,
        "tags": list(view.tags),
        "detail": detail,
        "rules": list(view.rules),
    }


def _extras(
    entry: dict[str, Any], actions: tuple[list[str], list[str]], formula: str | None
) -> dict[str, Any]:
    mine, gms = actions
    if mine:
        entry["actions"] = list(mine)
    if gms:
        entry["gm_actions"] = list(gms)
    if formula is not None:
        entry["formula"] = formula
    return entry
