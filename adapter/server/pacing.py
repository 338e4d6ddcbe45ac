"""Pacing and bookkeeping the transport guard and the server share: a token bucket per
connection, logging a repeated error once a second with a count, collecting closed
connections while sockets keep closing, giving freed memory back to the system, and who is
asking (per-address limits count all of loopback as one address; behind the same-origin
proxy, the client the proxy names).
"""

from __future__ import annotations

import asyncio
import ctypes
import gc
import ipaddress
import logging
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("initiative_sidecar.server")


@dataclass
class Bucket:
    """Token bucket for the per-connection rate limit (messages and malformed frames)."""

    rate: float
    burst: float
    tokens: float = 0.0
    stamp: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self.tokens = self.burst

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


class Quiet:
    """Log a repeated line at most once a second per key, with how many were held back."""

    def __init__(self, logger: logging.Logger, every: float = 1.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.logger = logger
        self.every = every
        self.clock = clock
        self.last: dict[Any, tuple[float, int]] = {}

    def ready(self, key: Any) -> str | None:
        """If a line for ``key`` may be written now, what to add to it: how many were held back
        (or ""); else None (and this one is counted as held back)."""
        now = self.clock()
        stamp, held = self.last.get(key, (float("-inf"), 0))
        if now - stamp < self.every:
            self.last[key] = (stamp, held + 1)
            return None
        self.last[key] = (now, 0)
        if len(self.last) > 4096:  # forget keys quiet for a minute
            self.last = {k: v for k, v in self.last.items() if now - v[0] < 60}
        return f" (and {held} more like it in the last {now - stamp:.1f} s)" if held else ""

    def log(self, level: int, key: Any, message: str, *args: Any) -> None:
        more = self.ready(key)
        if more is not None:
            self.logger.log(level, message + more, *args)


def quiet_loop_errors(loop: asyncio.AbstractEventLoop, quiet: Quiet) -> None:
    """The event loop's error handler, at most once a second per kind of error: when file
    descriptors run out, asyncio reports every failed ``accept()`` (hundreds of MB a minute)."""

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        more = quiet.ready((context.get("message"), type(context.get("exception")).__name__))
        if more is not None:
            loop.default_exception_handler({**context, "message": f"{context.get('message')}{more}"} if more else context)

    loop.set_exception_handler(handle)


def _malloc_trim() -> Any:
    """glibc's ``malloc_trim`` (freed heap pages back to the OS), None elsewhere; found among
    the symbols loaded (``find_library`` would run ``ldconfig`` at every start)."""
    try:
        return ctypes.CDLL(None).malloc_trim if os.name == "posix" else None
    except (OSError, AttributeError):
        return None


MALLOC_TRIM = _malloc_trim()


class Collector:
    """Full garbage collections while sockets keep closing (docs/reliability.md, "Memory"):
    one after every ``every`` closed sockets, one at a time, and not again before ``spacing``
    times the processor time the last took (at most ``1 / (spacing + 1)`` of the loop's time)."""

    def __init__(self, every: int = 64, spacing: float = 5.0, clock: Callable[[], float] = time.monotonic,
                 cost: Callable[[], float] = time.thread_time) -> None:
        self.every = every
        self.spacing = spacing
        self.clock = clock
        self.cost = cost
        self.closed = 0
        self.not_before = float("-inf")

    def due(self) -> bool:
        """One more socket closed: whether a full collection should run now."""
        self.closed += 1
        if self.closed < self.every or self.clock() < self.not_before:
            return False
        self.closed = 0
        self.not_before = float("inf")  # one at a time: the next is timed when this one has run
        return True

    def collect(self) -> None:
        began = self.cost()
        gc.collect()
        self.not_before = self.clock() + (self.cost() - began) * self.spacing


def release_memory() -> None:
    """After a connection holding a large buffer is cut: collect, then return the pages."""
    gc.collect()
    if MALLOC_TRIM is not None:
        MALLOC_TRIM(0)


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address in ``text`` (``203.0.113.1``, ``203.0.113.1:4711``, ``[2001:db8::1]:4711``,
    ``fe80::1%eth0``; an IPv4-mapped IPv6 address as its IPv4 one), or None."""
    text = text.strip()
    if text.startswith("["):
        text = text[1:].partition("]")[0]
    elif text.count(":") == 1:
        text = text.partition(":")[0]
    try:
        ip = ipaddress.ip_address(text.split("%")[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def address_key(remote: str) -> str:
    """Who is asking, for per-address limits: all of loopback is one machine (rotating through
    127.x.y.z changes nothing), an IPv6 address counts by its /64."""
    ip = _ip(remote)
    if ip is None:
        return remote
    if ip.is_loopback:
        return "loopback"
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def client_address(peer: str, forwarded_for: Iterable[str], behind_proxy: bool) -> str:
    """The address a request came from: behind the same-origin proxy (``--public-origin``) and
    for a peer on loopback only, the **rightmost** ``X-Forwarded-For`` entry (the one the proxy
    appends); otherwise the peer address (docs/reliability.md, "Origins")."""
    if not behind_proxy:
        return peer
    peer_ip = _ip(peer)
    if peer_ip is None or not peer_ip.is_loopback:
        return peer
    entries = [e for header in forwarded_for for e in header.split(",")]
    client = _ip(entries[-1]) if entries else None
    return str(client) if client is not None else peer


def remote_of(environ: dict[str, Any], behind_proxy: bool = False) -> str:
    """The client address of an Engine.IO connection (see :func:`client_address`)."""
    request = environ.get("aiohttp.request")
    if request is not None and request.remote:
        return request_client(request, behind_proxy)
    return str(environ.get("REMOTE_ADDR", "?"))


def request_client(request: Any, behind_proxy: bool) -> str:
    """The client address of an aiohttp request (see :func:`client_address`)."""
    return client_address(str(request.remote or "?"), request.headers.getall("X-Forwarded-For", ()), behind_proxy)
