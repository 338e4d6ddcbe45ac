"""``bench --hosted`` in a tiny configuration: the three set-ups run for real (SQLite, 1 and 2
processes on PostgreSQL behind nginx) and give well-formed figures. Nothing here is timed."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from adapter.benchkit import capacity


def test_a_tiny_hosted_bench_reports_every_set_up_with_no_error(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(capacity.SIZES, "quick", (4, 5, 1))
    out, err = io.StringIO(), io.StringIO()
    args = argparse.Namespace(quick=True, json_out=str(tmp_path / "b.json"), client_processes=2)
    assert capacity.run_hosted(args, out, err) == 0, err.getvalue()
    result = json.loads((tmp_path / "b.json").read_text())
    assert list(result["setups"]) == list(capacity.SETUPS)
    for setup in result["setups"].values():
        assert setup["messages"] == 4 * 5 and setup["msgs_per_s"] > 0 and setup["p99_ms"] >= setup["p50_ms"] > 0
    assert result["errors"] == 0 and result["scaling_2_over_1"] > 0 and result["cost_x1_over_sqlite"] > 0
    assert "scaling 2 processes / 1" in out.getvalue()


def test_a_tiny_capacity_bench_holds_its_tables_and_reports_each_step(tmp_path: Path) -> None:
    """``bench --hosted --tables 3,6 --rate 2``: every step's figures are there and well formed,
    every message answered, none lost (the bench checks PostgreSQL). Nothing here is timed."""
    from adapter.cli import parser

    out, err = io.StringIO(), io.StringIO()
    args = parser().parse_args(["bench", "--hosted", "--tables", "3,6", "--rate", "2", "--seconds", "2",
                                "--sidecars", "2", "--json", str(tmp_path / "c.json")])
    assert capacity.run_tables(args, out, err) == 0, err.getvalue()
    result = json.loads((tmp_path / "c.json").read_text())
    assert [s["tables"] for s in result["steps"]] == [3, 6]
    for step in result["steps"]:
        assert step["messages"] > 0 and step["unanswered"] == 0 and step["lost"] == 0 and step["refused"] == 0
        assert step["p99_ms"] >= step["p50_ms"] > 0 and len(step["rss_mb"]) == 2
        assert sum(step["spread"]) == step["tables"]  # every table on one process, through nginx
        assert step["spread"] == step["ring_spread"]  # where nginx's ring, as computed, sends them
    assert "largest N with p99 <= 100 ms" in out.getvalue()


def test_tables_and_rate_refuse_what_they_cannot_use() -> None:
    from adapter.cli import parser

    for bad in (["--tables", "0"], ["--tables", "ten"], ["--tables", "5", "--rate", "0"]):
        with pytest.raises(SystemExit):
            parser().parse_args(["bench", "--hosted", *bad])
