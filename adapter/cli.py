"""The command line: ``serve``, ``replay``, ``export``, ``schemas``, ``module`` (and ``bench``).

``main(argv)`` parses and exits; ``run(args, stdout, stderr) -> exit code`` does the work
(tests call it). Each command imports what it needs when it runs, so ``serve`` loads no
replay, bench, ``rich`` or ``jsonschema`` (tests/test_startup.py).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from contextlib import nullcontext, suppress
from pathlib import Path
from typing import Any, TextIO


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="initiative-sidecar",
        description="Initiative house rules for Foundry VTT: the sidecar service and its tools.",
    )
    sub = top.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the sidecar (socket.io on aiohttp)")
    serve.add_argument("--host", help="address to bind (default 127.0.0.1: this machine only)")
    serve.add_argument("--allow-remote", action="store_const", const=True,
                       help="allow a --host other than loopback (dangerous: other machines can reach the sidecar)")
    serve.add_argument("--port", type=int, help="port (default 8765)")
    serve.add_argument("--db", help="SQLite database file (default ./initiative-sidecar.db)")
    serve.add_argument("--token", help="the shared token (default: $INITIATIVE_SIDECAR_TOKEN, "
                       "else one stored beside the database)")
    serve.add_argument("--tokens-file", help="JSON {world id: token} for per-world tokens")
    serve.add_argument("--origins", help="comma-separated Foundry origins the socket accepts "
                       "(default: any, with the right token)")
    serve.add_argument("--base-path",
                       help="serve every route under this path (/initiative-sidecar), for a proxy in front")
    serve.add_argument("--public-origin",
                       help="comma-separated origins a reverse proxy serves the sidecar at "
                       "(https://foundry.example.org): the status page answers them")
    serve.add_argument("--max-bytes", type=int, help="application size limit per message")
    serve.add_argument("--snapshot-every", type=int, help="messages between snapshots")
    serve.add_argument("--rate", type=float, help="messages per second per connection")
    serve.add_argument("--burst", type=int, help="burst above the rate")
    serve.add_argument("--connect-timeout", type=float,
                       help="seconds a socket may stay open before it authenticates (default 5)")
    serve.add_argument("--pending-per-address", type=int,
                       help="sockets one address may hold before they authenticate (default 64)")
    serve.add_argument("--max-outgoing-bytes", type=int,
                       help="bytes waiting to be sent to a client before it is cut off (default 8 MiB)")
    serve.add_argument("--log-level", help="DEBUG, INFO, WARNING...")
    serve.add_argument("--ws-compression", action="store_const", const=True,
                       help="accept permessage-deflate (off by default: it costs CPU and memory on loopback)")
    serve.add_argument("--metrics-from",
                       help="comma-separated networks besides loopback that may read /healthz and /metrics")
    serve.add_argument("--store", help="hosted mode: a postgresql:// URL shared by sidecar processes "
                       "(default: the SQLite file --db); see docs/hosting.md")
    serve.add_argument("--redis", help="hosted mode: a redis:// URL carrying broadcasts between processes")

    rep = sub.add_parser("replay", help="replay a recording headless (no database)")
    rep.add_argument("file", help="recording (JSON Lines); - for standard input")
    rep.add_argument("--expect", metavar="GOLDEN", help="compare with a golden output; exit 1 on the first difference")
    rep.add_argument("--pretty", action="store_true", help="print the session for a person")
    rep.add_argument("--html", metavar="OUT", help="write a self-contained page: each combat round by round")

    exp = sub.add_parser("export", help="write a world's stored messages as a recording")
    exp.add_argument("--world", required=True)
    exp.add_argument("--db", default="initiative-sidecar.db")
    exp.add_argument("--out", help="output file (default: standard output)")

    sch = sub.add_parser("schemas", help="list the schemas, or check them and the recordings")
    sch.add_argument("--check", action="store_true", help="validate the schemas and every recorded message")
    sch.add_argument("--recordings", default="tests/recordings", help="folder of recordings to check")

    mod = sub.add_parser("module", help="write the Foundry module's manifest and zip to a folder (make release)")
    mod.add_argument("--out", default="dist", help="folder to write module.json and the zip to (default dist)")
    mod.add_argument("--url", default=None,
                     help="where they will be published: the manifest's manifest/download URLs (default: "
                     "the project's latest release)")

    bench = sub.add_parser("bench", help="benchmark the sidecar against a bare socket.io echo server")
    bench.add_argument("--quick", action="store_true", help="a short run (smaller counts)")
    bench.add_argument("--json", dest="json_out", help="also write the results as JSON to this file")
    bench.add_argument("--client-processes", type=int,
                       help="client processes for the multi-client scenarios (default 2)")
    bench.add_argument("--rounds", type=_rounds,
                       help="rounds of echo-then-sidecar per scenario (default 3, 1 with --quick): more "
                       "rounds for a decision on a noisy machine")
    bench.add_argument("--no-deflate", action="store_true",
                       help="clients do not offer permessage-deflate (a browser does)")
    bench.add_argument("--hosted", action="store_true",
                       help="1 and 2 processes on PostgreSQL behind nginx against SQLite (docs/hosting.md)")
    bench.add_argument("--combat-sizes", action="store_true",
                       help="only the cost of a turn change with 5, 20, 80 and 200 combatants (replayed)")
    # tables held at a message rate each (docs/performance.md, "Hosted capacity")
    bench.add_argument("--tables", type=_table_counts,
                       help="with --hosted: hold this many tables (comma-separated counts, one step each) "
                       "connected through nginx, each sending --rate messages per second")
    bench.add_argument("--rate", type=_table_rate, help="with --tables: messages per second per table (default 0.2)")
    bench.add_argument("--seconds", type=float, help="with --tables: seconds of load per step (default 30)")
    bench.add_argument("--sidecars", type=int, help="with --tables: sidecar processes behind nginx (default 3)")
    return top


def _table_counts(text: str) -> list[int]:
    from .benchkit.capacity import parse_tables

    return parse_tables(text)


def _table_rate(text: str) -> float:
    from .benchkit.capacity import positive_rate

    return positive_rate(text)


def main(argv: Sequence[str] | None = None) -> None:
    args = parser().parse_args(argv)
    sys.exit(run(args, sys.stdout, sys.stderr))


def run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    commands = {"serve": serve, "replay": replay, "export": export, "schemas": schemas, "module": module,
                "bench": bench}
    return commands[args.command](args, stdout, stderr)


def bench(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    if args.hosted and args.tables:
        from .benchkit.capacity import run_tables

        return run_tables(args, stdout, stderr)
    if args.hosted:
        from .benchkit.capacity import run_hosted

        return run_hosted(args, stdout, stderr)
    if args.combat_sizes:
        from .benchkit.replayed import run_only

        return run_only(args, stdout, stderr)
    from .bench import run_bench

    return run_bench(args, stdout, stderr)


def _rounds(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= 100:
        raise argparse.ArgumentTypeError(f"{value} rounds: from 1 to 100")
    return value


def serve(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from .config import from_args
    from .errors import CannotListen, ConfigError, StoreUnusable
    from .server.run import serve_forever

    try:
        config = from_args(args, announce=lambda text: print(text, file=stdout, flush=True))
    except ConfigError as error:
        stderr.write(f"initiative-sidecar: {error}\n")
        return 2
    logging.basicConfig(
        level=getattr(logging, config.log_level, logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=stderr,
    )
    try:
        serve_forever(config, stdout)
    except (StoreUnusable, CannotListen) as error:  # the database (3) or the address (4)
        stderr.write(f"initiative-sidecar: {error}\n")
        return 3 if isinstance(error, StoreUnusable) else 4
    return 0


def replay(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from .progress import tracked
    from .replay import Replay, compare, dumps, replay_lines
    from .rulesets import RULESETS

    try:
        handle: TextIO = sys.stdin if args.file == "-" else open(args.file, encoding="utf-8")
    except OSError as error:
        stderr.write(f"initiative-sidecar: cannot read {args.file}: {error}\n")
        return 2
    with handle:
        lines = handle.readlines()
    state = Replay(rulesets=RULESETS)  # the composition root of a replay: the built-in rulesets
    outputs = list(replay_lines(tracked(lines, len(lines), "replaying", stdout, stderr), state))
    for problem in state.problems:
        stderr.write(problem + "\n")
    inputs = _parsed_inputs(lines) if args.html or args.pretty else {}
    if args.html:
        from .replay_html import render, timeline

        page = render(Path(args.file).name, timeline(inputs, outputs), state.problems)
        Path(args.html).write_text(page, encoding="utf-8")
        stdout.write(f"wrote {args.html}\n")
    if args.pretty:
        from .replay_html import pretty

        for text in pretty(outputs, inputs):
            stdout.write(text + "\n")
    elif not args.expect and not args.html:
        for item in outputs:
            stdout.write(dumps(item) + "\n")
    if args.expect:
        with open(args.expect, encoding="utf-8") as golden:
            difference = compare(outputs, golden)
        if difference is not None:
            stderr.write(difference + "\n")
            return 1
        stdout.write(f"{len(outputs)} output lines match {args.expect}\n")
    return 0


def _parsed_inputs(lines: Sequence[str]) -> dict[int, Any]:
    parsed = {}
    for number, line in enumerate(lines, start=1):
        with suppress(ValueError):  # a line replay reported as not JSON
            parsed[number] = json.loads(line)
    return parsed


def export(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from .errors import StoreUnusable
    from .progress import tracked
    from .replay import recorded
    from .store import Store

    if not Path(args.db).exists():
        stderr.write(f"initiative-sidecar: no database at {args.db}\n")
        return 2
    try:
        store = Store(args.db)
    except StoreUnusable as error:
        stderr.write(f"initiative-sidecar: {error}\n")
        return 3
    try:
        total = sum(store.db.execute(f"SELECT COUNT(*) FROM {table} WHERE world = ?", (args.world,)).fetchone()[0]
                    for table in ("messages", "sessions"))  # what history() yields, for the progress bar
        entries = list(tracked(store.history(args.world), total, "exporting", stdout, stderr))
    finally:
        store.close()
    if not entries:
        stderr.write(f"initiative-sidecar: world {args.world!r} has nothing stored\n")
        return 1
    with open(args.out, "w", encoding="utf-8") if args.out else nullcontext(stdout) as out:
        out.writelines(recorded(entries))
    return 0


def module(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from .server.module_files import RELEASE_URL, release

    for path in release(Path(args.out), args.url or RELEASE_URL):
        stdout.write(f"wrote {path}\n")
    return 0


def schemas(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from . import protocol
    from .errors import InvalidMessage

    if not args.check:
        for name in protocol.load_schemas():
            stdout.write(f"{name}.schema.json\n")
        return 0
    problems = protocol.check_schemas()
    checked = expected_invalid = 0
    for recording in sorted(Path(args.recordings).rglob("*.jsonl")):
        if recording.name.endswith(".golden.jsonl"):
            continue
        refused = _golden_invalid_lines(recording)
        for number, line in enumerate(recording.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            checked += 1
            try:
                protocol.validate("recording-line", json.loads(line))
            except (ValueError, InvalidMessage) as error:
                if number in refused:
                    expected_invalid += 1
                else:
                    problems.append(f"{recording}:{number}: {getattr(error, 'message', str(error))}")
    for problem in problems:
        stderr.write(problem + "\n")
    stdout.write(
        f"{len(protocol.load_schemas())} schemas, {checked} recorded lines checked "
        f"({expected_invalid} invalid on purpose, as their golden files expect): "
        f"{'OK' if not problems else f'{len(problems)} problems'}\n"
    )
    return 1 if problems else 0


def _golden_invalid_lines(recording: Path) -> set[int]:
    """The input lines the recording's golden file answers invalid_message or too_large."""
    golden = recording.with_name(recording.name.removesuffix(".jsonl") + ".golden.jsonl")
    if not golden.exists():
        return set()
    acks = (json.loads(line) for line in golden.read_text(encoding="utf-8").splitlines() if line.strip())
    return {item["in"] for item in acks if item.get("type") == "ack"
            and ((item.get("data") or {}).get("error") or {}).get("code") in ("invalid_message", "too_large")}
