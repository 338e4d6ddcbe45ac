"""The v13 sample payloads replay under foundry-core to the order Foundry itself shows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from adapter.replay import Replay, replay_lines
from adapter.rulesets import RULESETS
from tests.foundry import foundry_sort

HERE = Path(__file__).parent
# a copy of ../shared/research/foundry-sample-payloads.json, so the repository tests alone
SAMPLE = json.loads((HERE / "fixtures" / "foundry-sample-payloads.json").read_text())
RECORDING = HERE / "recordings" / "foundry-core" / "FC-sample-v13.jsonl"


def plans() -> list[dict[str, Any]]:
    lines = RECORDING.read_text().splitlines()
    return [o["data"] for o in replay_lines(lines, Replay(rulesets=RULESETS)) if o["type"] == "emit" and o["event"] == "plan"]


def test_started_combat_shows_the_samples_turn_order() -> None:
    expected = SAMPLE["combat_toObject_started"]["derived_not_in_toObject"]["turns"]
    round_two = [p for p in plans() if p["round"] == 2]
    assert [e["combatant_id"] for e in round_two[0]["order"]] == expected
    assert round_two[0]["current"] == expected[0]


def test_late_goblin_sorts_by_id_above_the_boss_as_foundry_does() -> None:
    final = plans()[-1]
    # Foundry's own sort of the sample's initiatives after the new goblin rolled 17
    sample = {c["_id"]: c["initiative"] for c in SAMPLE["combat_toObject_started"]["value"]["combatants"]}
    sample["Rf6Nc2XwQ8kT3mHa"] = SAMPLE["updateCombatant_initiative"]["args"][1]["initiative"]
    assert [e["combatant_id"] for e in final["order"]] == foundry_sort(sample)
    # the turn in progress stays Brother Tolm's, as Foundry's combatTurn keeps it
    assert final["current"] == "e5NbG7uK2pXa9RsD"


def test_defeated_archer_is_skipped_and_hidden_figure_keeps_its_turn() -> None:
    final = plans()[-1]
    entries = {e["combatant_id"]: e for e in final["order"]}
    assert entries["Jq4Tm8vC1zYh6LwF"]["acts"] == "none"
    assert entries["Wz3Lr9QyT6bJ1cVe"]["acts"] == "full"
