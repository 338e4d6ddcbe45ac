"""``bench --hosted``: the hosted topology against the default one, in one run.

One sidecar on SQLite reached directly, then 1 and 2 sidecar processes on PostgreSQL with
Redis rooms behind nginx, under the same load (one world per client, each sending its next
``hook`` when the previous ack arrives); each set-up's throughput and latency, the scaling
from 1 to 2 processes and the hosted stack's cost. See docs/performance.md.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any, TextIO

from . import figures, load, services

SETUPS = ("sqlite", "postgresql x1", "postgresql x2")
#: (worlds, messages per world, rounds)
SIZES = {"full": (100, 100, 2), "quick": (20, 30, 1)}


def run_hosted(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    if gone := services.missing(*services.NEEDS):
        stderr.write(f"initiative-sidecar bench --hosted needs {', '.join(gone)} "
                     "(Debian: apt-get install postgresql redis-server nginx)\n")
        return 2
    quick = bool(getattr(args, "quick", False))
    clients, messages, rounds = SIZES["quick" if quick else "full"]
    procs = getattr(args, "client_processes", None) or 2
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="sidecar-bench-") as tmp, services.postgres() as pg, \
            services.redis() as redis:
        rates: dict[str, list[float]] = {s: [] for s in SETUPS}
        lats: dict[str, list[float]] = {s: [] for s in SETUPS}
        errors = 0
        for r in range(rounds):
            for n, setup in enumerate(SETUPS):
                stdout.write(f"bench --hosted: round {r + 1}/{rounds}, {setup}\n")
                stdout.flush()
                worlds = [f"hosted{r}s{n}w{i:04d}" for i in range(clients)]
                got = _one(setup, Path(tmp) / f"{r}-{n}", pg, redis.url, worlds, messages, procs)
                rates[setup].append(got.per_second)
                lats[setup].extend(got.latencies)
                errors += got.errors
    result: dict[str, Any] = {
        "machine": figures.machine(), "clients": clients, "messages_per_client": messages,
        "rounds": rounds, "client_processes": procs,
        "setups": {s: figures.summary(rates[s], lats[s], 0) for s in SETUPS},
    }
    side = result["setups"]
    result["scaling_2_over_1"] = figures.ratio(side["postgresql x2"]["msgs_per_s"], side["postgresql x1"]["msgs_per_s"])
    result["cost_x1_over_sqlite"] = figures.ratio(side["postgresql x1"]["msgs_per_s"], side["sqlite"]["msgs_per_s"])
    result["errors"] = errors
    result["seconds"] = round(time.perf_counter() - began, 1)
    return figures.report(result, table(result), args, stdout, stderr,
                          f"{errors} messages were refused or failed" if errors else "")


def _one(setup: str, tmp: Path, pg: services.Postgres, redis: str, worlds: list[str], messages: int,
         procs: int) -> load.Measured:
    tmp.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        if setup == "sqlite":
            server = services.start("sidecar", tmp / "sidecar.db")
            stack.callback(server.stop)
            url = server.url
        else:
            sidecars = services.hosted(stack, tmp, int(setup.rsplit("x", 1)[1]), pg.new_database(), redis)
            url = f"http://127.0.0.1:{stack.enter_context(services.nginx([s.port for s in sidecars]))}"
        return load.run(url, worlds, messages, procs, deflate=False)


def table(result: dict[str, Any]) -> str:
    lines = [f"{'set-up':<16} {'msgs/s':>9} {'p50 ms':>9} {'p99 ms':>9}"]
    for name, s in result["setups"].items():
        lines.append(f"{name:<16} {s['msgs_per_s']:>9.0f} {s['p50_ms']:>9.3f} {s['p99_ms']:>9.3f}"
                     f"   (rounds: {', '.join(f'{x:.0f}' for x in s['msgs_per_s_rounds'])})")
    lines.append(f"scaling 2 processes / 1: {result['scaling_2_over_1']}; "
                 f"cost PostgreSQL+nginx+Redis (1 process) / SQLite: {result['cost_x1_over_sqlite']}")
    lines.append(f"load: {result['clients']} worlds x {result['messages_per_client']} messages, "
                 f"{result['client_processes']} client processes, {result['rounds']} round(s); "
                 f"{result['machine']['cpus']} CPUs, load average {result['machine']['load_average']}; "
                 f"{result['seconds']} s; median of rounds")
    return "\n".join(lines)


__all__ = ["run_hosted"]
