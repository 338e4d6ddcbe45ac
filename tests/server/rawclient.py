"""A socket.io client at the frame level (aiohttp websocket), for what python-socketio will not send.

It speaks Engine.IO 4 / Socket.IO 5 by hand: ``0{...}`` open, ``40{auth}`` connect, ``42<id>[...]``
events, ``43<id>[...]`` acks, ``2``/``3`` ping/pong. A test can send any text or bytes as a
frame (a 5,000-digit integer, a lone surrogate, a binary event announcing attachments, garbage)
and read what comes back. Pings are answered while :meth:`ack` waits.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp


class Closed(Exception):
    """The server closed the websocket."""


class RawClient:
    def __init__(self, session: aiohttp.ClientSession, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.session = session
        self.ws = ws
        self.next_id = 1
        self.events: list[Any] = []
        self.acks: dict[int, Any] = {}
        self.connect_reply: Any = None

    @classmethod
    async def open(cls, url: str, *, headers: dict[str, str] | None = None) -> RawClient:
        """The websocket, with Engine.IO's open packet read (no Socket.IO CONNECT sent)."""
        session = aiohttp.ClientSession()
        try:
            ws = await session.ws_connect(f"{url}/socket.io/?EIO=4&transport=websocket",
                                          headers=headers or {}, max_msg_size=0)
            first = await asyncio.wait_for(ws.receive(), 5)
        except BaseException:
            await session.close()
            raise
        assert isinstance(first.data, str) and first.data.startswith("0"), first
        return cls(session, ws)

    async def connect(self, auth: Any, timeout: float = 5) -> Any:
        """Send the Socket.IO CONNECT with ``auth``; the server's reply (``40{sid}`` data, or the
        connect error's data)."""
        await self.send_text("40" + json.dumps(auth))
        while self.connect_reply is None:
            await self._read(timeout)
        return self.connect_reply

    async def send_text(self, text: str) -> None:
        await self.ws.send_str(text)

    async def send_bytes(self, data: bytes) -> None:
        await self.ws.send_bytes(data)

    async def emit_raw(self, event_json_tail: str) -> int:
        """Send ``42<id>[...]`` where the caller gives the JSON array text; returns the ack id."""
        ack_id = self.next_id
        self.next_id += 1
        await self.send_text(f"42{ack_id}{event_json_tail}")
        return ack_id

    async def emit(self, event: str, payload: Any) -> int:
        return await self.emit_raw(json.dumps([event, payload]))

    async def ack(self, ack_id: int, timeout: float = 5) -> Any:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while ack_id not in self.acks:
            left = deadline - loop.time()
            if left <= 0:
                raise TimeoutError(f"no ack {ack_id} within {timeout} s")
            await self._read(left)
        return self.acks.pop(ack_id)

    async def call(self, event: str, payload: Any, timeout: float = 5) -> Any:
        return await self.ack(await self.emit(event, payload), timeout)

    async def closed(self, timeout: float = 5) -> bool:
        """Read until the server closes the socket (True) or the time is up (False)."""
        try:
            while True:
                await self._read(timeout)
        except Closed:
            return True
        except TimeoutError:
            return False

    async def _read(self, timeout: float) -> None:
        msg = await asyncio.wait_for(self.ws.receive(), timeout)
        if msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.CLOSING,
                        aiohttp.WSMsgType.ERROR):
            raise Closed()
        text = msg.data
        if not isinstance(text, str):
            return
        if text == "2":
            await self.ws.send_str("3")
        elif text.startswith("40"):
            self.connect_reply = json.loads(text[2:]) if len(text) > 2 else {}
        elif text.startswith("44"):
            self.connect_reply = {"error": json.loads(text[2:])}
        elif text.startswith("43"):
            body = text[2:]
            cut = body.index("[")
            self.acks[int(body[:cut])] = json.loads(body[cut:])[0]
        elif text.startswith("42"):
            self.events.append(json.loads(text[2:]))
        elif text.startswith("1") or text.startswith("41"):
            raise Closed()

    async def close(self) -> None:
        await self.ws.close()
        await self.session.close()
