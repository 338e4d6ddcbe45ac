"""Figures from what was measured: percentiles, the table, the machine it ran on."""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any, TextIO

from .load import Measured


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) by nearest rank; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))
    return ordered[rank]


def summary(runs: Sequence[Measured]) -> dict[str, Any]:
    """One server in one scenario over every round: median throughput, pooled latencies (ms)."""
    per_second = [m.per_second for m in runs]
    latencies = [x for m in runs for x in m.latencies]
    return {
        "msgs_per_s": round(statistics.median(per_second), 1) if per_second else 0.0,
        "msgs_per_s_rounds": [round(x, 1) for x in per_second],
        "p50_ms": round(percentile(latencies, 0.50) * 1e3, 3),
        "p99_ms": round(percentile(latencies, 0.99) * 1e3, 3),
        "messages": len(latencies),
        "errors": sum(m.errors for m in runs),
    }


def report(result: dict[str, Any], text: str, args: Any, stdout: TextIO, stderr: TextIO, failed: str) -> int:
    """Print ``text``, write ``result`` to ``--json`` if given; exit 1 and say ``failed`` if set."""
    stdout.write(text + "\n")
    if out := getattr(args, "json_out", None):
        Path(out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if failed:
        stderr.write(f"initiative-sidecar bench: {failed}\n")
    return 1 if failed else 0


def ratio(a: float, b: float) -> float | None:
    return round(a / b, 3) if b else None


def machine() -> dict[str, Any]:
    model = ""
    with suppress(OSError):  # no /proc: not Linux
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {"cpus": os.cpu_count(), "cpu_model": model or platform.processor(),
            "python": platform.python_version(), "platform": platform.platform(),
            "load_average": [round(x, 2) for x in os.getloadavg()]}


def table(result: dict[str, Any]) -> str:
    """The scenario table and the single figures, for a person."""
    lines = [
        f"{'scenario':<12} {'server':<8} {'msgs/s':>9} {'p50 ms':>9} {'p99 ms':>9}  ratio sidecar/echo",
    ]
    for name, sc in result["scenarios"].items():
        ratios = sc["ratio"]
        note = f"  throughput {ratios['msgs_per_s']}, p50 {ratios['p50']}, p99 {ratios['p99']}"
        if len(ratios["msgs_per_s_rounds"]) > 1:
            rounds = (f"{r:.2f}" if r is not None else "-" for r in ratios["msgs_per_s_rounds"])
            note += " (rounds " + " ".join(rounds) + ")"
        for label, kind, tail in ((name, "echo", ""), ("", "sidecar", note)):
            s = sc[kind]
            lines.append(f"{label:<12} {kind:<8} {s['msgs_per_s']:>9.0f} {s['p50_ms']:>9.3f} "
                         f"{s['p99_ms']:>9.3f}{tail}")
    rp = result.get("replay")
    if rp:
        lines.append(f"replay: {rp['msgs_per_s']:.0f} messages/s on one core "
                     f"({rp['messages']} messages, validation included)")
    mem = result.get("memory")
    if mem:
        lines.append(f"memory: peak RSS {mem['peak_rss_mb']:.1f} MB with {mem['worlds']} connected "
                     f"worlds x {mem['combatants']} combatants (idle sidecar {mem['idle_rss_mb']:.1f} MB, "
                     f"{mem['rss_before_messages_mb']:.1f} MB connected before any message)")
    st = result.get("startup")
    if st:
        lines.append(f"start-up to accepting connections: sidecar {st['sidecar_s']:.3f} s, "
                     f"echo {st['echo_s']:.3f} s (median)"
                     + (f"; sidecar with {st['restore_worlds']} stored worlds {st['restore_s']:.3f} s"
                        if st.get("restore_s") is not None else ""))
    deflate = ", ".join(f"{k} {'window ' + str(v) if v else 'declined'}" for k, v in result["deflate"].items())
    offered = "offered by the clients, as a browser does" if result["offered"] else "not offered"
    lines.append(f"regime: permessage-deflate {offered}; agreed: {deflate}; "
                 f"{result['client_processes']} client "
                 f"process(es) for the multi-client scenarios, {result['rounds']} rounds A B")
    return "\n".join(lines)
