"""The numbers of BI-E1 .. BI-E6, read from the golden outputs of their recordings, so that a
regenerated golden file cannot silently change what the examples say."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RECORDINGS = Path(__file__).resolve().parents[2] / "recordings" / "balanced-d20"


def outputs(name: str) -> list[dict[str, Any]]:
    [path] = RECORDINGS.glob(f"{name}-*.golden.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def acks(name: str) -> dict[int, dict[str, Any]]:
    return {o["in"]: o["data"] for o in outputs(name) if o["type"] == "ack"}


def entry(plan: dict[str, Any], cid: str) -> dict[str, Any]:
    return next(e for e in plan["order"] if e["combatant_id"] == cid)


def last_plan(name: str) -> dict[str, Any]:
    plans: list[dict[str, Any]] = [o["data"] for o in outputs(name) if o["type"] == "emit" and o["event"] == "plan"]
    return plans[-1]


def test_BI_E1_golden_offer_on_3_and_the_reroll_of_2_stands() -> None:
    a = acks("BI-E1")
    [offer] = a[5]["prompts"]
    assert offer["kind"] == "reroll" and offer["data"]["natural"] == 3 and offer["data"]["int"] == 4
    assert a[7]["error"]["code"] == "not_permitted"  # a player approving
    assert entry(a[9]["plans"][0], "cmbWizard0000001")["initiative"] == 4  # 2 + 2 stands
    assert a[9]["prompts"] == []  # no second offer although 2 <= 4
    assert a[10]["error"]["code"] == "rule_violation" and a[10]["error"]["rule"] == "BI-2"


def test_BI_E2_golden_rogue_at_14_reacts_before_the_orcs_move() -> None:
    a = acks("BI-E2")
    start = a[8]["plans"][0]
    assert start["current"] == "cmbOrc0000000001"
    rogue = entry(start, "cmbRogue00000001")
    assert rogue["initiative"] == 14 and rogue["reaction"] == {"available": True,
                                                               "reason": "ready_to_strike"}
    assert a[9]["ok"] and entry(a[9]["plans"][0], "cmbRogue00000001")["reaction"]["reason"] == "spent"


def test_BI_E3_golden_the_whisper_costs_the_state() -> None:
    a = acks("BI-E3")
    rogue = entry(a[10]["plans"][0], "cmbRogue00000001")
    assert rogue["reaction"] == {"available": False, "reason": "before_first_turn"}
    assert "surprise_immune" not in rogue["tags"]
    assert a[11]["error"]["rule"] == "BI-3"


def test_BI_E4_golden_cleric_dashes_from_8_to_13() -> None:
    a = acks("BI-E4")
    assert a[8]["error"]["path"] == "/args/amount"  # +9 > 5 + 3
    dashed = a[9]["plans"][0]
    assert [e["combatant_id"] for e in dashed["order"]][:2] == ["cmbOgre000000001",
                                                                "cmbCleric0000001"]
    cleric = entry(dashed, "cmbCleric0000001")
    assert cleric["initiative"] == 13 and cleric["acts"] == "movement_or_action"
    assert a[11]["error"]["rule"] == "BI-4"  # no reaction after the dash
    round2 = a[14]["plans"][0]
    assert entry(round2, "cmbCleric0000001")["initiative"] == 8
    assert entry(round2, "cmbCleric0000001")["reaction"]["reason"] == "dashed"
    assert entry(last_plan("BI-E4"), "cmbCleric0000001")["reaction"]["available"] is True


def test_BI_E5_golden_the_fighter_reacts_to_the_casting() -> None:
    a = acks("BI-E5")
    assert a[8]["plans"][0]["order"][0]["reaction"] == {"available": True,
                                                        "reason": "readied_trigger"}
    assert a[9]["plans"][0]["order"][0]["reaction"] == {"available": False, "reason": "spent"}


def test_BI_E6_golden_win_then_lose_the_opposed_check() -> None:
    a = acks("BI-E6")
    assert "acts_before_trigger" in entry(a[10]["plans"][0], "cmbRogue00000001")["tags"]
    assert "readied_pending" in entry(a[16]["plans"][0], "cmbRogue00000001")["tags"]
    assert "readied_due" in entry(a[17]["plans"][0], "cmbRogue00000001")["tags"]
    assert a[18]["notices"][0]["kind"] == "readied.taken"
