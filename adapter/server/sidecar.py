"""The socket.io side of the running sidecar (:class:`Sidecar`): who may connect, and each
message of a connection answered.

Each handler is a straight line: check the connection may send, take the world's lock (one
message of a world at a time, in arrival order), let ``Worlds`` validate, apply and store,
broadcast, return the ack. A connection is bound at connect to the world its auth names.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import socketio

from .. import protocol
from ..config import Config
from ..errors import (
    ConnectRefused,
    InvalidMessage,
    RateLimited,
    ServedElsewhere,
    SidecarError,
    StoreUnavailable,
    Superseded,
)
from ..pipeline import read_seq, refusal, welcome
from ..seen import frame_reader
from ..service import Worlds
from .guard import GuardedServer
from .module_files import version_warnings
from .observe import Answered, Observers
from .origins import origin_refusal
from .pacing import address_key, remote_of
from .rooms import room_of
from .throttle import Throttle

log = logging.getLogger("initiative_sidecar.server")
#: hosted mode: worker threads for the store calls of connects and exports
CONNECT_THREADS = 32
T = TypeVar("T")


class Sidecar:
    """The running service: connections, per-world locks, throttling of bad tokens."""

    def __init__(self, config: Config, worlds: Worlds, sio: GuardedServer, observers: Observers) -> None:
        self.config = config
        self.worlds = worlds
        self.sio = sio
        self.observers = observers  # metrics and the status page hear of every ack and connect
        self.connections: dict[str, str] = {}  # sid -> its world
        self.writers: dict[str, str] = {}  # world -> sid
        self.locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self.throttle = Throttle(config.auth_failures, config.throttle_seconds, config.throttle_spacing)
        self.tasks: set[asyncio.Future[Any]] = set()
        self.in_hand = 0  # messages past the checks, waiting for or holding their world's lock
        self.closing = False
        # hosted: a connect's store calls wait in a worker thread (a message's: Worlds.handle_soon)
        self.pool = ThreadPoolExecutor(CONNECT_THREADS, thread_name_prefix="connect") if worlds.store.shared else None

    # ---------------------------------------------------------------- connecting

    async def connect(self, sid: str, environ: dict[str, Any], auth: Any) -> None:
        remote = remote_of(environ, bool(self.config.public_origins))  # the proxy's client behind it
        try:
            if (narrowed := origin_refusal(self.config, environ)) is not None:
                raise narrowed  # before the token: a page --origins refuses cannot even guess
            auth = await self.check_auth(remote, auth)
        except ConnectRefused as refused:
            log.warning("connection from %s refused: %s", remote, refused.code)
            raise self.refused(refused) from None
        world_id = str(auth["world"])
        async with self.locks[world_id]:
            previous = self.writers.get(world_id)
            try:
                state = await self.store_call(self.claim_and_connect, world_id, auth)
            except Exception as error:  # answered, whatever the store did: never left hanging
                raise self.refused(self.store_refusal(world_id, previous, error)) from None
            self.writers[world_id] = sid
            self.connections[sid] = world_id
        self.sio.accepted(sid)
        await self.sio.enter_room(sid, room_of(world_id))
        log.info(
            "connected: world %s, ruleset %s, module %s, Foundry %s, system %s, from %s",
            world_id, auth["ruleset"], auth.get("module_version", "?"),
            auth.get("foundry_version", "?"), auth.get("system", "?"), remote,
        )
        if previous is not None and previous != sid:
            self.spawn(self.supersede(previous, world_id))
        hello = welcome(state, rulesets=self.worlds.rulesets) | version_warnings(auth)
        self.spawn(self.sio.emit("welcome", hello, to=sid))
        self.observers.connected("accepted")

    def refused(self, error: ConnectRefused | SidecarError) -> socketio.exceptions.ConnectionRefusedError:
        """What a refused connect raises (its reason in the CONNECT_ERROR), the observers told."""
        self.observers.connected(error.code)
        return socketio.exceptions.ConnectionRefusedError(error.message, error.to_wire())

    def claim_and_connect(self, world_id: str, auth: dict[str, Any]) -> Any:
        self.worlds.claim(world_id)  # hosted: the world's lease (docs/hosting.md)
        return self.worlds.connect(auth)  # its session, stored before it applies

    def store_refusal(self, world_id: str, previous: str | None, error: Exception) -> StoreUnavailable:
        """Why a connection is refused when the store failed it (the module retries); a lease
        taken for it is given back when the world has no other writer."""
        refused = error if isinstance(error, StoreUnavailable) else StoreUnavailable(
            f"the sidecar could not load or record world {world_id} ({type(error).__name__}); retry later")
        if isinstance(error, StoreUnavailable):
            log.info("connection for world %s refused: %s", world_id, refused.code)
        else:
            log.error("connection for world %s refused: the store failed", world_id, exc_info=error)
        if previous is None and not isinstance(error, ServedElsewhere):
            try:
                self.worlds.release(world_id)
            except Exception:  # the lease ends with the store's session anyway
                log.warning("world %s: giving back its lease failed", world_id, exc_info=True)
        return refused

    async def check_auth(self, remote: str, auth: Any) -> dict[str, Any]:
        """The connect auth, or :class:`ConnectRefused` with its reason code. While the token
        or the address is under attack, the check waits its turn (:mod:`.throttle`)."""
        try:
            protocol.validate("auth", auth)
        except InvalidMessage as error:
            raise ConnectRefused("invalid_auth", auth_refusal(error, auth)) from error
        world_id = str(auth["world"])
        keys = ("address " + address_key(remote),
                "token " + (world_id if world_id in self.config.world_tokens else "(shared)"))
        wait = self.throttle.turn(keys)
        if wait > 0:
            log.info("a connection from %s waits %.2f s for its turn: recent wrong tokens", remote, wait)
            await asyncio.sleep(wait)
        expected = self.config.token_for(world_id)
        if not hmac.compare_digest(str(auth["token"]).encode(), expected.encode()):
            self.throttle.failed_attempt(keys)
            raise ConnectRefused("auth_failed", "the token is not the one this sidecar expects")
        if auth["protocol"] != protocol.PROTOCOL_VERSION:
            raise ConnectRefused(
                "protocol_mismatch",
                f"this sidecar speaks protocol {protocol.PROTOCOL_VERSION}, not {auth['protocol']}",
            )
        known = self.worlds.rulesets
        if auth["ruleset"] not in known:
            raise ConnectRefused(
                "unknown_ruleset",
                f"unknown ruleset {auth['ruleset']!r}; known: {', '.join(sorted(known))}",
            )
        try:
            protocol.validate("settings", {"ruleset": auth["ruleset"], "settings": auth.get("settings", {})})
        except InvalidMessage as error:
            raise ConnectRefused("invalid_message", error.message, path=error.path) from error
        return dict(auth)

    async def supersede(self, sid: str, world_id: str) -> None:
        log.info("world %s: a new connection took over; closing the old one", world_id)
        message = {"world": world_id, "message": "another connection took over this world"}
        protocol.check_outbound("superseded", message)
        await self.sio.emit("superseded", message, to=sid)
        await self.sio.disconnect(sid)

    async def disconnect(self, sid: str, *_: Any) -> None:
        world = self.connections.pop(sid, None)
        if world is not None and self.writers.get(world) == sid:
            del self.writers[world]
            if not self.closing:  # at shutdown one checkpoint covers every world
                async with self.locks[world]:
                    self.worlds.checkpoint(world)
                    if world not in self.writers:  # no new writer came meanwhile
                        self.worlds.release(world)
            log.info("disconnected: world %s", world)

    async def close(self, grace: float = 1.5) -> None:
        """Shutting down: let the messages in hand finish, then close every socket."""
        self.closing = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        while self.in_hand and loop.time() < deadline:
            await asyncio.sleep(0.01)
        await self.sio.close_all()
        if self.pool is not None:
            self.pool.shutdown(wait=True)

    # ---------------------------------------------------------------- messages

    def handler(self, event: str) -> Callable[..., Awaitable[dict[str, Any]]]:
        async def handle(sid: str, *args: Any) -> dict[str, Any]:
            started = time.perf_counter()
            if len(args) > 1:  # a client emitting several arguments: refuse, never crash
                error = InvalidMessage(f"a {event} is one payload object, not {len(args)} arguments", path="")
                ack = refusal(None, error)
            else:
                ack = await self.message(sid, event, args[0] if args else None)
            return self.answered(sid, event, args, ack, started)

        return handle

    async def unknown_event(self, event: str, sid: str, *args: Any) -> dict[str, Any]:
        """Any other event gets a refusal as its ack (a client waiting for one is not left hanging)."""
        started = time.perf_counter()
        error = InvalidMessage(f"unknown event {event!r}: expected hook or intent", path="")
        ack = refusal(read_seq(args[0]) if len(args) == 1 else None, error)
        return self.answered(sid, "other", args, ack, started)

    def answered(self, sid: str, event: str, args: tuple[Any, ...], ack: dict[str, Any],
                 started: float) -> dict[str, Any]:
        """``ack``, the observers told of it (``event``: hook, intent, or other)."""
        seconds = time.perf_counter() - started
        payload = args[0] if len(args) == 1 else None
        self.observers.tell(Answered(self.connections.get(sid), event, payload, ack, seconds))
        return ack

    def frame_reader(self, eio_sid: str) -> Callable[[str | bytes], Any] | None:
        """How to read the next frame of a socket: without the combatant lists its world
        keeps (:func:`adapter.seen.frame_reader`), or None (whole)."""
        sid = self.sio.manager.sid_from_eio_sid(eio_sid, "/")
        world = self.connections.get(sid) if sid is not None else None
        return frame_reader(self.worlds.seen.get(world)) if world is not None else None

    async def message(self, sid: str, event: str, payload: Any) -> dict[str, Any]:
        world = self.connections.get(sid)
        if world is None or self.writers.get(world) != sid:
            error = Superseded("another connection took over this world; this message was not stored")
            return refusal(read_seq(payload), error)
        if not self.sio.take(sid):
            limit = RateLimited(f"more than {self.config.rate:g} messages per second; slow down and resend")
            return refusal(read_seq(payload), limit)
        self.in_hand += 1
        try:
            async with self.locks[world]:  # the payload was read with wirejson (json= below)
                if self.pool is None:
                    result = self.worlds.handle(world, event, payload, from_wire=True)
                else:  # processed here, committed by the store's thread (grouped) meanwhile
                    result = await self.worlds.handle_soon(world, event, payload, from_wire=True)
        finally:
            self.in_hand -= 1
        if result.error is not None:
            log.info("world %s: %s seq %s refused: %s", world, event, result.ack.get("seq"), result.error["code"])
        room = room_of(world)  # every listener is local (.rooms); the sender has the plans in its ack
        if result.emits and any(p != sid for p, _ in self.sio.manager.get_participants("/", room)):
            for name, data in result.emits:
                await self.sio.emit(name, data, room=room, skip_sid=sid)
        return result.ack

    async def export(self, sid: str, *args: Any) -> dict[str, Any]:
        """The ``export`` event: the GM's page asks for the recording of the world this
        connection writes (its stored sessions and messages, the JSON Lines ``replay`` reads,
        what ``initiative-sidecar export`` writes), or a refusal. Only the world's writer asks
        (docs/protocol.md)."""
        from ..replay import recorded  # a GM's download, rare: serving does not load the replay tool

        world = self.connections.get(sid)
        try:
            if world is None or self.writers.get(world) != sid:
                raise Superseded("another connection took over this world; ask from the page that holds it")
            if len(args) != 1:
                raise InvalidMessage(f"an export is one payload object, not {len(args)} arguments", path="")
            protocol.validate("export", args[0])
            if not self.sio.take(sid):
                raise RateLimited(f"more than {self.config.rate:g} messages per second; slow down and ask again")
            async with self.locks[world]:
                try:
                    lines = await self.store_call(lambda: recorded(self.worlds.store.history(world)))
                except SidecarError:
                    raise
                except Exception as error:  # the store failed: answered, never left hanging
                    raise StoreUnavailable(
                        f"the recording could not be read ({type(error).__name__}); ask again later") from error
        except SidecarError as error:
            answer = refusal(None, error)
        else:
            answer = {"ok": True, "world": world, "lines": len(lines), "recording": "".join(lines)}
        if self.config.check_outbound:
            protocol.check_outbound("export-answer", answer)
        return answer

    # ---------------------------------------------------------------- helpers

    async def store_call(self, call: Callable[..., T], *args: Any) -> T:
        """``call(*args)``: on the event loop with SQLite (its calls are quick), in a worker
        thread when hosted, where a store call waits on PostgreSQL and the loop serves the rest."""
        if self.pool is None:
            return call(*args)
        return await asyncio.get_running_loop().run_in_executor(self.pool, call, *args)

    def spawn(self, coro: Awaitable[Any]) -> None:
        task: asyncio.Future[Any] = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)


def auth_refusal(error: InvalidMessage, auth: Any) -> str:
    """Why an auth was refused, never quoting the token (jsonschema's message quotes the value
    it refuses): at ``/token`` or for a non-object a fixed text, elsewhere with the token masked."""
    path = error.path or "/"
    if not isinstance(auth, dict):
        return "the connect auth must be an object (at /)"
    if path == "/token" or path.startswith("/token/"):
        return "the token must be a string of 1 to 512 characters (at /token)"
    message, token = error.message, auth.get("token")
    if isinstance(token, str) and token:
        message = message.replace(token, "***")
    return f"{message} (at {path})"
