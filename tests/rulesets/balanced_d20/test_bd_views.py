"""balanced-d20's plan views are given again for the same combatant in the same round, and
described afresh for a changed combatant or round; the check the test suite turns on catches a
view given again that a fresh one contradicts."""

from __future__ import annotations

import importlib

import pytest

from adapter.engine.model import Combat, Combatant
from adapter.rulesets.balanced_d20.state import Fighter

views = importlib.import_module("adapter.rulesets.balanced_d20.describe")


def ready_fighter() -> Combatant:
    """Ready to strike, its first turn taken (BI-3's tags then hold through round 1 only)."""
    return Combatant(id="cbtRogue00000001", name="Rogue", score=17.0,
                     ext=Fighter(base=17.0, ready_to_strike=True, watched=("cbtOrc0000000001",),
                                 first_turn_started=True))


def test_the_same_combatant_in_the_same_round_gets_the_same_view() -> None:
    rogue = ready_fighter()
    combat = Combat(id="cmbViews00000001", ruleset="balanced-d20", combatants={rogue.id: rogue}, round=1)
    first = views.describe(combat, rogue)
    assert views.describe(combat, rogue) is first
    assert "ready_to_strike" in first.tags


def test_a_new_round_or_a_changed_combatant_is_described_afresh() -> None:
    rogue = ready_fighter()
    combat = Combat(id="cmbViews00000001", ruleset="balanced-d20", combatants={rogue.id: rogue}, round=1)
    assert "ready_to_strike" in views.describe(combat, rogue).tags
    later = Combat(id="cmbViews00000001", ruleset="balanced-d20", combatants={rogue.id: rogue}, round=2)
    assert "ready_to_strike" not in views.describe(later, rogue).tags  # BI-3 holds in round 1 only
    defeated = Combatant(**{**rogue.__dict__, "defeated": True})
    assert views.describe(later, defeated).acts == "none"


def test_the_check_catches_a_view_given_again_that_is_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    rogue = ready_fighter()
    combat = Combat(id="cmbViews00000001", ruleset="balanced-d20", combatants={rogue.id: rogue}, round=1)
    stale = views.view_of(Combat(id="x", ruleset="balanced-d20", round=2), rogue)
    monkeypatch.setitem(views._views, id(rogue), (rogue, 1, stale))
    assert views.CHECK  # on in every test (tests/conftest.py)
    with pytest.raises(AssertionError, match="stale balanced-d20 view"):
        views.describe(combat, rogue)
