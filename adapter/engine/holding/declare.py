"""Hold and act: the ``hold`` and ``act`` intents (ST-1 … ST-5, DP-5), given the ruleset's rule
ids last (:class:`.HoldMechanics` binds them)."""

from __future__ import annotations

from msgspec.structs import replace

from ...errors import RuleViolation
from .. import messages
from ..context import Ctx
from ..model import ANY_POINT, GIVING_UP, HOLDING, STEPPED_IN, Combat, Combatant, Hold
from ..order import place, ranking
from ..ruleset import HoldRuleIds, SortKey
from ..turns import begin_next_acting, begin_turn, end_turn
from .state import _name, _set, at_point, is_waiting

# ---------------------------------------------------------------- hold


def hold_action(ctx: Ctx, combat: Combat, intent: messages.Hold, ids: HoldRuleIds) -> Combat:
    """ST-1 / ST-4 / ST-5 (DP-5): ``hold {next_round?, target_aware?}``: keep the place."""
    who = ctx.owned(combat, intent.combatant_id, "hold")
    aware = intent.target_aware
    if aware is not None:
        ctx.require_gm("mark a waiting combatant target-aware")
    next_round = intent.next_round
    if who.defeated:
        raise RuleViolation(f"{_name(who)} is defeated and cannot hold", rule=ids.hold, field="combatant_id")
    held = who.hold
    if aware is not None and (held is None or held.state == STEPPED_IN):
        # ST-5: "if the target knows of the sniper": it qualifies a character who waits
        raise RuleViolation(
            f"{_name(who)} is not waiting with a held action: target_aware marks a holder "
            f"({ids.carry_over}); declare hold first",
            rule=ids.carry_over, field="target_aware",
        )
    if held is not None and held.state != STEPPED_IN:
        if next_round:
            return _carry_into_next_round(ctx, combat, who, held, aware, ids)
        if aware is None:
            rule = ids.carry_over if held.state == ANY_POINT else ids.hold
            what = "its action this round" if held.state == GIVING_UP else "its action"
            raise RuleViolation(
                f"{_name(who)} is already holding {what} ({rule}): step in with act, or carry "
                "it into the next round with hold {next_round: true}",
                rule=rule, field="combatant_id",
            )
        return _set(combat, who.id, hold=replace(held, target_aware=aware))
    for refused, field, text in (
        (not combat.started, "combat_id",
         f"the combat has not started: {_name(who)} can hold once its round is under way"),
        (held is not None and next_round, "next_round",  # STEPPED_IN: its held action is used
         f"{_name(who)} has stepped in and acted in round {combat.round}: it has no action left to give up "
         "this round"),
        (who.id in combat.passed, "combatant_id",
         f"{_name(who)} has already had its turn in round {combat.round}: a hold is declared on or before the "
         "combatant's turn"),
    ):
        if refused:
            raise RuleViolation(text, rule=ids.next_round if next_round else ids.hold, field=field)
    new = Hold(
        state=GIVING_UP if next_round else HOLDING,
        since=combat.round,
        original=held.original if held is not None else None,
        target_aware=bool(aware),
        gave_up=next_round,
        # holding again where it stepped in: it holds at that place (DP-5 reads it)
        point=held.point if held is not None else None,
    )
    combat = _set(combat, who.id, hold=new)
    if combat.current == who.id and new.state == HOLDING:
        combat = end_turn(ctx, combat, who.id, skipped=True)
        combat = begin_next_acting(ctx, combat)
    return combat


def _carry_into_next_round(
    ctx: Ctx, combat: Combat, who: Combatant, held: Hold, aware: bool | None, ids: HoldRuleIds
) -> Combat:
    """ST-4 from a hold: a holder (this round's, or carried over, ST-5) gives up this round's
    action and may act at any point of the next (it "may do this again"). It keeps the
    movement the text grants: if its place is already behind, its movement comes right after
    the turn in progress (at once when no turn is in progress)."""
    if held.state == GIVING_UP:
        raise RuleViolation(
            f"{_name(who)} already gave up its action in round {combat.round} ({ids.next_round})",
            rule=ids.next_round, field="next_round",
        )
    marked = aware if aware is not None else held.target_aware
    giving_up = replace(held, state=GIVING_UP, since=combat.round, gave_up=True,
                        target_aware=marked, point=None)
    combat = _set(combat, who.id, hold=giving_up)
    if who.id not in combat.passed or combat.current == who.id:
        return combat
    at = ("after", combat.current) if combat.current is not None else None
    combat = replace(combat, order=place(combat.order, who.id, at), passed=combat.passed - {who.id})
    return combat if at is not None else begin_turn(ctx, combat, who.id)


# ---------------------------------------------------------------- act


def act_action(ctx: Ctx, combat: Combat, intent: messages.Act, ids: HoldRuleIds) -> Combat:
    """ST-1 / ST-2 / ST-3 (DP-5): ``act {after | before | now}``: a holder steps in."""
    who = ctx.owned(combat, intent.combatant_id, "act")
    if who.defeated:
        raise RuleViolation(f"{_name(who)} is defeated and cannot act", rule=ids.hold, field="combatant_id")
    held = who.hold
    if held is None or held.state not in (HOLDING, ANY_POINT):
        if held is not None and held.state == GIVING_UP:
            raise RuleViolation(
                f"{_name(who)} gave up its action in round {held.since}: it may step in from "
                f"round {held.since + 1}",
                rule=ids.next_round, field="combatant_id",
            )
        raise RuleViolation(
            f"{_name(who)} is not holding: declare hold first, then act",
            rule=ids.hold, field="combatant_id",
        )
    point = intent.point
    if point is None:
        return _act_now(ctx, combat, who, held)
    kind, anchor_id = point
    anchor = ctx.combatant(combat, anchor_id, kind)
    _check_anchor(combat, who, anchor, kind, ids)
    assert anchor.score is not None
    score = anchor.score - 1 if kind == "after" else anchor.score + 1
    sharing = combat.current if kind == "before" and _moment_open(combat, anchor.id) else None
    interrupt = kind == "before" and combat.current == anchor.id
    combat = _step_in(ctx.ruleset.sort_key, combat, who, held, score, (kind, anchor.id))
    if sharing is not None and combat.order.index(who.id) < combat.order.index(sharing):
        # ST-3: it shares the open moment and goes first by the tie rule: the first
        # interrupter's turn, not yet over, waits right after it
        combat = _set(combat, sharing, hold=replace(combat.combatants[sharing].hold or held,
                                                    interrupting=False))
        interrupt = True
    if interrupt:  # ST-2 ruling: the anchor is interrupted as it begins; its turn follows
        combat = _set(combat, who.id, hold=replace(combat.combatants[who.id].hold or held,
                                                   interrupting=True))
        combat = begin_turn(ctx, combat, who.id)
    return combat


def _moment_open(combat: Combat, anchor: str) -> bool:
    """ST-3 **ruling**: the moment before ``anchor`` acts, opened by an interrupt while its
    turn was beginning, stays open while the turn pointer is still on that interrupter (the
    pointer moving on closes it); everyone who interrupts ``anchor`` meanwhile shares it."""
    return combat.current is not None and _interrupting(combat, combat.current, anchor)


def _interrupting(combat: Combat, cid: str, anchor: str | None = None) -> bool:
    held = combat.combatants[cid].hold
    return (held is not None and held.state == STEPPED_IN and held.interrupting
            and (anchor is None or held.point == ("before", anchor)))


def _check_anchor(
    combat: Combat, who: Combatant, anchor: Combatant, kind: str, ids: HoldRuleIds
) -> None:
    after = kind == "after"
    when = "once it has acted" if after else "once it has stepped in, until its turn ends"
    hint = "use act {now: true}" if after else "an interrupt comes before it ends"
    for refused, text in (
        (anchor.id == who.id, f"{_name(who)} cannot act {kind} itself"),
        (combat.current == who.id, f"it is {_name(who)}'s turn: step in with act {{now: true}}"),
        (is_waiting(anchor),
         f"{_name(anchor)} is holding too and has no place to step in {kind} yet: step in {kind} it {when}"),
        (anchor.id in combat.passed, f"{_name(anchor)}'s turn in round {combat.round} is over: {hint}"),
        (anchor.score is None, f"{_name(anchor)} has no initiative yet"),
    ):
        if refused:
            raise RuleViolation(text, rule=ids.hold if after else ids.interrupt, field=kind)


def _act_now(ctx: Ctx, combat: Combat, who: Combatant, held: Hold) -> Combat:
    """Right after the turn in progress; with none in progress, at once (end of the order)."""
    current = combat.current
    if current == who.id:  # the GM moved back to the holder: it simply acts in its turn
        return _set(combat, who.id, hold=replace(held, state=STEPPED_IN, point=None))
    if current is not None:
        anchor = combat.combatants[current]
        score = anchor.score - 1 if anchor.score is not None else who.score
        return _step_in(ctx.ruleset.sort_key, combat, who, held, score, ("after", current))
    others = [c for c in combat.order if c != who.id]
    last = combat.combatants[others[-1]].score if others else None
    score = last - 1 if last is not None else who.score
    combat = _step_in(ctx.ruleset.sort_key, combat, who, held, score, ("after", others[-1]) if others else None)
    return begin_turn(ctx, combat, who.id)


def _step_in(
    sort_key: SortKey,
    combat: Combat,
    who: Combatant,
    held: Hold,
    score: float | None,
    point: tuple[str, str] | None,
) -> Combat:
    """Give the holder its new score and place, and take it off the turns already over."""
    stepped = replace(held, state=STEPPED_IN, point=point)
    combat = _set(combat, who.id, score=score, hold=stepped)
    at = _neighbour(sort_key, combat, who.id, point) if point is not None else None
    return replace(combat, order=place(combat.order, who.id, at), passed=combat.passed - {who.id})


def _neighbour(sort_key: SortKey, combat: Combat, who: str, point: tuple[str, str]) -> tuple[str, str]:
    """Whom to go right after (or right before) for the point: the anchor, or, ST-3, the
    holders already stepped in at that point who go first (or after) by the tie rule."""
    kind, anchor = point
    order = [c for c in combat.order if c != who]

    def there(cid: str) -> bool:
        return at_point(combat.combatants[cid], point)

    def started(cid: str) -> bool:  # an interrupter in an open moment has not begun (ST-3)
        return cid in combat.passed or (cid == combat.current and not _interrupting(combat, cid))

    rank = ranking(combat, sort_key)

    def first(a: str, b: str) -> bool:  # the tie rule (ST-3): the ruleset's own sort
        return rank(a) <= rank(b)

    if kind == "after":
        at = order.index(anchor) + 1
        # past those already there that go first, or whose turn has begun
        while at < len(order) and there(order[at]) and (
            started(order[at]) or first(order[at], who)
        ):
            at += 1
        return "after", order[at - 1]
    at = order.index(anchor)
    # back over those already there that go after it and have not begun
    while at > 0 and there(order[at - 1]) and not started(order[at - 1]) and (
        first(who, order[at - 1])
    ):
        at -= 1
    return "before", order[at]
