"""The database's files while the sidecar runs: one sidecar per database, a database it can
write, and the same files until it stops.

- A second ``serve`` on a database another one serves is refused (it would ack messages the
  first then refuses: the attack saw IntegrityErrors); the first keeps serving.
- A database that cannot be written is named for what it is (permissions, an immutable file,
  a read-only filesystem), not "damaged". As root ``chmod`` stops nothing, so each case is
  made for real: the sidecar runs without the capabilities that let root ignore file modes
  (``setpriv``), the file is made immutable (``chattr +i``), the folder is bind-mounted
  read-only in a private mount namespace (``unshare``).
- Deleting the database or its ``-wal`` while serving stops the acks (``store_unavailable``,
  seq not used up) and says so in the log; a deleted ``-wal``'s messages are copied into the
  database first, so a restart still has every acked message.
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from adapter.cli import parser, run
from adapter.store import Store
from tests.reliability.harness import Link, Serve, auth_for, open_link
from tests.reliability.table import Reference, build
from tests.support.sidecar import Running, refused


@pytest.fixture(scope="module")
def story() -> Reference:
    return build("world-files", "foundry-core", 3, fights=2, rounds=2)


async def send(link: Link, ref: Reference, seqs: range) -> list[dict[str, Any]]:
    acks = []
    for seq in seqs:
        event, data = ref.messages[seq - 1]
        acks.append(await asyncio.wait_for(await link.emit(event, data), 10))
    return acks


async def connected(serve: Serve, ref: Reference) -> tuple[Link, int]:
    link = await open_link(serve.url, auth_for(ref.world, ref.ruleset))
    welcome = await asyncio.wait_for(link.welcome, 10)
    return link, int(welcome["last_seq"])


# ---------------------------------------------------------------- one sidecar per database


async def test_a_second_sidecar_on_the_same_database_is_refused_and_the_first_keeps_serving(
    tmp_path: Path, story: Reference, serve_factory: Callable[..., Serve],
) -> None:
    db = tmp_path / "shared.db"
    first = serve_factory("first", db=db)
    second = serve_factory("second", db=db)
    await first.start()
    link, _ = await connected(first, story)
    assert all(a["ok"] for a in await send(link, story, range(1, 6)))
    with pytest.raises(RuntimeError, match="did not start"):
        await second.start()
    assert await second.wait() == 3
    err = second.log.read_text()
    assert first.proc is not None
    assert f"{db} is in use by another initiative-sidecar (pid {first.proc.pid}" in err, err
    assert "Traceback" not in err and "listening" not in second.out.read_text()
    assert all(a["ok"] for a in await send(link, story, range(6, 11))), "the first stopped serving"
    await link.close()
    first.kill()  # no goodbye: the kernel drops the lock with the process
    await first.wait()
    await second.start()
    link, last = await connected(second, story)
    assert last == 10
    await link.close()


# ---------------------------------------------------------------- a database it cannot write


class Wrapped(Serve):
    """``serve`` run under a command that changes what the process may do."""

    def __init__(self, *args: Any, prefix: list[str], **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.prefix = prefix

    def command(self) -> list[str]:
        return [*self.prefix, *super().command()]


def _works(*command: str) -> bool:
    return subprocess.run(command, capture_output=True).returncode == 0


def as_a_user() -> list[str]:
    """The prefix that makes file modes apply: root without the capabilities that let it
    ignore them (``setpriv``); nothing for a user, whom modes bind already."""
    if os.geteuid() != 0:
        return []
    if not shutil.which("setpriv"):
        pytest.skip("running as root without setpriv (util-linux): file modes cannot be made to apply")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--"]


@pytest.fixture
def stored(tmp_path: Path, story: Reference) -> Path:
    """A database holding a session, closed cleanly (no -wal left)."""
    folder = tmp_path / "game"
    folder.mkdir()
    db = folder / "game.db"
    store = Store(db)
    store.add_session(story.world, 0, {"world": story.world, "ruleset": story.ruleset})
    store.close()
    return db


@pytest.fixture
def read_only(request: pytest.FixtureRequest, stored: Path) -> Iterator[tuple[list[str], str]]:
    """Make ``stored`` read-only one way; the command prefix to run ``serve`` with, and what
    the refusal must say."""
    how = request.param
    if how == "permissions":
        prefix = as_a_user()
        os.chmod(stored, 0o444)
        yield prefix, "permissions do not let"
        os.chmod(stored, 0o644)
    elif how == "immutable-file":
        if not _works("chattr", "+i", str(stored)):
            pytest.skip("this filesystem has no immutable flag (chattr +i failed)")
        yield [], "immutable"
        subprocess.run(["chattr", "-i", str(stored)], check=True)
    else:
        folder = str(stored.parent)
        if not _works("unshare", "-rm", "sh", "-c", f"mount --bind -o ro {folder} {folder}"):
            pytest.skip("no private mount namespace here (unshare -rm failed)")
        script = f'mount --bind -o ro "{folder}" "{folder}" && exec "$@"'
        yield ["unshare", "-rm", "sh", "-c", script, "sh"], "mounted read-only"


@pytest.mark.parametrize("read_only", ["permissions", "immutable-file", "read-only-filesystem"], indirect=True)
async def test_a_read_only_database_is_named_read_only_not_damaged(
    tmp_path: Path, stored: Path, read_only: tuple[list[str], str],
) -> None:
    prefix, says = read_only
    before = stored.read_bytes()
    serve = Wrapped(stored, 0, tmp_path / "ro.log", prefix=prefix)
    try:
        with pytest.raises(RuntimeError, match="did not start"):
            await serve.start()
        assert await serve.wait() == 3
    finally:
        serve.kill()
    err = serve.log.read_text()
    assert f"the database {stored} is read-only" in err and says in err, err
    assert "is damaged" not in err and "backup" not in err and "Traceback" not in err, err
    assert stored.read_bytes() == before


async def test_the_same_database_made_writable_again_starts(
    tmp_path: Path, stored: Path,
) -> None:
    """The opposite case, so the refusals above are not a sidecar that refuses everything:
    run the same way, a writable database serves."""
    serve = Wrapped(stored, 0, tmp_path / "rw.log", prefix=as_a_user())
    await serve.start()
    await serve.stop()


# ---------------------------------------------------------------- files deleted while serving


@pytest.mark.parametrize("victim", ["-wal", ""], ids=["the-wal", "the-database"])
async def test_deleting_the_database_or_its_wal_while_serving_stops_the_acks_and_says_so(
    story: Reference, serve_factory: Callable[..., Serve], victim: str,
) -> None:
    serve = serve_factory(f"deleted{victim}")
    await serve.start()
    link, _ = await connected(serve, story)
    acked = await send(link, story, range(1, 11))
    assert all(a["ok"] for a in acked)
    os.unlink(f"{serve.db}{victim}")
    after = [(await send(link, story, range(11, 12)))[0] for _ in range(3)]  # the outbox resends it
    assert [(a["ok"], a["seq"], a["error"]["code"]) for a in after] == [(False, 11, "store_unavailable")] * 3
    await link.close()
    # a reconnect is answered too (not left hanging): refused, as its session cannot be stored
    again = await refused(serve.url, auth_for(story.world, story.ruleset))
    assert again["code"] == "store_unavailable" and "was deleted" in again["message"], again
    log = serve.log.read_text()
    assert f"{serve.db}{victim} was deleted while the sidecar was serving" in log, log
    assert log.count("was deleted while") == 1
    serve.kill()
    await serve.wait()
    if victim == "-wal":  # the acked messages were copied into the database before the kill
        await serve.start()
        link, last = await connected(serve, story)
        assert last == 10, f"acked up to 10, restarted at {last}"
        await link.close()


def test_a_deleted_database_is_noticed_between_messages_too(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The periodic check: the log says so without waiting for the next message."""
    store = Store(tmp_path / "idle.db", serving=True, watch_every=0.05)
    try:
        with caplog.at_level(logging.ERROR):
            os.replace(tmp_path / "idle.db", tmp_path / "moved.db")
            deadline = time.monotonic() + 5
            while store.gone is None and time.monotonic() < deadline:
                time.sleep(0.02)
        assert store.gone == f"{tmp_path / 'idle.db'} was deleted"
        assert any("was deleted while the sidecar was serving" in r.getMessage() for r in caplog.records)
    finally:
        store.close()


def test_a_database_in_a_folder_that_does_not_exist_is_named_so(tmp_path: Path) -> None:
    err = io.StringIO()
    args = parser().parse_args(["serve", "--db", str(tmp_path / "nowhere" / "game.db"), "--token", "t",
                                "--port", "0"])
    assert run(args, io.StringIO(), err) == 3
    assert f"the folder {tmp_path / 'nowhere'} of the database game.db does not exist" in err.getvalue()
    assert "damaged" not in err.getvalue() and "read-only" not in err.getvalue()


async def test_healthz_says_so_too_once_the_database_is_deleted(sidecar: Running) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{sidecar.url}/healthz") as response:
            assert response.status == 200
        os.unlink(sidecar.config.db)
        deadline = time.monotonic() + 10  # the watcher looks every 2 s
        while time.monotonic() < deadline:
            async with http.get(f"{sidecar.url}/healthz") as response:
                status, body = response.status, await response.text()
            if status != 200:
                break
            await asyncio.sleep(0.1)
    assert status == 503 and f"{sidecar.config.db} was deleted" in body, body
