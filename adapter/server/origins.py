"""Which browser origins may use what (docs/reliability.md, "Origins").

The socket.io endpoint is guarded by its token alone, so it welcomes a Foundry page at any
origin, unless ``--origins`` narrows it (``origin_refused``, before the token is looked at).
Every other route is for the sidecar's own pages: a browser request from another origin gets
403.
"""

from __future__ import annotations

import logging
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from ..config import Config
from ..errors import ConnectRefused

log = logging.getLogger("initiative_sidecar.server")


def same_origin(request: web.Request, origin: str) -> bool:
    """Whether ``origin`` is the request's own: its ``host[:port]`` is the request's ``Host``.
    The scheme is not compared: behind a TLS proxy the sidecar hears http for a page the
    browser loaded over https, and a host name and port are the part an attacker cannot borrow."""
    return origin.partition("://")[2].lower() == request.host.lower()


def origin_refusal(config: Config, environ: dict[str, Any]) -> ConnectRefused | None:
    """Why the socket.io connect of this browser origin is refused, or None: only when
    ``--origins`` narrows the endpoint and the page's origin is not listed."""
    origin = environ.get("HTTP_ORIGIN")
    if not config.origins or origin is None:
        return None
    if origin.lower().rstrip("/") in (o.lower() for o in config.origins):
        return None
    return ConnectRefused(
        "origin_refused",
        f"this sidecar does not accept Foundry pages at {origin[:200]}; its operator lists the "
        "origins it accepts with --origins",
    )


def page_guard(config: Config) -> Middleware:
    """Refuse (and log) browser requests to the sidecar's pages from any other origin."""
    sockets = f"{config.base_path}/socket.io/"

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        origin = request.headers.get("Origin")
        if origin is not None and not request.path.startswith(sockets) and not same_origin(request, origin):
            log.warning("refused a request to %s from origin %s (not the page's own)", request.path, origin[:200])
            return web.Response(status=403, text="origin not allowed")
        return await handler(request)

    return guard
