"""balanced-d20's plan views: the usual combatant (nothing on it but its roll and its
reaction) takes a view built once; any combatant, in any round, looks as described in full."""

from __future__ import annotations

import importlib

from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.engine.model import Combat, Combatant
from adapter.rulesets.balanced_d20.state import Fighter, Readied, Reroll
from tests.support.examples import examples

views = importlib.import_module("adapter.rulesets.balanced_d20.describe")

REROLL = st.builds(Reroll, offer_id=st.just("offer-1.1"), to=st.just("gm"), formula=st.just("1d20"),
                   natural=st.integers(1, 20),
                   status=st.sampled_from(["offered", "approval", "approved", "declined", "rerolled"]))
READIED = st.builds(Readied, readied_id=st.just("readied-1.1"), mode=st.sampled_from(["standard", "preemptive"]),
                    trigger=st.just("t"), action=st.just("a"), target_id=st.none(),
                    status=st.sampled_from(["waiting", "triggered", "checking", "won", "kept", "due"]))
FIGHTER = st.builds(
    Fighter,
    base=st.none() | st.sampled_from([3.0, 12.0, 25.0]), natural=st.none() | st.integers(1, 20),
    reroll=st.none() | REROLL, dashes=st.sampled_from([(), ((1, 5),), ((2, 3),)]),
    reaction_blocked_through=st.none() | st.integers(0, 3), no_dominance=st.booleans(),
    first_turn_started=st.booleans(), reaction_spent=st.sampled_from([None, "used", "readied"]),
    ready_to_strike=st.booleans(), watched=st.sampled_from([(), ("cbtOrc0000000001",)]),
    readied=st.none() | READIED)
#: most combatants carry nothing special: weight the plain ones in
PLAIN = st.builds(Fighter, base=st.none() | st.just(14.0), first_turn_started=st.booleans(),
                  reaction_spent=st.sampled_from([None, "used"]))


@settings(max_examples=examples(300), deadline=None)
@given(st.none() | PLAIN | FIGHTER, st.booleans(), st.integers(0, 4))
def test_any_combatant_in_any_round_looks_as_described_in_full(f: Fighter | None, defeated: bool, round_: int) -> None:
    c = Combatant(id="cbtRogue00000001", defeated=defeated, ext=f)
    combat = Combat(id="cmbViews00000001", ruleset="balanced-d20", combatants={c.id: c}, round=round_)
    assert views.describe(combat, c) == views.view_of(combat, c)


def test_the_usual_combatant_takes_a_view_built_once() -> None:
    first = Combatant(id="cbtRogue00000001", ext=Fighter(base=14.0, first_turn_started=True))
    other = Combatant(id="cbtOrc0000000001", ext=Fighter(base=9.0, first_turn_started=True))
    combat = Combat(id="cmbViews00000001", ruleset="balanced-d20", round=3)
    assert views.describe(combat, first) is views.describe(combat, other)
    assert views.describe(combat, first).reaction == {"available": True, "reason": "available"}


def test_ready_to_strike_shows_in_round_1_only_once_its_first_turn_is_taken() -> None:
    rogue = Combatant(id="cbtRogue00000001", score=17.0, ext=Fighter(
        base=17.0, ready_to_strike=True, watched=("cbtOrc0000000001",), first_turn_started=True))
    combat = Combat(id="cmbViews00000001", ruleset="balanced-d20", combatants={rogue.id: rogue}, round=1)
    assert "ready_to_strike" in views.describe(combat, rogue).tags
    later = Combat(id="cmbViews00000001", ruleset="balanced-d20", combatants={rogue.id: rogue}, round=2)
    assert "ready_to_strike" not in views.describe(later, rogue).tags  # BI-3 holds in round 1 only
