"""DP-5, the kept order: the failing example of the random-session property (issue 24), kept.

``dp5_property_failure.json`` holds every draw of the session hypothesis reported with a
random seed (``round 6 does not keep round 5's order``), in order; a step is named by its
function. Replaying it through :func:`play` runs the very same session, with every property
checked after every message (the combatants are named A to H). Its round 5 starts F B C D A
E; C, D and E are one group, E apart from it (it stepped in elsewhere in round 4). A (a hold
carried from round 4) steps in before D; E steps in right after A ("now", during A's turn),
so between C and D, then holds again and is still holding when the round ends: F B C A E G
D H (G and H joined). Round 6 starts G F B C D E H A: G and H by DP-2 (G's 2 successes
first; H's 0 before A's −1), A back after D where round 5 started it (a step-in from a
carried hold is for one round), C and D together (DP-6) and E right after them: it stood
between two members, and no order keeps it between them. The property asked for E before D;
it now expects whoever stood between a group's members right after the group (right before
it, had it stepped in before a member), as docs/rules.md (DP-5) says, and compares every
pair of that order.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.rulesets import test_session_properties as props

DRAWS = Path(__file__).with_name("dp5_property_failure.json")


class Replayed:
    """Stands in for hypothesis's ``st.data()``: each draw gives the next recorded value."""

    def __init__(self, draws: list[Any]) -> None:
        self.draws = draws
        self.used = 0

    def draw(self, strategy: object) -> Any:
        value = self.draws[self.used]
        self.used += 1
        if isinstance(value, str) and value.endswith("_step"):
            return getattr(props, value)
        return value


def test_DP_5_the_round_6_failure_found_with_a_random_seed_keeps_its_properties() -> None:
    data = Replayed(json.loads(DRAWS.read_text(encoding="utf-8")))
    t = props.play("dice-pool", data)  # type: ignore[arg-type]
    assert data.used == len(data.draws)  # the same session, to its last draw
    round_6 = next(p for p in t.plans if p["round"] == 6)
    assert [e["combatant_id"][3] for e in round_6["order"]] == list("GFBCDEHA")
    props.check_store(t)
