"""Which requests the sidecar answers, by their ``Host`` and browser origin.

DNS rebinding: a sidecar listening on loopback answers its HTTP pages (the status page, its
login, /healthz, /metrics) only when ``Host`` names loopback, or a ``--public-origin`` behind a
proxy; /healthz and /metrics refuse a public name and any request carrying a header a proxy
adds. socket.io and /module/ are exempt, and a sidecar bound elsewhere (``--allow-remote``)
checks no name. Why: docs/operations.md ("DNS rebinding") and docs/setups.md ("Same origin").

Origins (docs/reliability.md, "Origins"): the socket.io endpoint is guarded by its token
alone, so it welcomes a Foundry page at any origin, unless ``--origins`` narrows it
(``origin_refusal``, before the token is looked at). Every other route is for the sidecar's
own pages: a browser request from another origin gets 403.
"""

from __future__ import annotations

import logging
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from ..config import Config, is_loopback
from ..errors import ConnectRefused

log = logging.getLogger("initiative_sidecar.server")
#: paths (under the base path) a foreign Host may still reach; the first, any origin
UNCHECKED = ("/socket.io/", "/module/")
#: paths only the operator reads (loopback or --metrics-from), never through the public proxy
OPERATOR_PATHS = ("/healthz", "/metrics")
#: headers a proxy adds: a request carrying one came through a proxy, whatever its Host says
PROXY_HEADERS = ("X-Forwarded-For", "Forwarded", "X-Real-IP")


def loopback_name(host: str) -> bool:
    """Whether the ``Host`` header (with or without its port) names this machine's loopback."""
    name = host.strip().lower()
    if name.startswith("["):  # [::1]:8765
        name = name[1:].partition("]")[0]
    elif name.count(":") == 1:
        name = name.partition(":")[0]
    return name == "localhost." or is_loopback(name)


def public_names(config: Config) -> dict[str, str]:
    """``host[:port]`` of each ``--public-origin`` (lower case, with and without its scheme's
    default port) → that origin."""
    names = {}
    for origin in config.public_origins:
        scheme, _, name = origin.lower().partition("://")
        default = ":443" if scheme == "https" else ":80"
        names[name] = names[name.removesuffix(default) if name.endswith(default) else name + default] = origin
    return names


def public_scheme(config: Config, request: web.Request) -> str:
    """The scheme the browser used: a ``--public-origin``'s when the request names it (behind
    a TLS proxy the sidecar hears http for an https page), else the request's own."""
    origin = public_names(config).get(request.host.lower())
    return origin.partition("://")[0].lower() if origin else request.scheme


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


def request_guard(config: Config) -> Middleware:
    """Refuse a request by its Host (see the module's text), then a browser request to the
    sidecar's pages from any other origin (logged)."""
    checked = is_loopback(config.host)
    public = public_names(config)
    unchecked = tuple(config.base_path + p for p in UNCHECKED)
    operator = tuple(config.base_path + p for p in OPERATOR_PATHS)

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        host = request.host.lower()
        proxied = host in public or any(h in request.headers for h in PROXY_HEADERS)
        if proxied and request.path in operator:
            raise web.HTTPForbidden(text="health and metrics are read on the sidecar itself, not through the proxy")
        if checked and not request.path.startswith(unchecked) and not loopback_name(host) and host not in public:
            raise web.HTTPForbidden(text="this sidecar answers only to a loopback host name (127.0.0.1, localhost) "
                                    "or one named by --public-origin")
        origin = request.headers.get("Origin")
        if origin is not None and not request.path.startswith(unchecked[0]) and not same_origin(request, origin):
            log.warning("refused a request to %s from origin %s (not the page's own)", request.path, origin[:200])
            return web.Response(status=403, text="origin not allowed")
        return await handler(request)

    return guard
