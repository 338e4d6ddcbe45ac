"""The ``export`` event: the GM's page downloads its world's recording from the sidecar."""

from __future__ import annotations

import asyncio
import io
import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from unittest import mock

from adapter import cli, protocol
from adapter.server import sidecar_of
from adapter.store import LogEntry
from tests.server.test_roundtrip import hook, roll
from tests.support.sidecar import Running, auth, connect, until


async def test_export_answers_the_worlds_recording_which_replay_reads(sidecar: Running, tmp_path: Path) -> None:
    client = await connect(sidecar.url, auth())
    await asyncio.wait_for(client.welcome, 5)
    acks = [await client.send("hook", hook(1)), await client.send("hook", roll(2, "bbbb000000000002", 15))]
    other = await connect(sidecar.url, auth(world="otherWorld000001"))
    await asyncio.wait_for(other.welcome, 5)
    await other.send("hook", hook(1))
    answer = await client.send("export", {})
    protocol.check_outbound("export-answer", answer)
    assert answer["ok"] and answer["world"] == "world0000000001" and answer["lines"] == 3
    lines = [json.loads(line) for line in answer["recording"].splitlines()]
    assert [line["event"] for line in lines] == ["session", "hook", "hook"], "this world's only"
    assert "token" not in lines[0]["data"]
    for line in lines:
        protocol.validate("recording-line", line)
    # the file the module saves plays back headless with the acks the table got
    path = tmp_path / "download.jsonl"
    path.write_text(answer["recording"], encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    assert cli.run(cli.parser().parse_args(["replay", str(path)]), out, err) == 0, err.getvalue()
    replayed = [json.loads(line)["data"] for line in out.getvalue().splitlines() if json.loads(line)["type"] == "ack"]
    assert [a["plans"] for a in replayed] == [a["plans"] for a in acks]
    await client.close()
    await other.close()


async def test_export_matches_the_command_line_export(sidecar: Running, tmp_path: Path) -> None:
    client = await connect(sidecar.url, auth())
    await asyncio.wait_for(client.welcome, 5)
    await client.send("hook", hook(1))
    answer = await client.send("export", {})
    await client.close()
    await sidecar.stop()
    out = tmp_path / "cli.jsonl"
    args = cli.parser().parse_args(["export", "--world", "world0000000001", "--db", str(sidecar.config.db), "--out", str(out)])
    assert cli.run(args, io.StringIO(), io.StringIO()) == 0
    assert out.read_text(encoding="utf-8") == answer["recording"]
    await sidecar.start()


async def test_export_is_refused_to_a_connection_that_no_longer_writes_the_world(sidecar: Running) -> None:
    first = await connect(sidecar.url, auth())
    await asyncio.wait_for(first.welcome, 5)
    second = await connect(sidecar.url, auth())
    await asyncio.wait_for(second.welcome, 5)
    await until(lambda: any(name == "superseded" for name, _ in first.events))
    assert (await second.send("export", {}))["ok"]
    await second.close()


async def test_a_bad_export_is_refused_with_its_path_and_changes_nothing(sidecar: Running) -> None:
    client = await connect(sidecar.url, auth())
    await asyncio.wait_for(client.welcome, 5)
    await client.send("hook", hook(1))
    bad: Any = await client.send("export", {"world": "someoneElse00001"})
    protocol.check_outbound("export-answer", bad)
    assert bad["ok"] is False and bad["error"]["code"] == "invalid_message" and bad["error"]["path"] == ""
    again = await client.send("export", {})
    assert again["lines"] == 2
    ack = await client.send("hook", hook(2, "updateCombat"))
    assert ack["ok"] and ack["seq"] == 2, "the export used no seq"
    await client.close()


async def test_a_hosted_export_reads_the_store_in_a_worker_thread_not_on_the_event_loop(sidecar: Running) -> None:
    # hosted mode: a store call waits on PostgreSQL, and a long history read on the loop would
    # stall every other table; the SQLite sidecar reads on the loop (its calls are quick)
    assert sidecar.runner is not None
    running = sidecar_of(sidecar.runner.app)
    client = await connect(sidecar.url, auth())
    await asyncio.wait_for(client.welcome, 5)
    await client.send("hook", hook(1))
    store = running.worlds.store
    history = store.history
    readers: list[str] = []

    def watched(world: str, after_seq: int = 0) -> Iterator[LogEntry]:
        readers.append(threading.current_thread().name)
        return history(world, after_seq)

    with mock.patch.object(store, "history", watched):
        local = await client.send("export", {})
        running.pool = ThreadPoolExecutor(1, thread_name_prefix="connect")
        try:
            pooled = await client.send("export", {})
        finally:
            running.pool.shutdown(wait=True)
            running.pool = None
    assert readers == [threading.main_thread().name, "connect_0"]
    assert pooled["ok"] and pooled["recording"] == local["recording"] and pooled["lines"] == 2
    await client.close()
