"""A real sidecar on a free port, and real socket.io clients to talk to it (the fixture
``sidecar`` of ``tests/server/conftest.py`` starts one per test)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
import socketio
from aiohttp import web

from adapter.config import Config
from adapter.server import create_app

TOKEN = "test-token-0123456789"
GM = "gmUser0000000001"


async def until(check: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Whether ``check()`` came true within ``timeout`` seconds, polled every 20 ms: for what
    the server does a moment after the client (hearing of a close, writing a snapshot). The
    timeout is generous because a loaded CI machine can stall a process for seconds; a
    passing check returns at once, so it costs nothing when the machine is quiet."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not check():
        if loop.time() > end:
            return False
        await asyncio.sleep(0.02)
    return True


def free_port() -> int:
    """A port free at this instant (racy: another process can take it before it is bound).
    Prefer port 0 where the listener can report its port (``Running``, ``Serve``); this is
    for the services that cannot (nginx upstreams, PostgreSQL, Redis)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Running:
    config: Config
    runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.config.port}"

    async def start(self) -> None:
        """Listen on ``config.port``; on 0, on the port the system gives (kept for a restart):
        a port picked free beforehand can be taken by another process before the bind."""
        self.runner = web.AppRunner(create_app(self.config), handle_signals=False)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", self.config.port).start()
        if self.config.port == 0:
            self.config = replace(self.config, port=self.runner.addresses[0][1])

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None

    async def restart(self) -> None:
        await self.stop()
        await self.start()


def auth(world: str = "world0000000001", ruleset: str = "foundry-core", **over: Any) -> dict[str, Any]:
    data = {"token": TOKEN, "world": world, "ruleset": ruleset, "settings": {}, "gm_users": [GM],
            "protocol": 1, "module_version": "0.1.0", "foundry_version": "13.350", "system": "dnd5e"}
    data.update(over)
    return data


@dataclass
class Client:
    """A socket.io client that keeps what the server sent it."""

    sio: socketio.AsyncClient
    welcome: asyncio.Future[Any]
    events: list[tuple[str, Any]] = field(default_factory=list)
    refused: list[Any] = field(default_factory=list)

    async def send(self, event: str, payload: Any, timeout: float = 10) -> Any:
        return await self.sio.call(event, payload, timeout=timeout)

    async def close(self) -> None:
        await self.sio.disconnect()


async def connect(url: str, auth_data: dict[str, Any]) -> Client:
    sio = socketio.AsyncClient(reconnection=False)
    loop = asyncio.get_running_loop()
    client = Client(sio=sio, welcome=loop.create_future())

    async def on_welcome(data: Any) -> None:
        if not client.welcome.done():
            client.welcome.set_result(data)

    async def on_error(data: Any) -> None:
        client.refused.append(data)

    sio.on("welcome", on_welcome)
    sio.on("connect_error", on_error)

    for name in ("plan", "prompt", "superseded"):
        sio.on(name, (lambda n: (lambda data: client.events.append((n, data))))(name))
    await sio.connect(url, auth=auth_data, transports=["websocket"], wait_timeout=5)
    return client


async def refused(url: str, auth_data: Any) -> dict[str, Any]:
    """Try to connect; return the connect error's data (code, message)."""
    sio = socketio.AsyncClient(reconnection=False)
    errors: list[Any] = []
    sio.on("connect_error", lambda data: errors.append(data))
    with pytest.raises(socketio.exceptions.ConnectionError):
        await sio.connect(url, auth=auth_data, transports=["websocket"], wait_timeout=5)
    await sio.disconnect()
    assert errors, "the server gave no connect error"
    return dict(errors[0]["data"])
