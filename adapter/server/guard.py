"""The transport limits python-socketio leaves to the application (issue 15).

:class:`GuardedServer` is python-socketio's ``AsyncServer`` with: a deadline for sockets that
never authenticate and a cap per address, a cap on the bytes queued for a client that never
reads, binary events refused at their header (their attachments dropped unbuffered),
malformed frames counted against the rate limit and answered, and full collections while
sockets keep closing. docs/reliability.md ("Hostile input at the wire", "Limits") says why.
It uses python-socketio's documented server plus the hooks ``_send_packet``,
``_handle_eio_connect``, ``_handle_eio_message`` and ``_handle_eio_disconnect``, which its
own subclasses (the message-queue managers) rely on.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import engineio
import socketio
from engineio.async_socket import AsyncSocket
from socketio import packet as sio_packet

from ..config import Config
from ..errors import ConnectRefused, InvalidMessage
from ..pipeline import read_seq
from ..protocol import wirejson
from .pacing import Bucket, Collector, Quiet, address_key, release_memory, remote_of

log = logging.getLogger("initiative_sidecar.server")


@dataclass
class Peer:
    """One Engine.IO socket as the guard sees it."""

    address: str
    environ: dict[str, Any]
    bucket: Bucket
    accepted: bool = False
    connecting: bool = False
    skip_attachments: int = 0


class Engine(engineio.AsyncServer):  # type: ignore[misc]
    """Engine.IO's server, cancelling a socket's background tasks (its next ping, 25 s away)
    when it goes, so a closed socket is freed at once."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.socket_tasks: dict[str, set[asyncio.Future[Any]]] = {}

    def start_background_task(self, target: Any, *args: Any, **kwargs: Any) -> Any:
        task = super().start_background_task(target, *args, **kwargs)
        owner = getattr(target, "__self__", None)
        if isinstance(owner, AsyncSocket) and isinstance(task, asyncio.Future):
            tasks = self.socket_tasks.setdefault(owner.sid, set())
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        return task

    def forget(self, sid: str) -> None:
        for task in self.socket_tasks.pop(sid, ()):
            task.cancel()


class GuardedServer(socketio.AsyncServer):  # type: ignore[misc]
    def __init__(self, *args: Any, limits: Config, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.limits = limits
        #: ``--public-origin`` is set: a loopback peer's X-Forwarded-For names the client
        self.behind_proxy = bool(limits.public_origins)
        self.peers: dict[str, Peer] = {}
        self.timers: dict[str, asyncio.TimerHandle] = {}  # eio sid -> its authentication deadline
        self.aborting: set[asyncio.Future[None]] = set()  # sockets past their deadline, being cut
        self.releasing: asyncio.TimerHandle | None = None
        self.quiet = Quiet(log)
        self.collector = Collector()
        #: how to read the frames of a socket (by its Engine.IO sid), if not whole: set by the
        #: app (the world's kept combatant lists, :func:`adapter.seen.frame_reader`)
        self.frame_reader: Callable[[str], Callable[[str | bytes], Any] | None] | None = None

    # ------------------------------------------------------------ accepting

    def pending(self, address: str) -> list[str]:
        """The address's sockets not accepted yet, oldest first."""
        return [sid for sid, p in self.peers.items() if p.address == address and not p.accepted]

    async def _handle_eio_connect(self, eio_sid: str, environ: dict[str, Any]) -> Any:
        address = address_key(remote_of(environ, self.behind_proxy))
        waiting = self.pending(address)
        if len(waiting) >= self.limits.pending_per_address:
            idle = [sid for sid in waiting if not self.peers[sid].connecting]
            self.quiet.log(logging.WARNING, ("pending", address),
                           "%s holds %d sockets that have not authenticated: %s", address, len(waiting),
                           "closing its oldest idle one" if idle else "refusing a new one")
            if not idle:
                return False
            await self.abort(idle[0])
            self.peers.pop(idle[0], None)
        self.peers[eio_sid] = Peer(address, environ, Bucket(self.limits.rate, float(self.limits.burst)))
        await super()._handle_eio_connect(eio_sid, environ)
        self._deadline_in(self.limits.connect_timeout, eio_sid)
        return None

    def _deadline_in(self, delay: float, eio_sid: str) -> None:
        """The socket's authentication deadline: a timer, not a task sleeping per socket."""
        self.timers[eio_sid] = asyncio.get_running_loop().call_later(delay, self._deadline, eio_sid)

    def _deadline(self, eio_sid: str) -> None:
        """Close the socket unless the sidecar accepted it in time (a CONNECT being handled is
        looked at again every 0.5 s)."""
        self.timers.pop(eio_sid, None)
        peer = self.peers.get(eio_sid)
        if peer is None or peer.accepted:
            return
        if peer.connecting:
            self._deadline_in(0.5, eio_sid)
            return
        self.quiet.log(logging.INFO, ("unauthenticated", peer.address),
                       "closed a socket from %s: not authenticated within %g s",
                       peer.address, self.limits.connect_timeout)
        task = asyncio.ensure_future(self.abort(eio_sid))
        self.aborting.add(task)
        task.add_done_callback(self.aborting.discard)

    def accepted(self, sid: str) -> None:
        """The sidecar accepted this connection (its socket.io ``sid``)."""
        eio_sid = self.manager.eio_sid_from_sid(sid, "/")
        peer = self.peers.get(eio_sid)
        if peer is not None:
            peer.accepted = True
        timer = self.timers.pop(eio_sid, None)
        if timer is not None:
            timer.cancel()

    def take(self, sid: str) -> bool:
        """One message against the connection's rate limit."""
        peer = self.peers.get(self.manager.eio_sid_from_sid(sid, "/"))
        return peer is None or peer.bucket.take()

    async def _handle_connect(self, eio_sid: str, namespace: Any, data: Any) -> None:
        peer = self.peers.get(eio_sid)
        if peer is not None:
            peer.connecting = True
        try:
            await super()._handle_connect(eio_sid, namespace, data)
        finally:
            if peer is not None:
                peer.connecting = False

    async def _handle_eio_disconnect(self, eio_sid: str, reason: Any = None) -> None:
        self.peers.pop(eio_sid, None)
        timer = self.timers.pop(eio_sid, None)
        if timer is not None:
            timer.cancel()
        await super()._handle_eio_disconnect(eio_sid, reason)
        self.eio.forget(eio_sid)
        if self.collector.due():  # once its teardown has run
            asyncio.get_running_loop().call_soon(self.collector.collect)
        self.release_soon()

    def _engineio_server_class(self) -> type[Engine]:
        return Engine

    def release_soon(self, quiet: float = 1.0) -> None:
        """Give memory back ``quiet`` seconds after the last disconnect (once after a flood)."""
        if self.releasing is not None:
            self.releasing.cancel()
        self.releasing = asyncio.get_running_loop().call_later(quiet, release_memory)

    async def abort(self, eio_sid: str) -> None:
        """Cut the connection at once: the transport is aborted and Engine.IO then closes the
        socket as for a lost connection."""
        peer = self.peers.get(eio_sid)
        request = peer.environ.get("aiohttp.request") if peer is not None else None
        transport = request.transport if request is not None else None
        if transport is not None:
            transport.abort()
        else:
            await self.eio.disconnect(eio_sid)

    async def close_all(self, grace: float = 0.5) -> None:
        """Close every socket (an Engine.IO CLOSE; the module reconnects), then abort whatever
        has not gone within ``grace`` seconds."""
        for timer in self.timers.values():
            timer.cancel()
        if self.releasing is not None:
            self.releasing.cancel()
        for socket in list(self.eio.sockets.values()):
            try:
                await socket.close(wait=False, abort=False, reason=self.eio.reason.SERVER_DISCONNECT)
            except Exception:  # a socket already going: it is aborted below
                log.debug("closing a socket failed", exc_info=True)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        while self.eio.sockets and loop.time() < deadline:
            await asyncio.sleep(0.02)
        for eio_sid in list(self.peers):
            await self.abort(eio_sid)

    # ------------------------------------------------------------ writing

    async def _send_packet(self, eio_sid: str, pkt: Any) -> None:
        socket = self.eio.sockets.get(eio_sid)
        if socket is not None and self.backlog(socket) > self.limits.max_outgoing_bytes:
            peer = self.peers.get(eio_sid)
            self.quiet.log(logging.WARNING, ("backlog", peer.address if peer else "?"),
                           "cut a connection from %s: it does not read (over %d bytes waiting to be sent)",
                           peer.address if peer else "?", self.limits.max_outgoing_bytes)
            await self.abort(eio_sid)
            return
        await super()._send_packet(eio_sid, pkt)

    @staticmethod
    def backlog(socket: Any) -> int:
        """Bytes queued for the socket (counted only once more than a few packets wait)."""
        queue = socket.queue
        if queue.qsize() < 16:
            return 0
        return sum(len(p.data) for p in list(queue._queue) if p is not None and isinstance(p.data, (str, bytes)))

    # ------------------------------------------------------------ reading

    async def _handle_eio_message(self, eio_sid: str, data: Any) -> None:
        peer = self.peers.get(eio_sid)
        if isinstance(data, (bytes, bytearray)) and peer is not None and peer.skip_attachments:
            peer.skip_attachments -= 1  # an attachment of a refused binary event: dropped
            await self._count(eio_sid, peer)
            return
        try:
            if isinstance(data, str) and data[:1] in ("5", "6"):
                await self._binary_header(eio_sid, data)
            else:
                reader = self.frame_reader(eio_sid) if self.frame_reader is not None and peer is not None else None
                token = wirejson.FRAME_READER.set(reader) if reader is not None else None
                try:
                    await super()._handle_eio_message(eio_sid, data)
                finally:
                    if token is not None:
                        wirejson.FRAME_READER.reset(token)
        except Exception as error:  # a frame the protocol cannot read: never a traceback per frame
            await self._malformed(eio_sid, data, error)

    async def _binary_header(self, eio_sid: str, data: str) -> None:
        """A binary event or ack, never buffered: an event is refused through the normal path,
        each attachment replaced by a value no message may hold."""
        pkt = self.packet_class(encoded_packet=data)
        peer = self.peers.get(eio_sid)
        if peer is not None:
            peer.skip_attachments = pkt.attachment_count
        if pkt.packet_type == sio_packet.BINARY_EVENT and isinstance(pkt.data, list):
            await self._handle_event(eio_sid, pkt.namespace, pkt.id, without_attachments(pkt.data))

    async def _count(self, eio_sid: str, peer: Peer) -> bool:
        """A frame that is no message, against the rate limit; past it the socket is cut."""
        if peer.bucket.take():
            return True
        self.quiet.log(logging.WARNING, ("rate", peer.address),
                       "cut a connection from %s: frames past the rate limit", peer.address)
        await self.abort(eio_sid)
        return False

    async def _malformed(self, eio_sid: str, data: Any, error: Exception) -> None:
        peer = self.peers.get(eio_sid)
        if peer is not None and not await self._count(eio_sid, peer):
            return
        address = peer.address if peer is not None else "?"
        self.quiet.log(logging.WARNING, ("malformed", address),
                       "a frame from %s could not be read: %s: %s", address, type(error).__name__, str(error)[:200])
        if isinstance(data, str) and data.startswith("0") and peer is not None and not peer.accepted:
            refused = ConnectRefused("invalid_auth", f"the connect auth could not be read ({type(error).__name__})")
            await self._send_packet(eio_sid, self.packet_class(
                sio_packet.CONNECT_ERROR, namespace="/", data={"message": refused.message, "data": refused.to_wire()}))
            return
        event = EVENT_ACK_ID.match(data) if isinstance(data, str) else None  # namespace "/" only
        sid = self.manager.sid_from_eio_sid(eio_sid, "/")
        if event is not None and sid is not None and self.manager.is_connected(sid, "/"):
            refusal = {"ok": False, "seq": shown_seq(data), "error": InvalidMessage(
                f"the message could not be read ({type(error).__name__}); it was not stored", path="").to_wire()}
            await self._send_packet(eio_sid, self.packet_class(sio_packet.ACK, namespace="/",
                                                               id=int(event.group(1)), data=[refusal]))


def without_attachments(data: Any) -> Any:
    """``data`` with every attachment placeholder replaced by an :class:`Unreadable` (no
    recursion: the walk is a loop)."""
    root = [data]
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        keys = node.keys() if isinstance(node, dict) else range(len(node))
        for k in keys:
            value = node[k]
            if isinstance(value, dict):
                if value.get("_placeholder") is True and "num" in value:
                    node[k] = wirejson.Unreadable("a binary attachment")
                else:
                    stack.append(value)
            elif isinstance(value, list):
                stack.append(value)
    return root[0]


#: how much of an unreadable frame's text is searched for its seq
SEQ_SEARCH_CHARS = 64 * 1024


def shown_seq(data: Any) -> int | None:
    """The seq an unreadable event frame's text shows: the ``"seq": <digits>`` key at depth 2,
    outside strings, found by one loop over the text (no parser could read the frame); or None."""
    if not isinstance(data, str):
        return None
    start = data.find("[")
    if start < 0:
        return None
    text = data[start:start + SEQ_SEARCH_CHARS]
    depth, i, n = 0, 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            end = i + 1
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            if depth == 2 and text[i:end + 1] == '"seq"':
                rest = text[end + 1:end + 40].lstrip()
                if rest.startswith(":"):
                    digits = rest[1:].lstrip()
                    count = len(digits) - len(digits.lstrip("0123456789"))
                    if 0 < count <= 16 and digits[count:count + 1] in (",", "}", " ", "\n", "\r", "\t", ""):
                        return read_seq({"seq": int(digits[:count])})
            i = end + 1
            continue
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        i += 1
    return None


#: the ack id of a Socket.IO EVENT (``2[/,]<id>...``) or BINARY_EVENT (``5<n>-[/,]<id>...``) frame
EVENT_ACK_ID = re.compile(r"(?:2|5\d{1,11}-)(?:/,)?(\d{1,16})")
