"""The bench's load: client processes (:mod:`.client`) given their job, then ``go`` and
``stop`` on their standard input, gathering what they measured (:func:`start_load`)."""

from __future__ import annotations

import json
import subprocess
import sys
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

from .services import TOKEN


@dataclass
class Measured:
    """One scenario against one server: every latency (s) and the span of the whole load."""

    seconds: float
    latencies: list[float]
    errors: int
    deflate: int

    @property
    def per_second(self) -> float:
        return len(self.latencies) / self.seconds if self.seconds > 0 else 0.0


@dataclass
class Load:
    """Client processes, connected and ready (or done and holding their connections)."""

    processes: list[subprocess.Popen[str]] = field(default_factory=list)
    ready: list[dict[str, Any]] = field(default_factory=list)  # each process's "ready" line

    def send(self, line: str, processes: list[subprocess.Popen[str]] | None = None) -> None:
        for p in self.processes if processes is None else processes:
            assert p.stdin is not None
            p.stdin.write(line + "\n")
            p.stdin.flush()

    def go(self) -> Measured:
        self.send("go")
        results = [reply(p, "result") for p in self.processes]
        start = min(r["start"] for r in results)
        end = max(r["end"] for r in results)
        latencies = [x for r in results for x in r["latencies"]]
        errors = sum(r["errors"] for r in results)
        deflate = min(int(r["deflate"]) for r in self.ready)
        return Measured(end - start, latencies, errors, deflate)

    def close(self, timeout: float = 60.0) -> None:
        for p in self.processes:
            if p.poll() is None and p.stdin is not None:
                with suppress(BrokenPipeError, ValueError):
                    p.stdin.write("stop\n")
                    p.stdin.close()
        for p in self.processes:
            try:
                p.wait(timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            for stream in (p.stdin, p.stdout):
                if stream is not None and not stream.closed:
                    stream.close()


def start_load(url: str, worlds: list[str], processes: int, **job: Any) -> Load:
    """Start the client processes (worlds split evenly), each given ``job`` (:mod:`.client` says
    what it holds), and wait until all are connected."""
    processes = max(1, min(processes, len(worlds)))
    load = Load()
    try:
        for k in range(processes):
            p = subprocess.Popen([sys.executable, "-m", "adapter.benchkit.client"],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            load.processes.append(p)
            load.send(json.dumps({"url": url, "token": TOKEN, "worlds": worlds[k::processes], **job}), [p])
        load.ready = [reply(p, "ready") for p in load.processes]
    except BaseException:
        load.close(timeout=5)
        raise
    return load


def run_load(url: str, worlds: list[str], messages: int, processes: int, *, deflate: bool) -> Measured:
    load = start_load(url, worlds, processes, messages=messages, deflate=deflate)
    try:
        return load.go()
    finally:
        load.close()


def reply(p: subprocess.Popen[str], key: str) -> Any:
    """The next line of a load (client) process, which must hold ``key``: the whole line for
    ``ready``, the value for the others."""
    assert p.stdout is not None
    line = p.stdout.readline()
    if not line:
        raise RuntimeError(f"a load process ended before sending {key!r} (exit {p.wait()})")
    data = json.loads(line)
    if key not in data:
        raise RuntimeError(f"a load process sent {line[:200]!r}, expected {key!r}")
    return data if key == "ready" else data[key]
