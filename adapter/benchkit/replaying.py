"""Replay throughput: a long recording through ``replay`` (validation, engine, output lines),
no sockets, no database, pinned to one core. Run in its own process by the orchestrator:
``python -m adapter.benchkit.replaying FILE`` prints ``{"messages", "seconds"}``."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from .payloads import hooks, session


def write_recording(path: Path, messages: int) -> Path:
    opened = session("benchReplay00001")
    with path.open("w", encoding="utf-8") as out:
        out.write(json.dumps({"event": "session", "data": opened}) + "\n")
        for payload in hooks(messages):
            out.write(json.dumps({"event": "hook", "data": payload}) + "\n")
    return path


def measure(path: Path) -> dict[str, float]:
    from ..replay import Replay, dumps, replay_lines
    from ..rulesets import RULESETS

    lines = path.read_text(encoding="utf-8").splitlines()
    state = Replay(rulesets=RULESETS)
    began = time.perf_counter()
    written = 0
    for item in replay_lines(lines, state):
        written += len(dumps(item))
    seconds = time.perf_counter() - began
    return {"messages": len(lines) - 1, "seconds": seconds, "output_bytes": written,
            "problems": len(state.problems)}


if __name__ == "__main__":
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[-1]})
    print(json.dumps(measure(Path(sys.argv[1]))))
