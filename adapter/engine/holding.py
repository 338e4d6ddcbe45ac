"""Hold and act: delaying an action, written once for every ruleset that has it.

Used by ``storyteller`` (ST-1 … ST-5) and ``dice-pool`` (DP-5: "hold and act move a
combatant exactly as in the storyteller ruleset"). Public API, kept stable::

    HOLD_INTENTS = {"hold": hold_action, "act": act_action}  # into Ruleset(intents=...)
    HOLD_RULES = (hold_carry_over, hold_rescored)           # into Ruleset(rules=...), after
                                                            # the rule that sets scores on Rolled
    hold_entry(combat, combatant, entry) -> Entry           # call at the end of describe()
    Hold, HOLDING, GIVING_UP, ANY_POINT, STEPPED_IN         # the state in Combatant.hold
    holding(combatant) -> Hold | None; is_waiting(combatant) -> bool
    HoldRuleIds, rule_ids(ruleset_id), use_rule_ids(ruleset_id, ids)

Intents (by the combatant's owner or a GM; ``combat_id`` and ``combatant_id`` required):

- ``hold {}``: on or before its turn this round the combatant keeps its place without acting
  (``acts: held``); if it was current, the turn passes to the next who acts, or, with nobody
  left, the round is over (``current`` None).
- ``hold {next_round: true}``: gives up this round's action, movement only
  (``acts: movement_only``); next round it may step in at any point (ST-4).
- ``hold {target_aware: bool}``: GM only; tags a holder ``target_aware`` (ST-5: the target
  knows, the shot loses surprise). On a combatant already holding it only changes the tag.
- ``act {after: id}``: score ``id``'s − 1, placed right after it (ST-1); refused once that
  turn is over (use ``now``). ``act {before: id}``: score + 1, placed right before it (ST-2),
  allowed until that turn ends; if ``id`` is current, the holder interrupts and becomes
  current, and ``id``'s turn follows. ``act {now: true}``: right after the current turn (or at
  once, if the round has no turn in progress).
- Placement wins over arithmetic: :mod:`adapter.engine.order` encodes the plan's numbers
  from ``Combat.order``. Holders stepping in at one point are ordered by the ruleset's
  ``sort_key`` (its tie rule, ST-3).

States of :class:`Hold` (``Combatant.hold``; None when not holding)::

    HOLDING     hold {} this round           acts held         act -> STEPPED_IN
    GIVING_UP   hold {next_round} this round acts movement_only
    ANY_POINT   carried into a new round     acts held         act -> STEPPED_IN
    STEPPED_IN  acted from a hold this round (``point`` = where, for ST-3)

At each round start (``hold_carry_over``): HOLDING and GIVING_UP become ANY_POINT (ST-5,
ST-4), remembering the score to return to (``original``); ANY_POINT carries again;
STEPPED_IN ends: back to ``original`` if it came from ANY_POINT (ST-4/ST-5 rulings), else
the new score stays for the fight (ST-1/ST-2 rulings).

Rule ids in errors and in the plan's ``rules`` are the calling ruleset's: looked up by
``Combat.ruleset`` in a small table (:func:`rule_ids`). ``storyteller`` and ``dice-pool``
are filled in; another ruleset calls :func:`use_rule_ids` (unknown ids fall back to the
ruleset id for every rule).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from ..errors import InvalidMessage, RuleViolation
from .context import Ctx
from .events import Declared, Event, Rolled, RoundStarted, ScoreSet
from .model import Combat, Combatant
from .order import rules_sort
from .ruleset import Entry, Ruleset, get_ruleset
from .turns import begin_next_acting, begin_turn, end_turn

HOLDING = "holding"
GIVING_UP = "giving_up"
ANY_POINT = "any_point"
STEPPED_IN = "stepped_in"


@dataclass(frozen=True)
class Hold:
    """A combatant's hold (see the state table in the module docstring)."""

    state: str
    #: the round the hold was declared in
    since: int
    #: the score to return to at the next round start (ST-4, ST-5), or None to keep the score
    original: float | None = None
    target_aware: bool = False
    #: declared with ``next_round`` (ST-4) rather than carried over (ST-5)
    gave_up: bool = False
    #: where a STEPPED_IN combatant went: ("after" | "before", anchor id)
    point: tuple[str, str] | None = None


@dataclass(frozen=True)
class HoldRuleIds:
    """The calling ruleset's ids for each rule of the mechanics."""

    hold: str  # ST-1: hold, act after
    interrupt: str  # ST-2: act before
    same_moment: str  # ST-3: several at one point
    next_round: str  # ST-4: give up this round
    carry_over: str  # ST-5: waiting across rounds

    @classmethod
    def single(cls, rule: str) -> "HoldRuleIds":
        return cls(rule, rule, rule, rule, rule)


_RULE_IDS: dict[str, HoldRuleIds] = {
    "storyteller": HoldRuleIds("ST-1", "ST-2", "ST-3", "ST-4", "ST-5"),
    "dice-pool": HoldRuleIds.single("DP-5"),
}


def use_rule_ids(ruleset_id: str, ids: HoldRuleIds) -> None:
    _RULE_IDS[ruleset_id] = ids


def rule_ids(ruleset_id: str) -> HoldRuleIds:
    return _RULE_IDS.get(ruleset_id) or HoldRuleIds.single(ruleset_id)


def holding(combatant: Combatant) -> Hold | None:
    return combatant.hold if isinstance(combatant.hold, Hold) else None


def is_waiting(combatant: Combatant) -> bool:
    """Holding and free to step in (HOLDING or ANY_POINT)."""
    held = holding(combatant)
    return held is not None and held.state in (HOLDING, ANY_POINT)


def _name(c: Combatant) -> str:
    return c.name or c.id


def _set(combat: Combat, cid: str, **changes: Any) -> Combat:
    combatants = {**combat.combatants, cid: replace(combat.combatants[cid], **changes)}
    return replace(combat, combatants=combatants)


def _require_combat(combat: Combat | None, kind: str) -> Combat:
    if combat is None:
        raise InvalidMessage(f"{kind} needs combat_id", path="")
    return combat


# ---------------------------------------------------------------- hold


def hold_action(ctx: Ctx, combat: Combat | None, event: Event) -> Combat | None:
    """ST-1 / ST-4 / ST-5 (DP-5): ``hold {next_round?, target_aware?}``: keep the place."""
    if not isinstance(event, Declared) or event.kind != "hold":
        return None
    combat = _require_combat(combat, event.kind)
    ids = rule_ids(combat.ruleset)
    who = ctx.combatant(combat, event.combatant_id)
    ctx.require_owner(who, "hold")
    aware = event.args.get("target_aware")
    if aware is not None:
        ctx.require_gm(f"mark a waiting combatant target-aware ({ids.carry_over})")
    next_round = bool(event.args.get("next_round", False))
    if who.defeated:
        raise RuleViolation(f"{_name(who)} is defeated and cannot hold", rule=ids.hold, path="/combatant_id")
    held = holding(who)
    if (held is not None and held.state == ANY_POINT and next_round and held.since < combat.round
            and who.id not in combat.passed):
        # ST-4 "It may do this again": in the round it may act anywhere, it gives that up too
        again = replace(held, state=GIVING_UP, since=combat.round, gave_up=True,
                        target_aware=bool(aware) or held.target_aware)
        return _set(combat, who.id, hold=again)
    if held is not None and held.state != STEPPED_IN:
        if aware is None or next_round:
            what = "its action this round" if held.state == GIVING_UP else "its action"
            raise RuleViolation(
                f"{_name(who)} is already holding {what} (an unused hold carries into the next "
                f"round, {ids.carry_over})",
                rule=ids.carry_over if held.state == ANY_POINT else ids.hold,
                path="/combatant_id",
            )
        return _set(combat, who.id, hold=replace(held, target_aware=bool(aware)))
    rule = ids.next_round if next_round else ids.hold
    if not combat.started:
        raise RuleViolation(
            f"the combat has not started: {_name(who)} can hold once its round is under way",
            rule=rule, path="/combat_id",
        )
    if who.id in combat.passed:
        raise RuleViolation(
            f"{_name(who)} has already had its turn in round {combat.round}: a hold is declared "
            "on or before the combatant's turn",
            rule=rule, path="/combatant_id",
        )
    new = Hold(
        state=GIVING_UP if next_round else HOLDING,
        since=combat.round,
        original=held.original if held is not None else None,
        target_aware=bool(aware),
        gave_up=next_round,
    )
    combat = _set(combat, who.id, hold=new)
    if combat.current == who.id and new.state == HOLDING:
        rs = get_ruleset(combat.ruleset)
        combat = end_turn(ctx, rs, combat, who.id, skipped=True)
        combat = begin_next_acting(ctx, rs, combat)
    return combat


# ---------------------------------------------------------------- act


def act_action(ctx: Ctx, combat: Combat | None, event: Event) -> Combat | None:
    """ST-1 / ST-2 / ST-3 (DP-5): ``act {after | before | now}``: a holder steps in."""
    if not isinstance(event, Declared) or event.kind != "act":
        return None
    combat = _require_combat(combat, event.kind)
    ids = rule_ids(combat.ruleset)
    kind, anchor_id = _point(event.args)
    who = ctx.combatant(combat, event.combatant_id)
    ctx.require_owner(who, "act")
    if who.defeated:
        raise RuleViolation(f"{_name(who)} is defeated and cannot act", rule=ids.hold, path="/combatant_id")
    held = holding(who)
    if held is None or held.state not in (HOLDING, ANY_POINT):
        if held is not None and held.state == GIVING_UP:
            raise RuleViolation(
                f"{_name(who)} gave up its action in round {held.since}: it may step in from "
                f"round {held.since + 1}",
                rule=ids.next_round, path="/combatant_id",
            )
        raise RuleViolation(
            f"{_name(who)} is not holding: declare hold first, then act",
            rule=ids.hold, path="/combatant_id",
        )
    rs = get_ruleset(combat.ruleset)
    if kind == "now":
        return _act_now(ctx, rs, combat, who, held)
    anchor = ctx.combatant(combat, anchor_id, f"/args/{kind}")
    _check_anchor(combat, who, anchor, kind, ids)
    assert anchor.score is not None
    score = anchor.score - 1 if kind == "after" else anchor.score + 1
    interrupt = kind == "before" and combat.current == anchor.id
    combat = _step_in(rs, combat, who, held, score, (kind, anchor.id))
    if interrupt:  # ST-2 ruling: the anchor is interrupted as it begins; its turn follows
        combat = begin_turn(ctx, rs, combat, who.id)
    return combat


def _point(args: Mapping[str, Any]) -> tuple[str, str | None]:
    given = [k for k in ("after", "before", "now") if k in args]
    if len(given) != 1:
        raise InvalidMessage(
            "act needs exactly one of after, before or now", path="/args"
        )
    kind = given[0]
    if kind == "now":
        if args["now"] is not True:
            raise InvalidMessage("now must be true", path="/args/now")
        return kind, None
    if not isinstance(args[kind], str) or not args[kind]:
        raise InvalidMessage(f"{kind} must be a combatant id", path=f"/args/{kind}")
    return kind, args[kind]


def _check_anchor(
    combat: Combat, who: Combatant, anchor: Combatant, kind: str, ids: HoldRuleIds
) -> None:
    rule = ids.hold if kind == "after" else ids.interrupt
    path = f"/args/{kind}"
    if anchor.id == who.id:
        raise RuleViolation(f"{_name(who)} cannot act {kind} itself", rule=rule, path=path)
    if combat.current == who.id:
        raise RuleViolation(
            f"it is {_name(who)}'s turn: step in with act {{now: true}}", rule=rule, path=path
        )
    if is_waiting(anchor):
        raise RuleViolation(
            f"{_name(anchor)} is holding too: step in {kind} it once it has acted",
            rule=rule, path=path,
        )
    if anchor.id in combat.passed:
        hint = "use act {now: true}" if kind == "after" else "an interrupt comes before it ends"
        raise RuleViolation(
            f"{_name(anchor)}'s turn in round {combat.round} is over: {hint}",
            rule=rule, path=path,
        )
    if anchor.score is None:
        raise RuleViolation(
            f"{_name(anchor)} has no initiative yet", rule=rule, path=path
        )


def _act_now(ctx: Ctx, rs: Ruleset, combat: Combat, who: Combatant, held: Hold) -> Combat:
    """Right after the turn in progress; with none in progress, at once (end of the order)."""
    current = combat.current
    if current == who.id:  # the GM moved back to the holder: it simply acts in its turn
        return _set(combat, who.id, hold=replace(held, state=STEPPED_IN, point=None))
    if current is not None:
        anchor = combat.combatants[current]
        score = anchor.score - 1 if anchor.score is not None else who.score
        return _step_in(rs, combat, who, held, score, ("after", current))
    others = [c for c in combat.order if c != who.id]
    last = combat.combatants[others[-1]].score if others else None
    score = last - 1 if last is not None else who.score
    combat = _step_in(rs, combat, who, held, score, ("after", others[-1]) if others else None)
    return begin_turn(ctx, rs, combat, who.id)


def _step_in(
    rs: Ruleset,
    combat: Combat,
    who: Combatant,
    held: Hold,
    score: float | None,
    point: tuple[str, str] | None,
) -> Combat:
    """Give the holder its new score and place, and take it off the turns already over."""
    stepped = replace(held, state=STEPPED_IN, point=point)
    combat = _set(combat, who.id, score=score, hold=stepped)
    order = [c for c in combat.order if c != who.id]
    at = _position(rs, combat, order, who.id, point) if point is not None else len(order)
    order.insert(at, who.id)
    return replace(combat, order=tuple(order), passed=combat.passed - {who.id})


def _position(
    rs: Ruleset, combat: Combat, order: list[str], who: str, point: tuple[str, str]
) -> int:
    """Index in ``order`` (without ``who``) for the point; ST-3 among holders at that point."""
    kind, anchor = point

    def at_point(cid: str) -> bool:
        held = holding(combat.combatants[cid])
        return held is not None and held.state == STEPPED_IN and held.point == point

    def started(cid: str) -> bool:
        return cid in combat.passed or cid == combat.current

    def first(a: str, b: str) -> bool:  # the tie rule (ST-3): the ruleset's own sort
        return rules_sort(combat, rs.sort_key, (a, b))[0] == a

    if kind == "after":
        at = order.index(anchor) + 1
        # past those already there that go first, or whose turn has begun
        while at < len(order) and at_point(order[at]) and (
            started(order[at]) or first(order[at], who)
        ):
            at += 1
        return at
    at = order.index(anchor)
    # back over those already there that go after it and have not begun
    while at > 0 and at_point(order[at - 1]) and not started(order[at - 1]) and (
        first(who, order[at - 1])
    ):
        at -= 1
    return at


# ---------------------------------------------------------------- bookkeeping


def hold_carry_over(ctx: Ctx, combat: Combat | None, event: Event) -> Combat | None:
    """ST-4 / ST-5 (DP-5) at a round start: an unused hold carries over and works as ST-4
    (act at any point); a hold used from ANY_POINT returns to the original score; an ST-1/ST-2
    step-in keeps its new score for the rest of the fight."""
    if combat is None or not isinstance(event, RoundStarted):
        return None
    changed: dict[str, Combatant] = {}
    for c in combat.combatants.values():
        held = holding(c)
        if held is None:
            continue
        if held.state == STEPPED_IN:
            score = held.original if held.original is not None else c.score
            changed[c.id] = replace(c, hold=None, score=score)
            continue
        original = held.original if held.original is not None else c.score
        carried = replace(held, state=ANY_POINT, original=original, point=None)
        changed[c.id] = replace(c, hold=carried)
        if held.state == HOLDING:
            ctx.notice(
                "hold.carried_over",
                f"{_name(c)} still holds: in round {event.round} it may step in at any point",
                combatant_id=c.id, round=event.round,
            )
    if not changed:
        return None
    return replace(combat, combatants={**combat.combatants, **changed})


def hold_rescored(ctx: Ctx, combat: Combat | None, event: Event) -> Combat | None:
    """A GM's number or a new roll for a holder: that number is the one to return to, and a
    step-in's return to an older score is dropped (the GM's edit wins)."""
    if combat is None or not isinstance(event, (ScoreSet, Rolled)) or event.combatant_id is None:
        return None
    c = combat.combatants.get(event.combatant_id)
    held = holding(c) if c is not None else None
    if c is None or held is None:
        return None
    if held.state == STEPPED_IN:
        return _set(combat, c.id, hold=replace(held, original=None))
    if held.original is not None:
        return _set(combat, c.id, hold=replace(held, original=c.score))
    return None


HOLD_INTENTS = {"hold": hold_action, "act": act_action}
HOLD_RULES = (hold_carry_over, hold_rescored)


# ---------------------------------------------------------------- the plan


def hold_entry(combat: Combat, combatant: Combatant, entry: Entry) -> Entry:
    """``entry`` (the ruleset's own view) with the hold merged in: acts, tags, detail, rules."""
    held = holding(combatant)
    if held is None:
        return entry
    ids = rule_ids(combat.ruleset)
    acts, tags, rules = entry.acts, list(entry.tags), list(entry.rules)
    detail = dict(entry.detail)
    if held.state in (HOLDING, ANY_POINT):
        acts = entry.acts if entry.acts == "none" else "held"
        tags.append("held")
        detail["held_since"] = held.since
        if held.state == ANY_POINT:
            tags.append("any_point")
            rules.append(ids.next_round if held.gave_up else ids.carry_over)
        else:
            rules.append(ids.hold)
    elif held.state == GIVING_UP:
        acts = entry.acts if entry.acts == "none" else "movement_only"
        tags.append("gave_up_action")
        rules.append(ids.next_round)
    else:
        tags.append("stepped_in")
        if held.point is not None:
            detail["stepped_in"] = {held.point[0]: held.point[1]}
            rules.append(ids.hold if held.point[0] == "after" else ids.interrupt)
    if held.target_aware:
        tags.append("target_aware")
    if held.original is not None:
        detail["returns_to"] = held.original
    rules = list(dict.fromkeys(rules))
    return replace(entry, acts=acts, tags=tuple(tags), detail=detail, rules=tuple(rules))
