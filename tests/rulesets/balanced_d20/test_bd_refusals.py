"""Every refusal of the balanced-d20 ruleset: the rule id and path expected, and message,
rule id and path agreeing (issue 11)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from msgspec.structs import replace

from adapter.errors import SidecarError
from adapter.rulesets.balanced_d20.state import fighter as state_of
from adapter.rulesets.balanced_d20.state import update_fighter
from tests.rulesets.balanced_d20.bd_table import COMBAT, GM, Table, d20, fighter
from tests.rulesets.refusals import ADAPTER, assert_reaches, expect, raise_site
from tests.support.table import Message as Sent

ROGUE, ORC, CLUMSY, FALLEN, LATE, WIZ = (
    "cmbRogue00000001", "cmbOrc0000000001", "cmbClumsy0000001", "cmbFallen0000001",
    "cmbLate000000001", "cmbWizard0000001")
P_ROGUE, P_WIZ = "playerRogue00001", "playerWizard0001"
ROGUE_ACTOR = f"act-{ROGUE}"
Message = Callable[[Table], Sent]


def table(**settings: Any) -> Table:
    t = Table(fighter(ROGUE, "Rogue", dex=4, int_=2, owners=(P_ROGUE,),
                      proficient=("sleight_of_hand",)),
              fighter(ORC, "Orc", dex=1, npc=True),
              fighter(CLUMSY, "Clumsy", dex=-5, npc=True),
              fighter(FALLEN, "Fallen", dex=1, npc=True, defeated=True),
              fighter(LATE, "Late", dex=0, npc=True),
              fighter(WIZ, "Wizard", dex=2, int_=4, owners=(P_WIZ,)),
              settings=settings)
    t.create()
    return t


def fight() -> Table:
    """Rogue 18, Wizard 16, Orc 11, Clumsy 5, Fallen 4; Late has not rolled; the rogue acts."""
    t = table()
    for cid, natural, mod in ((ROGUE, 14, 4), (WIZ, 14, 2), (ORC, 10, 1), (CLUMSY, 10, -5),
                              (FALLEN, 3, 1)):
        t.roll(cid, natural, mod)
    t.start()
    return t


def readied(mode: str, then: Callable[[Table, str], Any] | None = None) -> Callable[[], Table]:
    """The rogue readies against the orc on its turn; ``then`` goes on from there."""
    def setup() -> Table:
        t = fight()
        t.intent("readied.declare", ROGUE, user=P_ROGUE, mode=mode, trigger="the orc moves",
                 action="stab", target_id=ORC)
        if then is not None:
            then(t, t.notices()[0]["readied_id"])
        return t
    return setup


def trigger(t: Table, rid: str) -> None:
    t.intent("readied.trigger", ROGUE, user=P_ROGUE, readied_id=rid)


def lose_the_check(t: Table, rid: str) -> None:
    t.turn_to(ORC)
    trigger(t, rid)
    check = t.prompts("opposed_check")[0]["prompt_id"]
    t.intent("opposed.result", ROGUE, prompt_id=check, actor_total=5, target_total=10)


def the_check_is_pending(t: Table, rid: str) -> None:
    t.turn_to(ORC)
    trigger(t, rid)


def check_id(t: Table) -> str:
    return str(next(iter(t.world.prompts)))


def readied_gone(t: Table, rid: str) -> None:
    """A state no message reaches today: the check's readied action is no longer there."""
    the_check_is_pending(t, rid)
    combat = update_fighter(t.world.combats[COMBAT], ROGUE, readied=None)
    t.world = replace(t.world, combats={COMBAT: combat})


def wizard_offered(*, rerolled: bool) -> Callable[[], Table]:
    def setup() -> Table:
        t = table(auto_approve_rerolls=True)
        t.roll(WIZ, 3, 2)
        offer = t.prompts("reroll")[0]["prompt_id"]
        if rerolled:
            t.intent("reroll.decide", WIZ, user=P_WIZ, prompt_id=offer, accept=True)
            t.roll(WIZ, 9, 2, reroll_of=offer)
        return t
    return setup


def offer_id(t: Table) -> str:
    combat = t.world.combats[COMBAT]
    reroll = state_of(combat.combatants[WIZ]).reroll
    assert reroll is not None
    return str(reroll.offer_id)


def start_watching(**changes: Any) -> Message:
    args: dict[str, Any] = {"actor_id": ROGUE_ACTOR, "token_id": f"tok-{ROGUE}",
                            "owners": [P_ROGUE], "watching": [f"tok-{ORC}"], "sees": True,
                            "weapon_ready": True, **changes}
    return lambda t: t.intent_msg("ready.start", user=P_ROGUE, combat=False, **args)


def roll_with(terms: list[dict[str, Any]]) -> Message:
    base = d20(10, 4)
    return lambda t: t.roll_msg(ROGUE, 10, roll={**base, "terms": terms})


D20 = d20(10)["terms"][0]
KEEPS_TWO = {**D20, "number": 2, "results": [{"result": 10, "active": True},
                                             {"result": 12, "active": True}]}


def dash(cid: str, amount: Any, user: str = GM) -> Message:
    return lambda t: t.intent_msg("dash", cid, user=user, amount=amount)


# id, setup, the refused message, rule, path
CASES: list[tuple[str, Callable[[], Table], Message, str, str | None]] = [
    ("BI-1-no-d20", table, roll_with([{**D20, "faces": 6}]), "BI-1", "/roll/roll"),
    ("BI-1-two-d20-terms", table, roll_with([D20, D20]), "BI-1", "/roll/roll"),
    ("BI-1-two-d20s-kept", table, roll_with([KEEPS_TWO]), "BI-1", "/roll/roll"),
    ("BI-1-not-a-face", table, roll_with([{**D20, "results": [{"result": 25}]}]), "BI-1",
     "/roll/roll"),
    ("BI-2-a-players-second-roll", fight, lambda t: t.roll_msg(ROGUE, 19, 4, user=P_ROGUE),
     "BI-2", "/roll"),
    ("BI-2-a-second-reroll", wizard_offered(rerolled=True),
     lambda t: t.roll_msg(WIZ, 5, 2, reroll_of=offer_id(t)), "BI-2", "/roll/reroll_of"),
    ("BI-2-a-reroll-not-approved", wizard_offered(rerolled=False),
     lambda t: t.roll_msg(WIZ, 5, 2, reroll_of=offer_id(t)), "BI-2", "/roll/reroll_of"),
    ("BI-3-in-a-started-combat", fight, start_watching(), "BI-3", "/args/actor_id"),
    ("BI-3-watching-nobody", table, start_watching(watching=[]), "BI-3", "/args/watching"),
    ("BI-3-not-seeing", table, start_watching(sees=False), "BI-3", "/args/sees"),
    ("BI-3-no-weapon-ready", table, start_watching(weapon_ready=False), "BI-3",
     "/args/weapon_ready"),
    ("BI-3-confirming-nothing", table,
     lambda t: t.intent_msg("ready.confirm", combat=False, actor_id=ROGUE_ACTOR), "BI-3",
     "/args/actor_id"),
    ("BI-3-confirming-while-fighting", fight,
     lambda t: t.intent_msg("ready.confirm", combat=False, actor_id=ROGUE_ACTOR), "BI-3",
     "/args/actor_id"),
    ("BI-3-a-reaction-before-the-first-turn", fight,
     lambda t: t.intent_msg("reaction.use", ORC), "BI-3", "/combatant_id"),
    ("BI-4-no-room-to-dash", fight, dash(CLUMSY, 1), "BI-4", "/args/amount"),
    ("BI-4-above-5-plus-dex", fight, dash(ORC, 7), "BI-4", "/args/amount"),
    ("BI-4-defeated", fight, dash(FALLEN, 2), "BI-4", "/combatant_id"),
    ("BI-4-no-initiative", fight, dash(LATE, 2), "BI-4", "/combatant_id"),
    ("BI-4-in-its-own-turn", fight, dash(ROGUE, 2, P_ROGUE), "BI-4", "/combatant_id"),
    ("BI-4-twice-a-round", lambda: _dashed(fight()), dash(ORC, 1), "BI-4", "/args/amount"),
    ("BI-5-preemptive-without-the-skills", fight,
     lambda t: t.intent_msg("readied.declare", ORC, mode="preemptive", trigger="x", action="y"),
     "BI-5", "/args/mode"),
    ("BI-5-not-its-turn", fight,
     lambda t: t.intent_msg("readied.declare", ORC, mode="standard", trigger="x", action="y"),
     "BI-5", "/combatant_id"),
    ("BI-5-a-second-readied-action", readied("standard"),
     lambda t: t.intent_msg("readied.declare", ROGUE, user=P_ROGUE, mode="standard",
                            trigger="x", action="y"), "BI-5", "/combatant_id"),
    ("BI-5-an-unknown-readied-action", fight,
     lambda t: t.intent_msg("readied.trigger", ROGUE, readied_id="readied-9.9"), "BI-5",
     "/args/readied_id"),
    ("BI-5-kept-until-the-turn-ends", readied("preemptive", lose_the_check),
     lambda t: t.intent_msg("readied.trigger", ROGUE, readied_id=_readied(t)), "BI-5",
     "/args/readied_id"),
    ("BI-5-triggered-twice", readied("standard", trigger),
     lambda t: t.intent_msg("readied.trigger", ROGUE, readied_id=_readied(t)), "BI-5",
     "/args/readied_id"),
    ("BI-5-a-check-whose-action-is-gone", readied("preemptive", readied_gone),
     lambda t: t.intent_msg("opposed.result", ROGUE, prompt_id=check_id(t), actor_total=9,
                            target_total=3), "BI-5", "/args/prompt_id"),
]

# What the intent's schema refuses before any rule sees it (the rules do not check it again,
# issue 12): id, setup, the refused message, path
SCHEMA_CASES: list[tuple[str, Callable[[], Table], Message, str]] = [
    ("BI-4-a-fraction", fight, dash(ORC, 2.5), "/args/amount"),
    ("BI-5-another-mode", fight,
     lambda t: t.intent_msg("readied.declare", ROGUE, user=P_ROGUE, mode="sideways",
                            trigger="x", action="y"), "/args/mode"),
    ("BI-5-a-total-that-is-not-a-number", readied("preemptive", the_check_is_pending),
     lambda t: t.intent_msg("opposed.result", ROGUE, prompt_id=check_id(t), actor_total="9",
                            target_total=3), "/args/actor_total"),
]
#: rule checks of what a schema already refuses: none left (the rules read typed fields)
SCHEMA_GUARDED: tuple[str, ...] = ()


def _dashed(t: Table) -> Table:
    t.intent("dash", ORC, amount=2)
    return t


def _readied(t: Table) -> str:
    r = state_of(t.world.combats[COMBAT].combatants[ROGUE]).readied
    assert r is not None
    return str(r.readied_id)


def refuse(t: Table, message: Message) -> tuple[pytest.ExceptionInfo[SidecarError], Any]:
    t.trace_raises = True
    with pytest.raises(SidecarError) as info:
        t.send(message(t))
    return info, t.sent[-1]["data"]


@pytest.mark.parametrize(("setup", "message", "rule", "path"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_a_refusal_names_its_rule_and_path_and_they_agree_with_the_message(
    setup: Callable[[], Table], message: Message, rule: str, path: str | None,
) -> None:
    info, sent = refuse(setup(), message)
    expect(info, sent, "balanced-d20", "rule_violation", rule, path)


@pytest.mark.parametrize(("setup", "message", "path"), [c[1:] for c in SCHEMA_CASES],
                         ids=[c[0] for c in SCHEMA_CASES])
def test_a_malformed_intent_is_refused_by_its_schema_at_the_same_path(
    setup: Callable[[], Table], message: Message, path: str,
) -> None:
    info, sent = refuse(setup(), message)
    expect(info, sent, "balanced-d20", "invalid_message", None, path)


def test_the_table_reaches_every_rule_violation_of_the_ruleset() -> None:
    hit = {raise_site(refuse(setup(), message)[0]) for _, setup, message, *_ in CASES}
    assert_reaches(hit, *(ADAPTER / "rulesets" / "balanced_d20").glob("*.py"),
                   schema_guarded=SCHEMA_GUARDED)
