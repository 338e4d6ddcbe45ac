"""DNS rebinding: a web page the GM opens can make its own host name resolve to 127.0.0.1 and
then read the sidecar's pages as if it were the sidecar's own origin (the browser sends the
page's name in ``Host``; the peer address is loopback, ``Origin`` matches ``Host``). A sidecar
listening on loopback therefore answers its HTTP pages (the status page, its login, /healthz,
/metrics) only when ``Host`` names loopback: ``127.0.0.1``, ``localhost``, ``[::1]``, any
127.x address. socket.io (behind the token) and /module/ (Foundry's server fetches the
manifest by whatever name it knows the sidecar) are not concerned. A sidecar told to listen
elsewhere (``--allow-remote``) is reached by names only its operator knows, and checks none.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable

from aiohttp import web

from ..config import Config, is_loopback

#: paths a foreign Host may still reach
UNCHECKED = ("/socket.io/", "/module/")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def loopback_name(host: str) -> bool:
    """Whether the ``Host`` header (with or without its port) names this machine's loopback."""
    name = host.strip().lower()
    if name.startswith("["):  # [::1]:8765
        name = name[1:].partition("]")[0]
    elif name.count(":") == 1:
        name = name.partition(":")[0]
    if name in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_guard(config: Config) -> Callable[[web.Request, Handler], Awaitable[web.StreamResponse]]:
    checked = is_loopback(config.host)

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        if checked and not request.path.startswith(UNCHECKED) and not loopback_name(request.host):
            raise web.HTTPForbidden(text="this sidecar answers only to a loopback host name (127.0.0.1, localhost)")
        return await handler(request)

    return guard
