"""A real ``python -m adapter serve`` process, and a client that behaves like the module's outbox.

:class:`Serve` starts the sidecar as the GM does (a subprocess, its own database), waits until
it listens, and kills it (SIGKILL, no goodbye) or stops it (SIGTERM). Its log goes to a file
the tests read. Every process it starts is killed at the latest when the test ends.

:class:`Outbox` is one world's module: it sends its messages in order with a window of
several in flight, keeps each until acked, and after a reconnect takes ``welcome.last_seq``
as what is stored and resends the rest (as ``vtt_module/scripts/outbox.js`` does).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import socketio

from tests.reliability.table import Reference, combats_of, read_state, session_data
from tests.support.sidecar import TOKEN
from tests.support.table import GM

ROOT = Path(__file__).resolve().parents[2]


def auth_for(world: str, ruleset: str, token: str = TOKEN) -> dict[str, Any]:
    return {"token": token, **session_data(world, ruleset)}


class Serve:
    """``python -m adapter serve`` on loopback, on one port and one database across restarts.

    ``port=0`` (what :func:`serve_factory` gives) lets the first start take the port the
    system gives (``--port 0``, read back from the "listening on" line), so no other process
    can take it between a guess and the bind; the restarts keep it."""

    def __init__(self, db: Path, port: int, log: Path, *, args: tuple[str, ...] = (),
                 env: dict[str, str] | None = None, token: str | None = TOKEN) -> None:
        self.db = db
        self.port = port
        self.log = log
        self.args = args
        self.env = dict(env or {})
        self.token = token
        #: where it listens (a test may leave it out, or ask for another address)
        self.host: tuple[str, ...] = ("--host", "127.0.0.1")
        self.proc: asyncio.subprocess.Process | None = None
        self.out = log.with_suffix(".out")
        self.starts = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        return [sys.executable, "-m", "adapter", "serve", *self.host,
                "--port", str(self.port), "--db", str(self.db), *self.args]

    async def start(self, timeout: float = 20.0) -> None:
        """Start and wait for the "listening" line; raise with the log if it never comes."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("INITIATIVE_SIDECAR_")}
        env.update(self.env)
        if self.token is not None:
            env["INITIATIVE_SIDECAR_TOKEN"] = self.token
        mark = self.out.stat().st_size if self.out.exists() else 0
        with open(self.log, "ab") as err, open(self.out, "ab") as out:
            self.proc = await asyncio.create_subprocess_exec(
                *self.command(), cwd=ROOT, env=env, stdout=out, stderr=err,
                stdin=asyncio.subprocess.DEVNULL,
            )
        self.starts += 1
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            said = self.out.read_bytes()[mark:] if self.out.exists() else b""
            if b"listening on" in said:
                if self.port == 0:
                    self.port = int(said.split(b"listening on", 1)[1].split(b"\n", 1)[0].rsplit(b":", 1)[1])
                return
            if self.proc.returncode is not None:
                break
            await asyncio.sleep(0.02)
        await self.stop()
        raise RuntimeError(f"the sidecar did not start:\n{self.log.read_text(errors='replace')[-3000:]}")

    def kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            os.kill(self.proc.pid, signal.SIGKILL)

    async def wait(self, timeout: float = 10.0) -> int:
        assert self.proc is not None
        return await asyncio.wait_for(self.proc.wait(), timeout)

    async def stop(self) -> None:
        """SIGTERM, then SIGKILL if it has not gone within 5 s."""
        if self.proc is None or self.proc.returncode is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(self.proc.wait(), 5)
        except TimeoutError:
            self.kill()
            await self.proc.wait()

    def logs(self) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return text + (self.out.read_text(errors="replace") if self.out.exists() else "")


class Disconnected(Exception):
    """The connection went away (the sidecar was killed) before the ack came."""


@dataclass
class Link:
    """One socket.io connection of an outbox."""

    sio: socketio.AsyncClient
    welcome: asyncio.Future[Any]
    waiting: dict[int, asyncio.Future[Any]] = field(default_factory=dict)
    down: bool = False
    sent: int = 0

    def fail_all(self) -> None:
        self.down = True
        for future in [*self.waiting.values(), self.welcome]:
            if not future.done():
                future.set_exception(Disconnected())
                future.exception()  # retrieved: whoever awaits it still gets the exception

    async def emit(self, event: str, data: Any) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self.sent += 1
        self.waiting[self.sent] = future

        def answered(ack: Any = None) -> None:
            if not future.done():
                future.set_result(ack)

        try:
            if self.down:
                raise ConnectionError("the connection is down")
            await self.sio.emit(event, data, callback=answered)
        except (socketio.exceptions.SocketIOError, ConnectionError, OSError):
            if not future.done():
                future.set_exception(Disconnected())
                future.exception()
        return future

    async def ask(self, event: str, data: Any) -> Any:
        """Emit and wait for the ack (10 s)."""
        return await asyncio.wait_for(await self.emit(event, data), 10)

    async def close(self) -> None:
        try:
            await asyncio.wait_for(self.sio.disconnect(), 5)
        except (TimeoutError, socketio.exceptions.SocketIOError, OSError):
            pass


async def open_link(url: str, auth: dict[str, Any], *, headers: dict[str, str] | None = None) -> Link:
    sio = socketio.AsyncClient(reconnection=False)
    loop = asyncio.get_running_loop()
    link = Link(sio=sio, welcome=loop.create_future())

    async def on_welcome(data: Any) -> None:
        if not link.welcome.done():
            link.welcome.set_result(data)

    async def on_disconnect(*_: Any) -> None:
        link.fail_all()

    sio.on("welcome", on_welcome)
    sio.on("disconnect", on_disconnect)

    try:
        await sio.connect(url, auth=auth, transports=["websocket"], wait_timeout=5, headers=headers or {})
    except BaseException:
        await sio.disconnect()  # closes its HTTP session too
        raise
    return link


@dataclass
class Outbox:
    """One world's module: ordered sends, a window in flight, resend after reconnect.

    Every check a run makes on the sidecar is here: a welcome's ``last_seq`` is at least the
    highest seq ever acked (an ack means "stored") and at most the highest sent; the restored
    world's plans and prompts equal the uninterrupted world's at that seq; every ack of a
    message not stored before equals the uninterrupted run's ack for it, byte for byte.
    """

    ref: Reference
    url: Callable[[], str]
    window: int = 8
    on_ack: Callable[[], None] = lambda: None
    wait_up: Callable[[], Awaitable[None]] | None = None
    acked: set[int] = field(default_factory=set)
    stored: int = 0  # everything up to here is stored (welcome.last_seq or contiguous acks)
    max_acked: int = 0
    max_sent: int = 0
    reconnects: int = 0
    unacked_but_stored: int = 0  # at a welcome: sent, not acked, and found stored
    resent: int = 0
    duplicates: int = 0

    @property
    def total(self) -> int:
        return len(self.ref.messages)

    async def run(self, *, deadline: float) -> None:
        while self.stored < self.total:
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.ref.world}: not done in time (stored {self.stored}/{self.total})")
            if self.wait_up is not None:
                await self.wait_up()
            try:
                link = await open_link(self.url(), auth_for(self.ref.world, self.ref.ruleset))
            except (socketio.exceptions.ConnectionError, OSError):
                await asyncio.sleep(0.05)
                continue
            try:
                await self.session(link)
            except (TimeoutError, Disconnected):
                pass
            finally:
                await link.close()

    async def session(self, link: Link) -> None:
        welcome = await asyncio.wait_for(link.welcome, 10)
        last = int(welcome["last_seq"])
        world = self.ref.world
        assert last >= self.max_acked, f"{world}: seq {self.max_acked} was acked but the sidecar restarted at {last}"
        assert last >= self.stored, f"{world}: seq {self.stored} was stored but the sidecar restarted at {last}"
        assert last <= self.max_sent, f"{world}: the sidecar claims seq {last}, never sent (sent {self.max_sent})"
        assert welcome["combats"] == combats_of(self.ref.worlds[last]), f"{world}: welcome after {last}"
        self.unacked_but_stored += sum(1 for s in range(self.stored + 1, last + 1) if s not in self.acked)
        self.reconnects += 1
        self.stored = max(self.stored, last)
        if last:  # resend the last stored message: a duplicate; then read the restored state
            event, data = self.ref.messages[last - 1]
            dup = await asyncio.wait_for(await link.emit(event, data), 10)
            self.duplicates += 1
            assert dup["duplicate"] is True and dup["seq"] == last, dup
            got = await read_state(link.ask, last, [c["combat_id"] for c in welcome["combats"]])
            assert got == self.ref.state_at(last), f"{world}: the state restored at seq {last} differs"
        await self.pump(link, last + 1)

    async def pump(self, link: Link, first: int) -> None:
        flight: dict[int, asyncio.Future[Any]] = {}
        nxt = first
        while self.stored < self.total:
            while nxt <= self.total and len(flight) < self.window:
                event, data = self.ref.messages[nxt - 1]
                if nxt <= self.max_sent:
                    self.resent += 1
                self.max_sent = max(self.max_sent, nxt)
                flight[nxt] = await link.emit(event, data)
                nxt += 1
            done, _ = await asyncio.wait(flight.values(), timeout=10, return_when=asyncio.FIRST_COMPLETED)
            if not done:
                raise TimeoutError
            for seq in [s for s, f in flight.items() if f.done()]:
                ack = flight.pop(seq).result()  # raises Disconnected
                assert ack == self.ref.acks[seq - 1], f"{self.ref.world} seq {seq}: {ack} != {self.ref.acks[seq - 1]}"
                self.acked.add(seq)
                self.max_acked = max(self.max_acked, seq)
                while self.stored + 1 in self.acked:
                    self.stored += 1
                self.on_ack()

    async def final_state(self) -> dict[str, Any]:
        """The world's plans and prompts now, read with a duplicate of the last message."""
        link = await open_link(self.url(), auth_for(self.ref.world, self.ref.ruleset))
        try:
            welcome = await asyncio.wait_for(link.welcome, 10)
            assert welcome["last_seq"] == self.total
            return await read_state(link.ask, self.total, [c["combat_id"] for c in welcome["combats"]])
        finally:
            await link.close()


__all__ = ["GM", "TOKEN", "Disconnected", "Link", "Outbox", "Serve", "auth_for", "open_link"]
