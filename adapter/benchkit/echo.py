"""The bare python-socketio echo server: the physical limit the sidecar is measured against.

async_mode "aiohttp", websocket transport, one event (``hook``) whose ack is its payload,
default JSON and default options otherwise. Run: ``python -m adapter.benchkit.echo PORT``.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import Any

import socketio
from aiohttp import web


def create_app() -> web.Application:
    sio = socketio.AsyncServer(async_mode="aiohttp", transports=["websocket"])

    async def hook(sid: str, payload: Any = None) -> Any:
        return payload

    sio.on("hook", hook)

    app = web.Application()
    sio.attach(app)
    return app


async def serve(port: int) -> None:
    runner = web.AppRunner(create_app(), access_log=None, handle_signals=False)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    print(f"echo listening on http://127.0.0.1:{port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1])))
