"""The plan: what the module shows and writes for one combat (schemas/plan.schema.json).

Each entry's ``actions``/``gm_actions`` come from :mod:`.actions`, its ``formula`` from
``Ruleset.formula``; the ``initiative`` numbers from :func:`.order.encode_initiatives`, so
that Foundry's own sort reproduces ``order``. A :class:`PlanMemo` builds every plan: again
only where its inputs changed, each entry encoded once, the plan's text joined from theirs
(docs/performance.md, "The second step").
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter, is_, is_not, ne
from typing import Any

import orjson

from .actions import actions_now
from .adopt import adopted_values
from .context import Rules
from .model import Combat, Combatant, Describe, Entry
from .order import encode_initiatives


def plan_text(body: dict[str, Any], memo: PlanMemo | None = None, combat_id: str = "") -> str:
    """A plan body as the JSON text kept in ``Combat.last_plan``: with the ``memo`` that built
    it, joined from its entries' texts (the very text of last time when no part changed, so
    that comparing it with ``last_plan`` is an identity); else orjson's, or the standard
    library's where orjson refuses (an integer beyond 64 bits, e.g. a stat a player typed)."""
    known = memo.text(combat_id, body) if memo is not None else None
    if known is not None:
        return known
    try:
        return orjson.dumps(body).decode()
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


def plan_from_text(text: str) -> dict[str, Any]:
    """The body :func:`plan_text` wrote (the standard library: orjson reads an integer beyond
    64 bits as a float)."""
    body: dict[str, Any] = json.loads(text)
    return body


def next_round_view(describe: Describe, upcoming: Combat) -> dict[str, Any]:
    """The plan's ``next_round``: the round, current and order the preview starts with."""
    order = upcoming.order
    views = [describe(upcoming, upcoming.combatants[cid]) for cid in order]
    values = _numbers(upcoming, list(map(upcoming.combatants.__getitem__, order)), views)
    return {
        "round": upcoming.round,
        "current": upcoming.current,
        "order": [{"combatant_id": cid, "initiative": values[cid], "acts": view.acts}
                  for cid, view in zip(order, views)],
    }


def _numbers(combat: Combat, objs: list[Combatant], views: list[Entry]) -> dict[str, float | None]:
    order = combat.order
    hints = {cid: v.hint for cid, v in zip(order, views) if v.hint is not None}
    scores = {cid: c.score for cid, c in zip(order, objs)}
    return encode_initiatives(order, scores, hints, adopted_values(combat), combat.turn_order)


def _entry(cid: str, view: Entry, value: float | None, score: float | None,
           actions: tuple[list[str], list[str]], formula: str | None) -> dict[str, Any]:
    detail = dict(view.detail)
    if value is not None and score is not None and math.floor(value) != math.floor(score):
        detail["score"] = score
    entry = {
        "combatant_id": cid,
        "initiative": value,
        "acts": view.acts,
        "reaction": dict(view.reaction) if view.reaction is not None else None,
        "tags": list(view.tags),
        "detail": detail,
        "rules": list(view.rules),
    }
    mine, gms = actions
    if mine:
        entry["actions"] = list(mine)
    if gms:
        entry["gm_actions"] = list(gms)
    if formula is not None:
        entry["formula"] = formula
    return entry


def _same(a: Any, b: Any) -> bool:
    """Equal and written alike in JSON (``1`` and ``1.0``, ``True`` and ``1`` are not)."""
    return a is b or (type(a) is type(b) and a == b)


def _same_adopted(a: tuple[float, float] | None, b: tuple[float, float] | None) -> bool:
    return a is b or (a is not None and b is not None and all(map(_same, a, b)))


def finite(value: Any) -> bool:
    """No float that is not finite anywhere in ``value`` (orjson would write it ``null``)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return False
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return True


def _encoded(value: Any) -> bytes | None:
    """orjson's text of ``value``, copied to its size (orjson's object keeps its 4 KB buffer)."""
    try:
        return bytes(memoryview(orjson.dumps(value)))
    except (TypeError, orjson.JSONEncodeError):
        return None


class _Kept:
    """One combatant's plan entry as last built, with every input it was built from."""

    __slots__ = ("view", "value", "score", "started", "formula", "entry", "text", "finite", "checked")

    def __init__(self, view: Entry, value: float | None, score: float | None, started: bool,
                 formula: str | None, entry: dict[str, Any]) -> None:
        self.view, self.value, self.score, self.started = view, value, score, started
        self.formula, self.entry, self.text = formula, entry, _encoded(entry)
        self.finite = finite(entry)
        #: the entry passed the outbound check (in an ack): it is not checked again
        self.checked = False

    def same(self, view: Entry, value: float | None, score: float | None, started: bool,
             formula: str | None) -> bool:
        return (self.view is view and _same(self.value, value) and _same(self.score, score)
                and self.started == started and self.formula == formula)


_FINITE = attrgetter("finite")


@dataclass(slots=True, eq=False)
class _CombatMemo:
    """What one combat's plan was last built from, place by place along its order, and the
    plan built (``body``, its parts, its text once joined, the entries not yet checked)."""

    ruleset: Rules
    #: ``(Ruleset.view_inputs(combat),)`` the views were asked with (None: not declared)
    view_key: tuple[Any] | None = None
    order: tuple[str, ...] | None = None
    started: bool | None = None
    objs: list[Combatant] = field(default_factory=list)
    views: list[Entry] = field(default_factory=list)
    vals: list[float | None] = field(default_factory=list)
    kept: list[_Kept] = field(default_factory=list)
    entries: list[dict[str, Any]] = field(default_factory=list)
    texts: list[bytes | None] = field(default_factory=list)
    pending: list[_Kept] = field(default_factory=list)
    #: the next-round view last encoded: [the view, its text, finite, checked]
    next_round: list[Any] | None = None
    body: dict[str, Any] | None = None
    head: bytes = b""
    whole: bytes | None = None
    text: str | None = None
    finite: bool = True


class PlanMemo:
    """What the plans of one world's combats were last built from, held by the caller beside
    its world, so that a message builds again only the entries whose inputs changed; a plan
    built without one is the same plan, byte for byte (tests/test_incremental.py). Why it
    cannot go stale: docs/performance.md, "The second step"."""

    def __init__(self) -> None:
        self.combats: dict[str, _CombatMemo] = {}

    def keep_only(self, combat_ids: Collection[str]) -> None:
        """Forget the combats not in ``combat_ids`` (deleted, or a refused first contact)."""
        if len(self.combats) > len(combat_ids):
            for gone in [cid for cid in self.combats if cid not in combat_ids]:
                del self.combats[gone]

    def body(
        self, rs: Rules, combat: Combat, next_round: dict[str, Any] | None,
        formula: Callable[[Combatant], str | None] | None = None,
    ) -> dict[str, Any]:
        """The plan without its ``combat_id`` and revision (:func:`adapter.engine.apply.plan_of`
        adds both; ``next_round``: :func:`next_round_view` of the preview), describing again
        only the combatants that changed when the order, the round and ``started`` are as last
        time (a turn change)."""
        cm = self.combats.get(combat.id)
        if cm is None or cm.ruleset is not rs:
            cm = self.combats[combat.id] = _CombatMemo(rs)
        reads = rs.view_inputs
        key = (reads(combat),) if reads is not None else None
        order, started, describe = combat.order, combat.started, rs.describe
        objs = list(map(combat.combatants.__getitem__, order))
        fast = (key is not None and cm.view_key is not None and _same(cm.view_key[0], key[0])
                and formula is None and started == cm.started and order == cm.order)
        changed: list[int] = []
        if fast:
            views, dirty = list(cm.views), False
            for i in compress(range(len(objs)), map(is_not, objs, cm.objs)):
                changed.append(i)
                c, was, view = objs[i], cm.objs[i], describe(combat, objs[i])
                dirty = dirty or not (_same(was.score, c.score) and _same_adopted(was.adopted, c.adopted)
                                      and _same(views[i].hint, view.hint))
                views[i] = view
        else:
            views, dirty = [describe(combat, c) for c in objs], True
        vals = cm.vals
        if dirty:
            vals = list(map(_numbers(combat, objs, views).__getitem__, order))
            if fast:  # numbers are floats or None: ``!=`` tells them apart as JSON does
                changed = sorted(set(changed).union(compress(range(len(vals)), map(ne, vals, cm.vals))))
        kept: list[Any] = list(cm.kept) if fast else [None] * len(order)
        entries: list[Any] = list(cm.entries) if fast else [None] * len(order)
        texts: list[Any] = list(cm.texts) if fast else [None] * len(order)
        pending = [k for k in cm.pending if not k.checked] if fast else []
        before = {} if fast else {k.entry["combatant_id"]: k for k in cm.kept}
        same = fast  # every entry the very one of last time
        for i in changed if fast else range(len(order)):
            cid, c, view, value = order[i], objs[i], views[i], vals[i]
            f = formula(c) if formula is not None else None
            k = kept[i] if fast else before.get(cid)
            if k is None or not k.same(view, value, c.score, started, f):
                k = _Kept(view, value, c.score, started, f,
                          _entry(cid, view, value, c.score, actions_now(rs.intent_kinds, started, view), f))
                same = False
                pending.append(k)
            elif not (fast or k.checked):  # fast: an unchecked entry kept is in cm.pending
                pending.append(k)
            kept[i], entries[i], texts[i] = k, k.entry, k.text
        if len(pending) > 2 * len(kept) + 8:  # never checked (check_outbound off): bounded
            pending = [k for k in kept if not k.checked]
        nr = cm.next_round
        if next_round is not None and (nr is None or nr[0] is not next_round):
            nr = [next_round, _encoded(next_round), finite(next_round), False]
        current = combat.current
        body = {
            "round": combat.round,
            "turn": order.index(current) if current in order else None,
            "current": current,
            "next_round": next_round,
            "order": entries,  # never changed after: the next build copies it
        }
        head = orjson.dumps({"round": body["round"], "turn": body["turn"], "current": current})
        if not fast:
            same = len(kept) == len(cm.kept) and all(map(is_, kept, cm.kept))
        unchanged = same and cm.body is not None and head == cm.head and next_round is cm.body["next_round"]
        cm.order, cm.started, cm.view_key, cm.objs, cm.views = order, started, key, objs, views
        cm.vals, cm.kept, cm.entries, cm.texts = vals, kept, entries, texts
        cm.pending, cm.next_round, cm.body, cm.head = pending, nr if next_round is not None else None, body, head
        if not unchanged:
            nr_text = b"null" if next_round is None else nr[1] if nr is not None else None
            cm.whole = cm.text = None
            if nr_text is not None and None not in texts:
                cm.whole = b"".join((head[:-1], b',"next_round":', nr_text, b',"order":[',
                                     b",".join(texts), b"]}"))
            cm.finite = all(map(_FINITE, kept)) and (next_round is None or nr is not None and nr[2])
        return body

    def text(self, combat_id: str, body: dict[str, Any]) -> str | None:
        """:func:`plan_text` of the body :meth:`body` just built (None: not that body)."""
        cm = self._built(combat_id, body)
        if cm is None or cm.whole is None:
            return None
        if cm.text is None:
            cm.text = cm.whole.decode()
        return cm.text

    def wire_text(self, plan: Mapping[str, Any]) -> bytes | None:
        """orjson's text of a plan as sent (``combat_id``, ``revision``, then the body built
        last), with no float that is not finite; None when that is not known here."""
        cm = self._built(plan.get("combat_id"), plan)
        if cm is None or cm.whole is None or not cm.finite:
            return None
        head = orjson.dumps({"combat_id": plan["combat_id"], "revision": plan["revision"]})
        return b"".join((head[:-1], b",", memoryview(cm.whole)[1:]))

    def checked_view(self, plan: Mapping[str, Any]) -> dict[str, Any] | None:
        """The plan as the outbound check need see it: only its entries (and next-round view)
        not checked yet, the schema checking ``order`` item by item; None when the plan is
        not the body built last."""
        cm = self._built(plan.get("combat_id"), plan)
        if cm is None:
            return None
        nr = cm.next_round
        return {**plan, "order": [k.entry for k in cm.pending],
                "next_round": None if nr is not None and nr[3] else plan["next_round"]}

    def passed(self, plan: Mapping[str, Any]) -> None:
        """The plan passed the outbound check: its entries are not checked again."""
        cm = self._built(plan.get("combat_id"), plan)
        if cm is not None:
            for k in cm.pending:
                k.checked = True
            cm.pending = []
            if cm.next_round is not None:
                cm.next_round[3] = True

    def _built(self, combat_id: Any, plan: Mapping[str, Any]) -> _CombatMemo | None:
        cm = self.combats.get(combat_id) if isinstance(combat_id, str) else None
        body = cm.body if cm is not None else None
        if body is None:
            return None
        if plan is body or (plan.get("order") is body["order"] and plan.get("next_round") is body["next_round"]
                            and _same(plan.get("round"), body["round"]) and _same(plan.get("turn"), body["turn"])
                            and plan.get("current") == body["current"]):
            return cm
        return None
