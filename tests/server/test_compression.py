"""The sidecar declines permessage-deflate unless told otherwise."""

from __future__ import annotations

from pathlib import Path

import aiohttp

from adapter.config import Config
from tests.support.sidecar import Running


async def handshake_extensions(url: str) -> str | None:
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(f"{url}/socket.io/?EIO=4&transport=websocket", compress=15) as ws:
            extensions = ws._response.headers.get("Sec-WebSocket-Extensions")  # what the server agreed
            await ws.close()
            return extensions


async def test_a_client_offering_deflate_gets_none_by_default(sidecar: Running) -> None:
    assert await handshake_extensions(sidecar.url) is None


async def test_ws_compression_setting_accepts_it(tmp_path: Path) -> None:
    running = Running(Config(port=0, db=tmp_path / "s.db", token="t" * 12, ws_compression=True))
    await running.start()
    try:
        assert "permessage-deflate" in (await handshake_extensions(running.url) or "")
    finally:
        await running.stop()
