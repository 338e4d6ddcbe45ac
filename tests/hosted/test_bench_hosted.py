"""``bench --hosted`` in a tiny configuration: the three set-ups run for real (SQLite, 1 and 2
processes on PostgreSQL behind nginx) and give well-formed figures. Nothing here is timed."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from adapter.benchkit import hosted


def test_a_tiny_hosted_bench_reports_every_set_up_with_no_error(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(hosted.SIZES, "quick", (4, 5, 1))
    out, err = io.StringIO(), io.StringIO()
    args = argparse.Namespace(quick=True, json_out=str(tmp_path / "b.json"), client_processes=2)
    assert hosted.run_hosted(args, out, err) == 0, err.getvalue()
    result = json.loads((tmp_path / "b.json").read_text())
    assert list(result["setups"]) == list(hosted.SETUPS)
    for setup in result["setups"].values():
        assert setup["messages"] == 4 * 5 and setup["msgs_per_s"] > 0 and setup["p99_ms"] >= setup["p50_ms"] > 0
    assert result["errors"] == 0 and result["scaling_2_over_1"] > 0 and result["cost_x1_over_sqlite"] > 0
    assert "scaling 2 processes / 1" in out.getvalue()
