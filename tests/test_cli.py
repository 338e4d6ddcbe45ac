"""The command line: replay, export, schemas. Tests call ``run`` with string buffers."""

from __future__ import annotations

import io
import json
from pathlib import Path

from adapter.cli import parser, run
from adapter.rulesets import RULESETS
from adapter.service import Worlds
from adapter.store import Store
from tests.foundry import Session, combat, combatant, current, d20_roll


def call(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(parser().parse_args(list(argv)), out, err)
    return code, out.getvalue(), err.getvalue()


def small_recording() -> Session:
    s = Session("worldCli00000001", "foundry-core")
    data = combat("cmbtCli000000001", [combatant("aaaa000000000001", "Aria"), combatant("bbbb000000000002", "Boss")])
    s.hook("createCombat", data, current())
    s.hook("initiativeRoll", data, current(), roll={"combatant_id": "bbbb000000000002", "roll": d20_roll(11, 1)})
    return s


def test_replay_prints_acks_then_emits_as_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(small_recording().jsonl())
    code, out, err = call("replay", str(path))
    assert code == 0 and err == ""
    lines = [json.loads(line) for line in out.splitlines()]
    assert [(x["in"], x["type"], x.get("event")) for x in lines] == [
        (2, "ack", None), (2, "emit", "plan"), (3, "ack", None), (3, "emit", "plan")]
    assert lines[3]["data"]["order"][0] == {**lines[3]["data"]["order"][0], "combatant_id": "bbbb000000000002", "initiative": 12.0}


def test_replay_reports_bad_lines_on_stderr_and_goes_on(tmp_path: Path) -> None:
    lines = small_recording().jsonl().splitlines()
    lines.insert(2, "{not json")
    lines.insert(3, json.dumps({"data": {}}))
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code, out, err = call("replay", str(path))
    assert code == 0
    assert "line 3: not JSON" in err and 'line 4: no "event"' in err
    assert [json.loads(x)["in"] for x in out.splitlines() if json.loads(x)["type"] == "ack"] == [2, 5]


def test_a_session_line_holding_a_token_is_refused_without_quoting_it(tmp_path: Path) -> None:
    s = small_recording()
    s.lines[0]["data"]["token"] = "SECRET-token-0123"
    path = tmp_path / "r.jsonl"
    path.write_text(s.jsonl())
    _, _, err = call("replay", str(path))
    assert "line 1: bad session: the message must not hold token; skipped" in err
    assert "SECRET" not in err


def test_replay_of_a_schema_failure_gives_the_servers_refusal(tmp_path: Path) -> None:
    s = small_recording()
    s.lines[2]["data"]["world_time"] = "late"
    path = tmp_path / "r.jsonl"
    path.write_text(s.jsonl())
    _, out, _ = call("replay", str(path))
    ack = json.loads(out.splitlines()[2])["data"]
    assert ack == {"ok": False, "seq": 2, "error": {"code": "invalid_message", "message": ack["error"]["message"], "path": "/world_time"}}


def test_expect_exits_non_zero_on_the_first_difference(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(small_recording().jsonl())
    _, out, _ = call("replay", str(path))
    golden = tmp_path / "r.golden.jsonl"
    golden.write_text(out)
    assert call("replay", str(path), "--expect", str(golden))[0] == 0
    golden.write_text(out.replace("12.0", "13.0"))
    code, _, err = call("replay", str(path), "--expect", str(golden))
    assert code == 1 and "expected" in err and "13.0" in err


def test_pretty_shows_rounds_order_and_refusals(tmp_path: Path) -> None:
    s = small_recording()
    s.intent("initiative.set", {"value": 5}, user="notAGm0000000001", combat_id="cmbtCli000000001", combatant_id="aaaa000000000001")
    path = tmp_path / "r.jsonl"
    path.write_text(s.jsonl())
    code, out, _ = call("replay", str(path), "--pretty")
    assert code == 0
    assert "round 0" in out and "Boss" in out and "12.00" in out
    assert "refused not_permitted" in out


def test_export_writes_what_the_server_stored_as_a_replayable_recording(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    store = Store(db)
    worlds = Worlds(store, rulesets=RULESETS)
    rec = small_recording()
    session = dict(rec.lines[0]["data"], token="secret-token-should-not-be-exported")
    worlds.connect(session)
    acks = [worlds.handle("worldCli00000001", line["event"], line["data"]).ack for line in rec.lines[1:]]
    store.close()
    code, out, _ = call("export", "--world", "worldCli00000001", "--db", str(db))
    assert code == 0 and "secret-token" not in out
    exported = tmp_path / "e.jsonl"
    exported.write_text(out)
    _, replayed, _ = call("replay", str(exported))
    assert [json.loads(x)["data"] for x in replayed.splitlines() if json.loads(x)["type"] == "ack"] == acks


def test_export_of_an_unknown_world_says_so(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    Store(db).close()
    code, _, err = call("export", "--world", "nobody", "--db", str(db))
    assert code == 1 and "nothing stored" in err


def test_schemas_check_passes_on_the_repository(root: Path) -> None:
    code, out, err = call("schemas", "--check", "--recordings", str(root / "tests" / "recordings"))
    assert code == 0, err
    assert "OK" in out


def test_schemas_check_finds_a_bad_recorded_line(tmp_path: Path) -> None:
    s = small_recording()
    s.lines[1]["data"]["combat"]["round"] = -1
    (tmp_path / "bad.jsonl").write_text(s.jsonl())
    code, _, err = call("schemas", "--check", "--recordings", str(tmp_path))
    assert code == 1 and "bad.jsonl:2" in err


def test_schemas_check_passes_a_bad_line_its_golden_file_refuses(tmp_path: Path) -> None:
    s = small_recording()
    s.lines[1]["data"]["combat"]["round"] = -1
    (tmp_path / "bad.jsonl").write_text(s.jsonl())
    code, golden, _ = call("replay", str(tmp_path / "bad.jsonl"))
    refused = golden.count('"code":"invalid_message"')
    assert code == 0 and refused >= 1
    (tmp_path / "bad.golden.jsonl").write_text(golden)
    code, out, err = call("schemas", "--check", "--recordings", str(tmp_path))
    assert code == 0 and err == "" and f"({refused} invalid on purpose" in out


def test_a_recording_switched_on_mid_session_replays_from_its_first_seq(tmp_path: Path) -> None:
    s = small_recording()
    for line in s.lines[1:]:
        line["data"]["seq"] += 40  # the GM started recording at seq 41
    s.lines.append(dict(s.lines[0]))  # paused, then resumed: a new session line
    s.hook("updateCombat", s.lines[1]["data"]["combat"], current())
    s.lines[-1]["data"]["seq"] = 60
    path = tmp_path / "r.jsonl"
    path.write_text(s.jsonl())
    code, out, err = call("replay", str(path))
    acks = [json.loads(x)["data"] for x in out.splitlines() if json.loads(x)["type"] == "ack"]
    assert code == 0 and [a["ok"] for a in acks] == [True, True, True]
    assert [a["seq"] for a in acks] == [41, 42, 60]
    assert "resumes at seq 41" in err and "resumes at seq 60" in err


def test_a_gap_without_a_session_line_is_still_out_of_order(tmp_path: Path) -> None:
    s = small_recording()
    s.lines[2]["data"]["seq"] = 5
    path = tmp_path / "r.jsonl"
    path.write_text(s.jsonl())
    _, out, _ = call("replay", str(path))
    acks = [json.loads(x)["data"] for x in out.splitlines() if json.loads(x)["type"] == "ack"]
    assert acks[1]["error"]["code"] == "out_of_order"
