"""The bare python-socketio echo server: the physical limit the sidecar is measured against.

async_mode "aiohttp", websocket transport, one event (``hook``) whose ack is its payload,
default JSON and default options otherwise. Run: ``python -m adapter.benchkit.echo PORT``
(SIGTERM or SIGINT stops it).
"""

from __future__ import annotations

import sys
from typing import Any

import socketio
from aiohttp import web

if __name__ == "__main__":
    sio = socketio.AsyncServer(async_mode="aiohttp", transports=["websocket"])

    async def hook(sid: str, payload: Any = None) -> Any:
        return payload

    sio.on("hook", hook)
    app = web.Application()
    sio.attach(app)
    web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), access_log=None)
