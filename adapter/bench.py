"""``initiative-sidecar bench``: the sidecar against a bare python-socketio echo server,
alternately for several rounds under the same load, then the replay throughput, the memory
of many connected worlds and the start-up time (docs/performance.md describes the method).
Prints a table; ``--json FILE`` writes the same figures as JSON.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from .benchkit import figures, load, replayed, services
from .progress import steps

#: per world in the memory figure: createCombat, combatStart, one turn (nobody rolls: the
#: state held is the same size, and 1,000 worlds x 20 rolls would not fit in the time box)
MEMORY_MESSAGES = 3


@dataclass(frozen=True)
class Plan:
    """How much to measure: scenarios are (name, clients, messages per client)."""

    scenarios: tuple[tuple[str, int, int], ...]
    rounds: int
    replay_messages: int
    memory_worlds: int
    memory_combatants: int = 20
    client_processes: int = 2
    deflate: bool = True


FULL = Plan(scenarios=(("1x2000", 1, 2000), ("50x200", 50, 200), ("200x50", 200, 50)),
            rounds=3, replay_messages=20_000, memory_worlds=1000)
QUICK = Plan(scenarios=(("1x200", 1, 200), ("10x20", 10, 20), ("20x10", 20, 10)),
             rounds=1, replay_messages=1000, memory_worlds=50)


def run_bench(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    plan = QUICK if getattr(args, "quick", False) else FULL
    plan = Plan(**{**plan.__dict__, "deflate": not getattr(args, "no_deflate", False),
                   "client_processes": getattr(args, "client_processes", None) or plan.client_processes,
                   "rounds": getattr(args, "rounds", None) or plan.rounds})
    began = time.perf_counter()
    # the scenarios, the replay, the memory, the combat sizes
    total = plan.rounds * 2 * len(plan.scenarios) + 3
    with tempfile.TemporaryDirectory(prefix="sidecar-bench-") as tmp, steps(total, "bench", stdout, stderr) as say:
        result = measure(plan, Path(tmp), say)
    result["seconds"] = round(time.perf_counter() - began, 1)
    text = (f"{figures.table(result)}\n{replayed.table(result['combat_sizes'])}\n"
            f"(the whole benchmark took {result['seconds']} s)")
    errors = sum(sc[k]["errors"] for sc in result["scenarios"].values() for k in ("echo", "sidecar"))
    return figures.report(result, text, args, stdout, stderr,
                          f"{errors} messages were refused or failed" if errors else "")


def measure(plan: Plan, tmp: Path, say: Callable[[str], None]) -> dict[str, Any]:
    result: dict[str, Any] = {"machine": figures.machine(), "rounds": plan.rounds,
                              "deflate": {}, "offered": plan.deflate,
                              "client_processes": plan.client_processes,
                              "ruleset": "foundry-core"}
    result["scenarios"], startups, result["deflate"] = scenarios(plan, tmp, say)
    say("replay throughput")
    result["replay"] = replay_throughput(plan, tmp)
    say("memory with many connected worlds")
    result["memory"], restore = memory(plan, tmp)
    say("cost of a turn change by combat size")
    result["combat_sizes"] = replayed.measure_in_child(quick=plan.rounds == 1 and plan.memory_worlds < 1000)
    result["startup"] = {
        "echo_s": round(statistics.median(startups["echo"]), 3),
        "sidecar_s": round(statistics.median(startups["sidecar"]), 3),
        "sidecar_runs_s": [round(x, 3) for x in startups["sidecar"]],
        **restore,
    }
    result["machine"]["load_average_after"] = figures.machine()["load_average"]
    return result


def scenarios(plan: Plan, tmp: Path, say: Callable[[str], None]) -> tuple[dict[str, Any], dict[str, list[float]], dict[str, int]]:
    """Every scenario against both servers, alternately, for ``plan.rounds`` rounds."""
    #: (scenario, server) -> what each round measured
    runs: dict[tuple[str, str], list[load.Measured]] = {}
    startups: dict[str, list[float]] = {"echo": [], "sidecar": []}
    deflate: dict[str, int] = {"echo": 0, "sidecar": 0}
    for r in range(plan.rounds):
        for kind in ("echo", "sidecar"):
            server = services.start(kind, tmp / f"sidecar-{r}.db")
            startups[kind].append(server.startup_s)
            try:
                for name, clients, messages in plan.scenarios:
                    say(f"round {r + 1}/{plan.rounds}: {kind} {name}")
                    worlds = [f"bench{r}{name}w{i:05d}" for i in range(clients)]
                    procs = 1 if clients == 1 else plan.client_processes
                    got = load.run_load(server.url, worlds, messages, procs, deflate=plan.deflate)
                    runs.setdefault((name, kind), []).append(got)
                    deflate[kind] = got.deflate
            finally:
                server.stop()
    out: dict[str, Any] = {}
    for name, clients, messages in plan.scenarios:
        echo, side = (figures.summary(runs[(name, kind)]) for kind in ("echo", "sidecar"))
        out[name] = {"clients": clients, "messages_per_client": messages, "echo": echo,
                     "sidecar": side, "ratio": {
                         "msgs_per_s": figures.ratio(side["msgs_per_s"], echo["msgs_per_s"]),
                         "p50": figures.ratio(side["p50_ms"], echo["p50_ms"]),
                         "p99": figures.ratio(side["p99_ms"], echo["p99_ms"]),
                         # each round's sidecar against the echo run just before it: the
                         # pair closest in time, so the least touched by a drifting host
                         "msgs_per_s_rounds": [figures.ratio(s, e) for s, e in zip(
                             side["msgs_per_s_rounds"], echo["msgs_per_s_rounds"], strict=True)]}}
    return out, startups, deflate


def replay_throughput(plan: Plan, tmp: Path) -> dict[str, Any]:
    path = replayed.write_recording(tmp / "long.jsonl", plan.replay_messages)
    return replayed.in_child(str(path), timeout=240)


def memory(plan: Plan, tmp: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """Peak RSS of a sidecar holding ``memory_worlds`` connected worlds; then the start-up
    time of a sidecar that restores them all from its database."""
    db = tmp / "memory.db"
    server = services.start("sidecar", db)
    try:
        idle = server.rss_mb()
        worlds = [f"mem{i:05d}" for i in range(plan.memory_worlds)]
        held = load.start_load(server.url, worlds, max(2, plan.client_processes),
                                   messages=MEMORY_MESSAGES, deflate=plan.deflate,
                                   combatants=plan.memory_combatants, hold=True, rolls=False)
        try:
            connected = server.rss_mb()  # every socket and session, no combat yet
            got = held.go()
            peak, now = server.peak_rss_mb(), server.rss_mb()
        finally:
            held.close()
    finally:
        server.stop()
    restarted = services.start("sidecar", db, timeout=120)
    restarted.stop()
    mem = {"worlds": plan.memory_worlds, "combatants": plan.memory_combatants,
           "messages_per_world": MEMORY_MESSAGES, "errors": got.errors,
           "peak_rss_mb": round(peak, 1), "rss_connected_mb": round(now, 1),
           "idle_rss_mb": round(idle, 1), "rss_before_messages_mb": round(connected, 1)}
    return mem, {"restore_worlds": plan.memory_worlds, "restore_s": round(restarted.startup_s, 3)}

