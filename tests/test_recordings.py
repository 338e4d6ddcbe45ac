"""Every recording under tests/recordings replays to its golden output.

Beyond the golden comparison, every output must pass its schema and every plan's order
must be what Foundry's own sort makes of the plan's initiative numbers.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from adapter import protocol
from adapter.cli import parser, run
from adapter.replay import Replay, replay_lines
from adapter.rulesets import RULESETS
from tests.foundry import foundry_sort

RECORDINGS = Path(__file__).parent / "recordings"
CASES = sorted(p for p in RECORDINGS.rglob("*.jsonl") if not p.name.endswith(".golden.jsonl"))


def golden_of(path: Path) -> Path:
    return path.with_name(path.name.removesuffix(".jsonl") + ".golden.jsonl")


def test_there_are_recordings_for_every_ruleset() -> None:
    rulesets = {p.parent.name for p in CASES}
    assert "foundry-core" in rulesets
    assert all(golden_of(p).exists() for p in CASES), [p.name for p in CASES if not golden_of(p).exists()]


@pytest.mark.parametrize("recording", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_recording_replays_to_its_golden_output(recording: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    args = parser().parse_args(["replay", str(recording), "--expect", str(golden_of(recording))])
    code = run(args, out, err)
    assert code == 0, err.getvalue()


@pytest.mark.parametrize("recording", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_recording_outputs_pass_their_schemas_and_foundry_sort(recording: Path) -> None:
    outputs = list(replay_lines(recording.read_text(encoding="utf-8").splitlines(), Replay(rulesets=RULESETS)))
    assert outputs
    for item in outputs:
        if item["type"] == "ack":
            protocol.check_outbound("ack", item["data"])
            continue
        protocol.check_outbound(item["event"], item["data"])
        if item["event"] == "plan":
            plan = item["data"]
            values = {e["combatant_id"]: e["initiative"] for e in plan["order"]}
            assert foundry_sort(values) == [e["combatant_id"] for e in plan["order"]], plan
            if plan["current"] is not None:
                assert plan["order"][plan["turn"]]["combatant_id"] == plan["current"]
