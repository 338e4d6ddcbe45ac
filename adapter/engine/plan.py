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
from collections.abc import Callable, Collection, Iterable, Mapping
from itertools import compress
from operator import attrgetter, is_not, ne
from typing import Any

import orjson

from .actions import actions_now
from .adopt import adopted_values
from .context import Rules
from .entry import Describe, Entry
from .model import Combat, Combatant
from .order import encode_initiatives


def plan_body(
    rs: Rules,
    combat: Combat,
    next_round: dict[str, Any] | None,
    formula: Callable[[Combatant], str | None] | None = None,
    memo: PlanMemo | None = None,
) -> dict[str, Any]:
    """The plan without its ``combat_id`` and revision (kept as ``Combat.last_plan``, compared to
    the last one to see whether it changed; :func:`adapter.engine.apply.plan_of` adds both);
    ``next_round`` is :func:`next_round_view` of the preview (:mod:`.preview`).
    ``memo``: build again only the entries whose inputs changed (:class:`PlanMemo`); the
    body is the same, value for value (tests/test_incremental.py)."""
    if memo is not None:
        return memo.body(rs, combat, next_round, formula)
    order, views, values = _entries(rs.describe, combat)
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


def plan_text(body: dict[str, Any], memo: PlanMemo | None = None, combat_id: str = "") -> str:
    """A plan body as the JSON text kept in ``Combat.last_plan``: orjson's, or the standard
    library's where orjson refuses (an integer beyond 64 bits, e.g. a stat a player typed:
    the schema bounds no stat, and dice-pool shows its pool's stats in the plan). With the
    ``memo`` that built ``body`` for ``combat_id``: joined from its entries' texts."""
    known = memo.text(combat_id, body) if memo is not None else None
    if known is not None:
        return known
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


def next_round_view(describe: Describe, upcoming: Combat) -> dict[str, Any]:
    """The plan's ``next_round``: the round, current and order the preview starts with, each
    combatant as the ruleset's ``describe`` shows it."""
    up_order, up_views, up_values = _entries(describe, upcoming)
    return {
        "round": upcoming.round,
        "current": upcoming.current,
        "order": [
            {"combatant_id": cid, "initiative": up_values[cid], "acts": up_views[cid].acts}
            for cid in up_order
        ],
    }


def _entries(
    describe: Describe, combat: Combat
) -> tuple[list[str], dict[str, Entry], dict[str, float | None]]:
    order = list(combat.order)
    views = {cid: describe(combat, combat.combatants[cid]) for cid in order}
    hints = {cid: v.hint for cid, v in views.items() if v.hint is not None}
    scores = {cid: combat.combatants[cid].score for cid in order}
    return order, views, encode_initiatives(order, scores, hints, adopted_values(combat), combat.turn_order)


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


# ---------------------------------------------------------------- built again only where it changed


def _same(a: Any, b: Any) -> bool:
    """Equal and written alike in JSON (``1`` and ``1.0``, ``True`` and ``1`` are not)."""
    return a is b or (type(a) is type(b) and a == b)


def _same_adopted(a: tuple[float, float] | None, b: tuple[float, float] | None) -> bool:
    return a is b or (a is not None and b is not None and all(map(_same, a, b)))


def _finite(value: Any) -> bool:
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


class _Kept:
    """One combatant's plan entry as last built, with every input it was built from."""

    __slots__ = ("view", "value", "score", "started", "formula", "entry", "text", "finite", "checked")

    def __init__(self, view: Entry, value: float | None, score: float | None, started: bool,
                 formula: str | None, entry: dict[str, Any], text: bytes) -> None:
        self.view, self.value, self.score, self.started = view, value, score, started
        self.formula, self.entry, self.text = formula, entry, text
        self.finite = _finite(entry)
        #: the entry passed the outbound schema (as part of an ack): it need not be walked again
        self.checked = False


    def same(self, view: Entry, value: float | None, score: float | None, started: bool,
             formula: str | None) -> bool:
        """Built from these very inputs (the view the same object, numbers written alike)."""
        return (self.view is view and _same(self.value, value) and _same(self.score, score)
                and self.started == started and self.formula == formula)


_FINITE = attrgetter("finite")


def _tight(text: bytes) -> bytes:
    """A copy of orjson's bytes that holds only them: orjson's own object keeps the buffer
    it wrote into (some 4 KB for a 200-byte entry), and these are kept."""
    return bytes(memoryview(text))


class _Sent:
    """The last body :meth:`PlanMemo.body` built for a combat, with its text."""

    __slots__ = ("body", "text", "finite", "pending", "next_round", "memo")

    def __init__(self, body: dict[str, Any], text: bytes | None, finite: bool, pending: list[_Kept],
                 next_round: tuple[Any, bytes, bool, bool] | None, memo: _CombatMemo) -> None:
        self.body, self.text, self.finite, self.pending = body, text, finite, pending
        self.next_round, self.memo = next_round, memo


class _CombatMemo:
    """What one combat's plan was last built from, place by place along its order."""

    __slots__ = ("ruleset", "view_key", "order", "started", "objs", "views", "values", "vals",
                 "kept", "entries", "texts", "pending", "next_round", "sent")

    def __init__(self, rs: Rules) -> None:
        self.ruleset = rs
        #: ``(Ruleset.view_inputs(combat),)`` the views were asked with (None: not declared)
        self.view_key: tuple[Any] | None = None
        self.order: tuple[str, ...] | None = None
        self.started: bool | None = None
        #: along the order: the combatants, their views, their numbers, their entries
        self.objs: list[Combatant] = []
        self.views: list[Entry] = []
        self.values: dict[str, float | None] = {}
        self.vals: list[float | None] = []
        self.kept: list[_Kept] = []
        self.entries: list[dict[str, Any]] = []
        self.texts: list[bytes] = []
        #: entries built and not yet through the outbound check
        self.pending: list[_Kept] = []
        #: the next-round view last encoded: [the view, its text, finite, checked]
        self.next_round: list[Any] | None = None
        self.sent: _Sent | None = None


class PlanMemo:
    """What the plans of one world's combats were last built from, so that a message builds
    again only the entries whose inputs changed (a turn change at 200 combatants rebuilds a
    handful, not 200). Held by the caller beside its world (:class:`adapter.service.Worlds`,
    :class:`adapter.replay.Replay`) and handed to the engine; never a module global.

    It cannot go stale, only unused: each entry is kept with every input it was built from
    and reused only when each is the same — the very :class:`.Combatant` (immutable: the same
    object is the same combatant), the same view (the object :meth:`Ruleset.describe` gave,
    asked again only when the combatant changed or ``Ruleset.view_inputs`` of the combat
    did; a ruleset that declares none is asked every time and its entries are reused only for
    the very same view object), the same initiative number and score (compared as JSON writes
    them: ``1`` is not ``1.0``), the same ``started`` and formula. So it may outlive a refused
    message, a reload or a rollback: what it holds is still true of the objects it holds.
    The numbers (:func:`.order.encode_initiatives`) are computed again only when the order,
    or a score, an adopted value or a hint of someone in it, changed. Each entry keeps its
    JSON text too: the plan's text is joined from them (``bytes.join``), byte for byte
    what encoding the whole gives, and each entry is walked by the outbound schema check
    once (:meth:`checked_view` of the ack). tests/test_incremental.py compares the bodies,
    texts and acks with and without it over random hook sequences.
    """

    def __init__(self) -> None:
        self.combats: dict[str, _CombatMemo] = {}

    def keep_only(self, combat_ids: Collection[str]) -> None:
        """Forget the combats not in ``combat_ids`` (deleted, or never kept: a refused
        first contact), once there are more here than there."""
        if len(self.combats) > len(combat_ids):
            for gone in [cid for cid in self.combats if cid not in combat_ids]:
                del self.combats[gone]

    def body(
        self, rs: Rules, combat: Combat, next_round: dict[str, Any] | None,
        formula: Callable[[Combatant], str | None] | None,
    ) -> dict[str, Any]:
        """:func:`plan_body`, built again where its inputs changed. When the order, the round
        and ``started`` are as last time (a turn change), who changed is found at C speed
        (the combatants compared by identity along the order, ``map``/``compress``) and only
        those are described and built again, with those whose number moved."""
        cm = self.combats.get(combat.id)
        if cm is None or cm.ruleset is not rs:
            cm = self.combats[combat.id] = _CombatMemo(rs)
        reads = rs.view_inputs
        key = (reads(combat),) if reads is not None else None
        order, combatants, started, describe = combat.order, combat.combatants, combat.started, rs.describe
        objs = list(map(combatants.__getitem__, order))
        fast = (key is not None and cm.view_key is not None and _same(cm.view_key[0], key[0])
                and formula is None and started == cm.started and order == cm.order)
        changed: list[int] = []
        if fast:
            views = list(cm.views)
            dirty = False
            for i in compress(range(len(objs)), map(is_not, objs, cm.objs)):
                changed.append(i)
                c, was, view = objs[i], cm.objs[i], describe(combat, objs[i])
                dirty = dirty or not (_same(was.score, c.score) and _same_adopted(was.adopted, c.adopted)
                                      and _same(views[i].hint, view.hint))
                views[i] = view
        else:
            views = [describe(combat, c) for c in objs]
            dirty = True
        if dirty:
            hints = {cid: v.hint for cid, v in zip(order, views) if v.hint is not None}
            scores = {cid: c.score for cid, c in zip(order, objs)}
            values = encode_initiatives(order, scores, hints, adopted_values(combat), combat.turn_order)
            vals = list(map(values.__getitem__, order))
            if fast:  # numbers are floats or None: ``!=`` tells them apart as JSON does
                changed = sorted(set(changed).union(compress(range(len(vals)), map(ne, vals, cm.vals))))
        else:
            values, vals = cm.values, cm.vals
        intents = rs.intent_kinds
        kept: list[Any]
        if fast:
            kept, entries, texts = list(cm.kept), list(cm.entries), list(cm.texts)
            pending = [k for k in cm.pending if not k.checked]
            indices: Iterable[int] = changed
            before: dict[str, _Kept] = {}
        else:
            kept = [None] * len(order)
            entries, texts, pending = [{}] * len(order), [b""] * len(order), []
            indices = range(len(order))
            before = {k.entry["combatant_id"]: k for k in cm.kept}
        for i in indices:
            cid, c, view, value = order[i], objs[i], views[i], vals[i]
            f = formula(c) if formula is not None else None
            k = before.get(cid)
            if k is None or not k.same(view, value, c.score, started, f):
                entry = _extras(_entry(cid, view, value, c.score), actions_now(intents, started, view), f)
                try:
                    text = _tight(orjson.dumps(entry))
                except (TypeError, orjson.JSONEncodeError):
                    text = b""
                k = _Kept(view, value, c.score, started, f, entry, text)
            if not k.checked:
                pending.append(k)
            kept[i], entries[i], texts[i] = k, k.entry, k.text
        if len(pending) > 2 * len(kept) + 8:  # never checked (check_outbound off): bounded, amortized
            pending = [k for k in kept if not k.checked]
        cm.order, cm.started, cm.view_key, cm.objs, cm.views = order, started, key, objs, views
        cm.values, cm.vals, cm.kept, cm.entries, cm.texts, cm.pending = values, vals, kept, entries, texts, pending
        current = combat.current
        body = {
            "round": combat.round,
            "turn": order.index(current) if current in order else None,
            "current": current,
            "next_round": next_round,
            "order": entries,  # the memo's list, never changed after (the next one is a copy)
        }
        text_ok = b"" not in texts
        nr: list[Any] | None = None
        if next_round is not None:
            nr = cm.next_round
            if nr is None or nr[0] is not next_round:
                try:
                    nr = [next_round, _tight(orjson.dumps(next_round)), _finite(next_round), False]
                except (TypeError, orjson.JSONEncodeError):
                    nr, text_ok = None, False
            cm.next_round = nr
        whole: bytes | None = None
        if text_ok:
            # orjson's text of the body, its two long parts put in as they are (one copy)
            head = orjson.dumps({"round": body["round"], "turn": body["turn"], "current": body["current"]})
            whole = b"".join((head[:-1], b',"next_round":', nr[1] if nr is not None else b"null",
                              b',"order":[', b",".join(texts), b"]}"))
        finite = all(map(_FINITE, kept)) and (nr is None or nr[2])
        cm.sent = _Sent(body, whole, finite, list(pending), tuple(nr) if nr else None, cm)
        return body

    def text(self, combat_id: str, body: dict[str, Any]) -> str | None:
        """:func:`plan_text` of the body :meth:`body` just built (None: not that body)."""
        sent = self._sent(combat_id, body)
        return sent.text.decode() if sent is not None and sent.text is not None else None

    def wire_text(self, plan: Mapping[str, Any]) -> bytes | None:
        """orjson's text of a plan as sent (``combat_id``, ``revision``, then the body built
        last), with no float that is not finite; None when that is not known here."""
        sent = self._sent(plan.get("combat_id"), plan)
        if sent is None or sent.text is None or not sent.finite:
            return None
        head = orjson.dumps({"combat_id": plan["combat_id"], "revision": plan["revision"]})
        return b"".join((head[:-1], b",", memoryview(sent.text)[1:]))

    def checked_view(self, plan: Mapping[str, Any]) -> dict[str, Any] | None:
        """The plan as the outbound check need see it: only its entries (and next-round
        view) not yet checked, the others having passed the schema as they are (the schema
        checks the order's items one by one, and nothing of the array as a whole); None
        when the plan is not the body built last."""
        sent = self._sent(plan.get("combat_id"), plan)
        if sent is None:
            return None
        nr = sent.next_round
        return {**plan, "order": [k.entry for k in sent.pending],
                "next_round": None if nr is not None and nr[3] else plan["next_round"]}

    def passed(self, plan: Mapping[str, Any]) -> None:
        """The plan passed the outbound check: its entries need not be checked again."""
        sent = self._sent(plan.get("combat_id"), plan)
        if sent is None:
            return
        for k in sent.pending:
            k.checked = True
        sent.pending = []
        nr = sent.memo.next_round
        if nr is not None and sent.next_round is not None and nr[0] is sent.next_round[0]:
            nr[3] = True

    def _sent(self, combat_id: Any, plan: Mapping[str, Any]) -> _Sent | None:
        cm = self.combats.get(combat_id) if isinstance(combat_id, str) else None
        sent = cm.sent if cm is not None else None
        if sent is None:
            return None
        body = sent.body
        if plan is body or (plan.get("order") is body["order"] and plan.get("next_round") is body["next_round"]
                            and _same(plan.get("round"), body["round"]) and _same(plan.get("turn"), body["turn"])
                            and plan.get("current") == body["current"]):
            return sent
        return None

