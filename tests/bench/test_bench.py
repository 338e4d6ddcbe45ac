"""The benchmark's machinery in a tiny configuration: real processes, well-formed figures.

Nothing here is timed: the figures must exist and make sense, whatever the machine.
"""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from adapter.bench import Plan, run_bench
from adapter.benchkit import figures
from adapter.benchkit.payloads import hooks

TINY = Plan(scenarios=(("1x6", 1, 6), ("3x4", 3, 4)), rounds=1, replay_messages=30,
            memory_worlds=3, memory_combatants=20, client_processes=2)


def test_the_payloads_are_real_hooks_of_an_8_combatant_combat_whose_turn_advances() -> None:
    payloads = hooks(14)
    assert [p["seq"] for p in payloads] == list(range(1, 15))
    assert all(len(p["combat"]["combatants"]) == 8 for p in payloads)
    assert all(p["combat"]["skip_defeated"] is False for p in payloads)  # the module sends core's setting
    assert all(2000 <= len(json.dumps(p, separators=(",", ":"))) <= 4500 for p in payloads)
    pointers = [p["current"]["combatantId"] for p in payloads[9:]]
    assert len(set(pointers)) == len(pointers)  # a new combatant each message


def test_percentiles_by_nearest_rank() -> None:
    values = [float(x) for x in range(1, 101)]
    assert figures.percentile(values, 0.5) == 50.0
    assert figures.percentile(values, 0.99) == 99.0
    assert figures.percentile([], 0.5) == 0.0


def test_a_tiny_run_gives_well_formed_figures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import adapter.bench as bench

    monkeypatch.setattr(bench, "QUICK", TINY)
    out = tmp_path / "bench.json"
    args = argparse.Namespace(quick=True, json_out=str(out), client_processes=None, no_deflate=False)
    stdout, stderr = io.StringIO(), io.StringIO()
    assert run_bench(args, stdout, stderr) == 0
    result = json.loads(out.read_text())
    assert set(result["scenarios"]) == {"1x6", "3x4"}
    for name, clients, messages in TINY.scenarios:
        sc = result["scenarios"][name]
        assert sc["clients"] == clients
        for kind in ("echo", "sidecar"):
            s = sc[kind]
            assert s["messages"] == clients * messages
            assert s["errors"] == 0
            assert s["msgs_per_s"] > 0 and 0 < s["p50_ms"] <= s["p99_ms"]
        per_round = sc["ratio"]["msgs_per_s_rounds"]
        assert len(per_round) == TINY.rounds and all(v is not None and v > 0 for v in per_round)
        assert all(sc["ratio"][k] is not None and sc["ratio"][k] > 0 for k in ("msgs_per_s", "p50", "p99"))
    # what a browser negotiates: the bare server accepts deflate, the sidecar declines it
    assert result["deflate"] == {"echo": 15, "sidecar": 0}
    assert result["replay"]["messages"] == 30 and result["replay"]["msgs_per_s"] > 0
    assert result["replay"]["problems"] == 0
    mem = result["memory"]
    assert mem["worlds"] == 3 and mem["errors"] == 0
    assert mem["peak_rss_mb"] >= mem["rss_before_messages_mb"] >= mem["idle_rss_mb"] > 0
    assert result["startup"]["sidecar_s"] > 0 and result["startup"]["restore_s"] > 0
    table = stdout.getvalue()
    assert "1x6" in table and "sidecar" in table and "replay" in table


def test_more_rounds_give_each_round_s_ratio_beside_the_median(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import adapter.bench as bench
    from adapter.cli import parser

    one_scenario = Plan(**{**TINY.__dict__, "scenarios": (("1x6", 1, 6),)})
    monkeypatch.setattr(bench, "QUICK", one_scenario)
    monkeypatch.setattr(bench, "replay_throughput", lambda plan, tmp: {"messages": 0, "msgs_per_s": 0.0, "problems": 0})
    monkeypatch.setattr(bench, "memory", lambda plan, tmp: ({}, {}))
    out = tmp_path / "bench.json"
    args = parser().parse_args(["bench", "--quick", "--rounds", "2", "--json", str(out)])
    stdout = io.StringIO()
    assert run_bench(args, stdout, io.StringIO()) == 0
    result = json.loads(out.read_text())
    assert result["rounds"] == 2
    sc = result["scenarios"]["1x6"]
    echo, side = sc["echo"]["msgs_per_s_rounds"], sc["sidecar"]["msgs_per_s_rounds"]
    assert len(echo) == len(side) == 2 and sc["sidecar"]["messages"] == 2 * 6
    assert sc["ratio"]["msgs_per_s_rounds"] == [figures.ratio(s, e) for s, e in zip(side, echo)]
    assert "(rounds " in stdout.getvalue()


@pytest.mark.parametrize("rounds", ["0", "101", "two"])
def test_a_round_count_out_of_range_is_refused_by_the_command_line(rounds: str, capsys: pytest.CaptureFixture[str]) -> None:
    from adapter.cli import parser

    with pytest.raises(SystemExit) as exit_:
        parser().parse_args(["bench", "--rounds", rounds])
    assert exit_.value.code == 2
    assert "--rounds" in capsys.readouterr().err
