"""The hosted stack's benches (see docs/performance.md), on PostgreSQL, Redis and nginx.

``bench --hosted`` (:func:`run_hosted`): the hosted topology against the default one, in one
run. One sidecar on SQLite reached directly, then 1 and 2 sidecar processes on PostgreSQL with
Redis rooms behind nginx, under the same load (one world per client, each sending its next
``hook`` when the previous ack arrives); each set-up's throughput and latency, the scaling
from 1 to 2 processes and the hosted stack's cost.

``bench --hosted --tables N[,N...] --rate R`` (:func:`run_tables`): how many tables the hosted
stack holds. PostgreSQL (fsync on), Redis, nginx and ``--sidecars`` sidecar processes on
loopback; for each N, N tables (:mod:`.client`) each send a ``hook`` every 1/R seconds for
``--seconds``. Reports the acks' p50/p99, unanswered, refused and lost messages, memory, CPU
per message and nginx's spread, then the largest N whose p99 stayed at or under 100 ms.
docs/performance.md, "Hosted capacity", has the method and the figures.
"""

from __future__ import annotations

import argparse
import bisect
import math
import os
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any, TextIO

from . import figures, load, services

P99_TARGET_MS = 100.0
DEFAULT_TABLES = (250, 1000)
TABLES_PER_CLIENT = 2500
SETUPS = ("sqlite", "postgresql x1", "postgresql x2")
#: ``bench --hosted``: (worlds, messages per world, rounds)
SIZES = {"full": (100, 100, 2), "quick": (20, 30, 1)}
#: nginx's points on its ring per unit of an upstream server's weight
POINTS_PER_WEIGHT = 160


def parse_tables(text: str) -> list[int]:
    """``250,1000,2000`` -> [250, 1000, 2000] (argparse type)."""
    try:
        counts = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--tables takes counts separated by commas, not {text!r}") from None
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError("--tables takes positive counts, e.g. 250,1000,2000")
    return counts


def positive_rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--rate takes messages per second, not {text!r}") from None
    if not 0 < value <= 100:
        raise argparse.ArgumentTypeError("--rate takes messages per second per table, above 0 and at most 100")
    return value


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process so far (seconds)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def established(ports: list[int]) -> dict[int, int]:
    """How many established TCP connections each local port has (the sidecars' side of
    nginx's connections): the hash's spread, read from /proc/net/tcp."""
    counts = dict.fromkeys(ports, 0)
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        parts = line.split()
        port = int(parts[1].rsplit(":", 1)[1], 16)
        if parts[3] == "01" and port in counts:
            counts[port] += 1
    return counts


def ring_spread(keys: Sequence[str], servers: Sequence[str], weight: int = 1) -> list[int]:
    """How many of ``keys`` each server (``host:port``) gets on nginx's ``hash $arg_world
    consistent`` ring, computed as nginx computes it, to say where worlds go and how evenly.

    nginx (ngx_http_upstream_hash_module, ``consistent``: ketama) gives each server
    ``160 x weight`` points: the CRC-32 of ``host \\0 port`` followed by the previous point's 4
    bytes (little-endian), the first following 0. A key goes to the server of the first point
    at or after the CRC-32 of the key, wrapping around.
    """
    points: list[tuple[int, int]] = []
    for index, server in enumerate(servers):
        host, _, port = server.rpartition(":")
        base = zlib.crc32(port.encode(), zlib.crc32(b"\0", zlib.crc32(host.encode())))
        previous = 0
        for _ in range(POINTS_PER_WEIGHT * weight):
            previous = zlib.crc32(struct.pack("<I", previous), base)
            points.append((previous, index))
    points.sort()  # nginx sorts by hash; equal hashes keep no particular order (rare)
    hashes = [p for p, _ in points]
    counts = [0] * len(servers)
    for key in keys:
        at = bisect.bisect_left(hashes, zlib.crc32(key.encode()))
        counts[points[at % len(points)][1]] += 1
    return counts


def run_tables(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    if gone := services.missing(*services.NEEDS):
        stderr.write(f"initiative-sidecar bench --hosted needs {', '.join(gone)} "
                     "(Debian: apt-get install postgresql redis-server nginx)\n")
        return 2
    counts: list[int] = args.tables or list(DEFAULT_TABLES)
    rate: float = args.rate or 0.2
    seconds: float = getattr(args, "seconds", None) or 30.0
    sidecars: int = getattr(args, "sidecars", None) or 3
    began = time.perf_counter()
    steps: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="sidecar-capacity-") as tmp, services.postgres(durable=True) as pg, \
            services.redis() as redis:
        for n, tables in enumerate(counts):
            print(f"bench --hosted --tables: {tables} tables at {rate:g} messages/s each, {seconds:g} s",
                  file=stdout, flush=True)
            with ExitStack() as stack:  # fresh processes for each step: its memory is its own
                store = pg.new_database()
                procs, url = services.hosted(stack, Path(tmp) / str(n), sidecars, store, redis.url,
                                             workers=2, connections=2 * tables + 512)
                worlds = [f"cap{n}t{i:05d}" for i in range(tables)]
                steps.append(_step(url, procs, store, worlds, rate, seconds))
    fit = [s["tables"] for s in steps if s["p99_ms"] <= P99_TARGET_MS and s["unanswered"] == 0 and s["lost"] == 0]
    result: dict[str, Any] = {
        "machine": figures.machine(), "rate": rate, "seconds_per_step": seconds, "sidecars": sidecars,
        "steps": steps, "largest_tables_p99_within_100ms": max(fit) if fit else None,
        "seconds": round(time.perf_counter() - began, 1),
    }
    lost = sum(s["lost"] for s in steps)
    return figures.report(result, table(result), args, stdout, stderr,
                          f"{lost} acked messages are not in the store" if lost else "")


def _step(url: str, procs: list[services.Server], store: str, worlds: list[str], rate: float,
          seconds: float) -> dict[str, Any]:
    pids = [s.process.pid for s in procs]
    idle = [s.rss_mb() for s in procs]
    clients = max(1, math.ceil(len(worlds) / TABLES_PER_CLIENT))
    tables = load.start_load(url, worlds, clients, rate=rate, seconds=seconds, timeout=10.0)
    try:
        loads = tables.processes
        connect_s = max(float(r["connect_s"]) for r in tables.ready)
        connected = [s.rss_mb() for s in procs]
        spread = list(established([s.port for s in procs]).values())
        cpu = [cpu_seconds(pid) for pid in pids]
        client_cpu = [cpu_seconds(p.pid) for p in loads]
        tables.send("go")
        spies = _profilers(pids, len(worlds), seconds)
        results = [load.reply(p, "result") for p in loads]
        cpu_used = sum(cpu_seconds(pid) for pid in pids) - sum(cpu)
        client_used = sum(cpu_seconds(p.pid) for p in loads) - sum(client_cpu)
        peak = [s.rss_mb() for s in procs]
        for spy in spies:
            spy.wait(60)
    finally:
        tables.close()
    latencies = [x for r in results for x in r["latencies"]]
    acked: dict[str, int] = {w: c for r in results for w, c in r["acked"].items()}
    messages = len(latencies)
    return {
        "tables": len(worlds), "connect_s": connect_s, "messages": messages,
        "msgs_per_s": round(messages / seconds, 1),
        "p50_ms": round(figures.percentile(latencies, 0.50) * 1e3, 2),
        "p99_ms": round(figures.percentile(latencies, 0.99) * 1e3, 2),
        "max_ms": round(max(latencies, default=0.0) * 1e3, 1),
        "unanswered": sum(r["unanswered"] for r in results),
        "refused": sum(r["refused"] for r in results),
        "lost": _lost(store, acked),
        "rss_mb": [round(x, 1) for x in peak], "idle_rss_mb": [round(x, 1) for x in idle],
        # connected and loaded, before any message; then after the load (each world's state grown)
        "kb_per_connection": round((sum(connected) - sum(idle)) * 1024 / len(worlds), 1),
        "kb_per_table_after": round((sum(peak) - sum(idle)) * 1024 / len(worlds), 1),
        "sidecar_cpu_ms_per_message": round(cpu_used * 1e3 / messages, 3) if messages else None,
        "sidecar_cpu_share": round(cpu_used / seconds, 2),
        "load_cpu_share": round(client_used / seconds, 2),
        "spread": spread,
        # where nginx's ring sends these worlds, computed: "spread" if it is nginx's own
        "ring_spread": ring_spread(worlds, [f"127.0.0.1:{s.port}" for s in procs], services.upstream_weight()),
        "ports": [s.port for s in procs],
    }


def _profilers(pids: list[int], tables: int, seconds: float) -> list[subprocess.Popen[bytes]]:
    """With ``SIDECAR_BENCH_PYSPY=<folder>``: py-spy samples each sidecar during the load
    (collapsed stacks in ``<folder>/<tables>-<pid>.txt``), to see where its CPU goes."""
    folder = os.environ.get("SIDECAR_BENCH_PYSPY")
    if not folder:
        return []
    return [subprocess.Popen([str(Path(sys.executable).parent / "py-spy"), "record", "--pid", str(pid), "--format", "raw", "--gil",
                              "--duration", str(max(1, int(seconds) - 2)), "-o", f"{folder}/{tables}-{pid}.txt"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for pid in pids]


def _lost(store: str, acked: dict[str, int]) -> int:
    """Messages acked ok whose row is not in PostgreSQL (each table's seqs run from 1 up, so
    the acked count of a world must not exceed its stored rows)."""
    import psycopg

    with psycopg.connect(store) as db:
        rows = db.execute("SELECT world, count(*) FROM messages WHERE world = ANY(%s) GROUP BY world",
                          (list(acked),)).fetchall()
    stored: dict[str, int] = {str(world): int(count) for world, count in rows}
    return sum(max(0, count - stored.get(world, 0)) for world, count in acked.items())


def table(result: dict[str, Any]) -> str:
    lines = [f"{'tables':>7} {'msgs/s':>7} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'unans.':>6} {'lost':>4} "
             f"{'MB/process':>20} {'kB/conn':>8} {'kB/table':>8} {'CPU ms/msg':>10} {'spread':>16} {'connect s':>9}"]
    for s in result["steps"]:
        lines.append(f"{s['tables']:>7} {s['msgs_per_s']:>7.0f} {s['p50_ms']:>8.2f} {s['p99_ms']:>8.2f} "
                     f"{s['max_ms']:>8.1f} {s['unanswered']:>6} {s['lost']:>4} "
                     f"{'/'.join(f'{x:.0f}' for x in s['rss_mb']):>20} {s['kb_per_connection']:>8.1f} "
                     f"{s['kb_per_table_after']:>8.1f} "
                     f"{s['sidecar_cpu_ms_per_message'] or 0:>10.3f} {'/'.join(map(str, s['spread'])):>16} "
                     f"{s['connect_s']:>9.1f}")
    best = result["largest_tables_p99_within_100ms"]
    lines.append(f"largest N with p99 <= {P99_TARGET_MS:.0f} ms (none unanswered, none lost) at "
                 f"{result['rate']:g} messages/s a table: {best if best is not None else 'none of those tried'}")
    lines.append(f"{result['sidecars']} sidecar processes behind nginx (2 workers), PostgreSQL, Redis; "
                 f"{result['machine']['cpus']} CPUs, load average {result['machine']['load_average']}; "
                 f"{result['seconds_per_step']:g} s a step; {result['seconds']} s in all")
    return "\n".join(lines)


def run_hosted(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    if gone := services.missing(*services.NEEDS):
        stderr.write(f"initiative-sidecar bench --hosted needs {', '.join(gone)} "
                     "(Debian: apt-get install postgresql redis-server nginx)\n")
        return 2
    clients, messages, rounds = SIZES["quick" if getattr(args, "quick", False) else "full"]
    procs = getattr(args, "client_processes", None) or 2
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="sidecar-bench-") as tmp, services.postgres() as pg, \
            services.redis() as redis:
        runs: dict[str, list[load.Measured]] = {s: [] for s in SETUPS}
        for r in range(rounds):
            for n, setup in enumerate(SETUPS):
                print(f"bench --hosted: round {r + 1}/{rounds}, {setup}", file=stdout, flush=True)
                worlds = [f"hosted{r}s{n}w{i:04d}" for i in range(clients)]
                got = _one(setup, Path(tmp) / f"{r}-{n}", pg, redis.url, worlds, messages, procs)
                runs[setup].append(got)
    result: dict[str, Any] = {
        "machine": figures.machine(), "clients": clients, "messages_per_client": messages,
        "rounds": rounds, "client_processes": procs,
        "setups": {s: figures.summary(runs[s]) for s in SETUPS},
    }
    side = result["setups"]
    result["scaling_2_over_1"] = figures.ratio(side["postgresql x2"]["msgs_per_s"], side["postgresql x1"]["msgs_per_s"])
    result["cost_x1_over_sqlite"] = figures.ratio(side["postgresql x1"]["msgs_per_s"], side["sqlite"]["msgs_per_s"])
    result["errors"] = sum(s["errors"] for s in side.values())
    result["seconds"] = round(time.perf_counter() - began, 1)
    return figures.report(result, hosted_table(result), args, stdout, stderr,
                          f"{result['errors']} messages were refused or failed" if result["errors"] else "")


def _one(setup: str, tmp: Path, pg: services.Postgres, redis: str, worlds: list[str], messages: int,
         procs: int) -> load.Measured:
    tmp.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        if setup == "sqlite":
            server = services.start("sidecar", tmp / "sidecar.db")
            stack.callback(server.stop)
            url = server.url
        else:
            url = services.hosted(stack, tmp, int(setup.rsplit("x", 1)[1]), pg.new_database(), redis)[1]
        return load.run_load(url, worlds, messages, procs, deflate=False)


def hosted_table(result: dict[str, Any]) -> str:
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

