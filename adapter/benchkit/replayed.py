"""Figures from replaying headless through the server's own path (:class:`adapter.replay.Replay`:
wire JSON, validation, engine, ack), no sockets, no database, in a child process pinned to one
core (:func:`in_child`), so they do not depend on what the orchestrator did before:

- the replay throughput: a long recording through ``replay`` (output lines included):
  ``python -m adapter.benchkit.replayed FILE`` prints ``{"messages", "msgs_per_s", ...}``;
- the cost of a turn change by the size of the combat: ``initiative-sidecar bench
  --combat-sizes``. One balanced-d20 combat of N combatants (:data:`SIZES`) is replayed; the
  figure is the CPU time of one turn change, the best of ``repeats`` medians
  (``python -m adapter.benchkit.replayed [--quick]``). docs/performance.md, "A turn change by
  combat size", says how.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import orjson

from ..replay import Replay, dumps, replay_lines
from ..rulesets import RULESETS
from . import figures
from .payloads import hooks, session

SIZES = (5, 20, 80, 200)
RULESET = "balanced-d20"
#: the hooks of a turn change (what is timed)
TURN_HOOKS = ("combatTurn", "combatRound")


def lines_of(world: str, payloads: list[dict[str, Any]], ruleset: str = "foundry-core") -> list[bytes]:
    """A recording's JSON lines: the session, then one line per hook payload."""
    return [orjson.dumps({"event": "session", "data": session(world, ruleset)}),
            *(orjson.dumps({"event": "hook", "data": m}) for m in payloads)]


def write_recording(path: Path, messages: int) -> Path:
    path.write_bytes(b"".join(line + b"\n" for line in lines_of("benchReplay00001", hooks(messages))))
    return path


def throughput(path: Path) -> dict[str, Any]:
    """Replay the recording at ``path``, each output line encoded as ``replay`` writes it: the figures."""
    lines = path.read_text(encoding="utf-8").splitlines()
    state = Replay(rulesets=RULESETS)
    began = time.perf_counter()
    for item in replay_lines(lines, state):
        dumps(item)
    seconds = time.perf_counter() - began
    return {"messages": len(lines) - 1, "seconds": round(seconds, 3),
            "msgs_per_s": round((len(lines) - 1) / seconds, 1), "problems": len(state.problems)}


def d20_total(i: int) -> int:
    """Combatant ``i``'s initiative, a total a d20 can show (the die 1..20 and a +2): several
    share a total when there are more than 20 combatants, as at a real table."""
    return 3 + ((i + 1) * 7) % 20


def recording(combatants: int, turns: int) -> list[bytes]:
    """The JSON lines of one combat: a session, ``createCombat``, the rolls, ``combatStart``,
    then ``turns`` turn changes along the sidecar's plan (found by replaying the start once)."""
    start = hooks(combatants + 2, combatants=combatants, total=d20_total)
    lines = lines_of("benchSizes000001", start, RULESET)
    probe = Replay(rulesets=RULESETS)
    plan: dict[str, Any] = {}
    for number, line in enumerate(lines, start=1):
        for item in probe.feed(number, line.decode()):
            if item["type"] == "ack" and item["data"].get("plans"):
                plan = item["data"]["plans"][-1]
    order = [entry["combatant_id"] for entry in plan["order"]]
    written = {entry["combatant_id"]: entry["initiative"] for entry in plan["order"]}
    last = start[-1]
    for person in last["combat"]["combatants"]:
        person["initiative"] = written.get(person["_id"], person["initiative"])
    round_, turn = 1, 0
    for k in range(turns):
        name = "combatTurn"
        turn += 1
        if turn == len(order):
            round_, turn, name = round_ + 1, 0, "combatRound"
        combat = {**last["combat"], "round": round_, "turn": turn}
        current = {"round": round_, "turn": turn, "combatantId": order[turn], "tokenId": None}
        message = {**last, "seq": last["seq"] + 1 + k, "world_time": float((last["seq"] + k) * 6),
                   "hook": name, "combat": combat, "current": current}
        lines.append(orjson.dumps({"event": "hook", "data": message}))
    return lines


def measure(combatants: int, turns: int) -> dict[str, Any]:
    """Replay one combat; the per-message CPU time of its turn changes after the first round."""
    lines = recording(combatants, turns)
    replay = Replay(rulesets=RULESETS)
    times: list[float] = []
    refused = 0
    kinds = [orjson.loads(line)["data"].get("hook") for line in lines]
    for number, line in enumerate(lines, start=1):
        began = time.process_time_ns()
        out = list(replay.feed(number, line.decode()))
        spent = time.process_time_ns() - began
        if out and not out[0]["data"]["ok"]:
            refused += 1
        if kinds[number - 1] in TURN_HOOKS:
            times.append(spent / 1e3)
    warm = times[combatants:] or times
    return {"combatants": combatants, "hook_bytes": len(lines[-1]), "turns": len(warm),
            "us_per_turn": round(statistics.median(warm), 1), "refused": refused}


def measure_all(sizes: Sequence[int] = SIZES, turns: int = 600, repeats: int = 3) -> dict[str, Any]:
    """Every size, ``repeats`` times in turn (5, 20, 80, 200, 5, ...), the best median kept."""
    best: dict[int, dict[str, Any]] = {}
    for _ in range(repeats):
        for n in sizes:
            got = measure(n, max(turns, 3 * n))
            if n not in best or got["us_per_turn"] < best[n]["us_per_turn"]:
                best[n] = got
    rows = [best[n] for n in sizes]
    small, large = rows[0]["us_per_turn"], rows[-1]["us_per_turn"]
    return {"ruleset": RULESET, "repeats": repeats, "sizes": rows,
            "ratio_largest_to_smallest": round(large / small, 2) if small else None}


def table(result: dict[str, Any]) -> str:
    lines = [f"cost of a turn change by combat size ({result['ruleset']}, replayed, CPU per message, "
             f"best median of {result['repeats']})",
             f"{'combatants':>10}  {'hook bytes':>10}  {'us/turn':>9}"]
    for row in result["sizes"]:
        lines.append(f"{row['combatants']:>10}  {row['hook_bytes']:>10}  {row['us_per_turn']:>9.1f}")
    sizes = result["sizes"]
    lines.append(f"ratio {sizes[-1]['combatants']}/{sizes[0]['combatants']}: "
                 f"{result['ratio_largest_to_smallest']} (target: at most 2)")
    return "\n".join(lines)


def in_child(*argv: str, timeout: float) -> dict[str, Any]:
    """What :func:`main` prints, run with ``argv`` in a child process pinned to one core."""
    done = subprocess.run([sys.executable, "-m", "adapter.benchkit.replayed", *argv],
                          capture_output=True, text=True, timeout=timeout, check=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def measure_in_child(quick: bool) -> dict[str, Any]:
    """:func:`measure_all` in a child process (``--quick``: fewer turns, one repeat)."""
    return in_child(*(["--quick"] if quick else []), timeout=900)


def run_only(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """``bench --combat-sizes [--quick] [--json FILE]``: this figure alone."""
    result = measure_in_child(quick=bool(getattr(args, "quick", False)))
    refused = sum(row["refused"] for row in result["sizes"])
    return figures.report(result, table(result), args, stdout, stderr,
                          f"{refused} messages were refused" if refused else "")


def main(argv: Sequence[str]) -> None:
    """``FILE``: the replay throughput of that recording; else the combat sizes (``--quick``)."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[-1]})
    if argv and argv[0] != "--quick":
        print(json.dumps(throughput(Path(argv[0]))))
        return
    quick = "--quick" in argv
    print(json.dumps(measure_all(turns=100 if quick else 600, repeats=1 if quick else 3)))


if __name__ == "__main__":
    main(sys.argv[1:])
