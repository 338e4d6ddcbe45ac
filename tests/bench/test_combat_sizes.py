"""``bench --combat-sizes``: the combat it replays is played as at a table (nothing refused,
the turn following the sidecar's plan), and the report names every size and the ratio."""

from __future__ import annotations

import orjson

from adapter.benchkit.replayed import measure, recording, table


def test_the_recorded_combat_is_accepted_and_its_turns_follow_the_plan() -> None:
    got = measure(25, 30)
    assert got["refused"] == 0
    assert got["combatants"] == 25 and got["turns"] > 0
    hooks = [orjson.loads(line)["data"] for line in recording(25, 30)[1:]]
    turns = [h for h in hooks if h["hook"] in ("combatTurn", "combatRound")]
    assert len({h["current"]["combatantId"] for h in turns}) == 25  # each has its turn once a round


def test_the_report_gives_each_size_and_the_ratio() -> None:
    rows = [{"combatants": n, "hook_bytes": 10 * n, "us_per_turn": float(n)} for n in (5, 200)]
    text = table({"ruleset": "balanced-d20", "repeats": 1, "sizes": rows, "ratio_largest_to_smallest": 40.0})
    assert "ratio 200/5: 40.0" in text and "200" in text.splitlines()[-2]
