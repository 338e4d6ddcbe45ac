"""The status page at ``/``: for the GM, what the sidecar holds and last decided.

Behind the world's token: ``POST /login`` sets the cookie ``isc_status`` (a random session id
kept in memory, never the token), which sees the worlds its token opens; a login shares the
connect's :class:`.throttle.Throttle`. Live over ``GET /status/events`` (server-sent
events), in English and Russian. docs/operations.md ("The status page") has the contract.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import re
import secrets
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from .. import protocol
from ..config import Config
from ..engine import plan_of
from ..html import environment, source
from ..texts import TEXTS, language
from ..version import __version__
from .observe import Answered
from .origins import public_scheme
from .pacing import address_key, request_client
from .throttle import Throttle

COOKIE = "isc_status"
SESSION_SECONDS = 12 * 3600
MAX_SESSIONS = 64
REFUSALS_KEPT = 20
HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "same-origin",  # "no-referrer" makes Chromium send "Origin: null" with the form
    "X-Content-Type-Options": "nosniff",
}
#: a Host a browser can send (a name or an address, its port); anything else gets the policy
#: by 'self' (no browser sends it, and it must not write into the policy)
BROWSER_HOST = re.compile(r"(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?")


@dataclass(frozen=True)
class Scope:
    """What one login may see: the worlds of the shared token, and/or worlds by their own."""

    shared: bool
    worlds: frozenset[str]

    def sees(self, world: str, own_tokens: Mapping[str, str]) -> bool:
        return world in self.worlds or (self.shared and world not in own_tokens)


@dataclass
class Session:
    scope: Scope
    expires: float


@dataclass(eq=False)
class Subscriber:
    scope: Scope
    changed: asyncio.Event = field(default_factory=asyncio.Event)


class StatusBoard:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.sessions: dict[str, Session] = {}
        self.refusals: dict[str, deque[dict[str, Any]]] = {}
        self.subscribers: set[Subscriber] = set()
        #: the sidecar's own throttle replaces this one when it starts (see create_app)
        self.throttle = Throttle(config.auth_failures, config.throttle_seconds, config.throttle_spacing)
        self.closing = False
        #: the running sidecar's writers and worlds, once it has started (create_app)
        self.writers: Mapping[str, str] = {}
        self.states: Mapping[str, Any] = {}

    # ---------------------------------------------------------------- what happens

    def observe(self, answered: Answered) -> None:
        """An answered message: keep a refusal, wake the pages that see its world."""
        if answered.world is None:
            return
        ack = answered.ack
        if not ack.get("ok") and ack.get("error"):
            payload = answered.payload if isinstance(answered.payload, Mapping) else {}
            error = ack["error"]
            kept = self.refusals.setdefault(answered.world, deque(maxlen=REFUSALS_KEPT))
            kept.appendleft({
                "at": time.strftime("%H:%M:%S"),
                "event": answered.event,
                "what": payload.get("kind") or payload.get("hook") or "",
                "seq": ack.get("seq"),
                **{key: error.get(key) for key in ("code", "message", "rule", "path")},
            })
        for subscriber in self.subscribers:
            if subscriber.scope.sees(answered.world, self.config.world_tokens):
                subscriber.changed.set()

    def close(self) -> None:
        self.closing = True
        for subscriber in self.subscribers:
            subscriber.changed.set()

    # ---------------------------------------------------------------- logging in

    def scope_of(self, token: str) -> Scope | None:
        if not token:
            return None
        shared = bool(self.config.token) and hmac.compare_digest(token.encode(), self.config.token.encode())
        own = frozenset(w for w, t in self.config.world_tokens.items() if hmac.compare_digest(token.encode(), t.encode()))
        return Scope(shared, own) if shared or own else None

    def throttle_keys(self, remote: str) -> tuple[str, ...]:
        """What one login attempt counts against: its address, and every token it is tried
        against (the keys :meth:`adapter.server.sidecar.Sidecar.check_auth` uses)."""
        worlds = tuple(f"token {world}" for world in self.config.world_tokens)
        return ("address " + address_key(remote), "token (shared)", *worlds)

    def open_session(self, scope: Scope) -> str:
        now = time.monotonic()
        for key in [k for k, s in self.sessions.items() if s.expires < now]:
            del self.sessions[key]
        while len(self.sessions) >= MAX_SESSIONS:
            del self.sessions[min(self.sessions, key=lambda k: self.sessions[k].expires)]
        key = secrets.token_urlsafe(32)
        self.sessions[key] = Session(scope, now + SESSION_SECONDS)
        return key

    def session(self, request: web.Request) -> Scope | None:
        key = request.cookies.get(COOKIE, "")
        found = self.sessions.get(key) if key else None
        if found is None or found.expires < time.monotonic():
            return None
        return found.scope

    # ---------------------------------------------------------------- drawing

    def visible(self, scope: Scope) -> list[str]:
        own = self.config.world_tokens
        return sorted(w for w in set(self.states) | set(self.writers) if scope.sees(w, own))

    def worlds_html(self, scope: Scope, lang: str) -> str:
        worlds = [self._world(w) for w in self.visible(scope)]
        return environment().get_template("status_worlds.html").render(worlds=worlds, t=TEXTS[lang])

    def page(self, name: str, lang: str, **data: Any) -> str:
        return environment().get_template(name).render(
            t=TEXTS[lang], lang=lang, version=__version__, protocol=protocol.PROTOCOL_VERSION,
            base=self.config.base_path, **data
        )

    def headers(self, request: web.Request) -> dict[str, str]:
        """The status page's headers: its Content-Security-Policy names its own script, style and
        event stream by URL, not ``'self'`` (docs/setups.md says why)."""
        if BROWSER_HOST.fullmatch(request.host):
            here = f"{public_scheme(self.config, request)}://{request.host}{self.config.base_path}"
            script, style, events, forms = (f"{here}/status/status.js", f"{here}/status/status.css",
                                            f"{here}/status/events", f"{here}/")
        else:
            script = style = events = forms = "'self'"
        policy = (f"default-src 'none'; script-src {script}; style-src {style}; connect-src {events}; "
                  f"form-action {forms}; frame-ancestors 'none'; base-uri 'none'")
        return {"Content-Security-Policy": policy, **HEADERS}

    def _world(self, world_id: str) -> dict[str, Any]:
        state = self.states.get(world_id)
        combats = list(getattr(state, "combats", {}).values()) if state is not None else []
        prompts = list(getattr(state, "prompts", {}).values()) if state is not None else []
        names = {cid: c.name or cid for combat in combats for cid, c in combat.combatants.items()}
        return {
            "id": world_id,
            "connected": world_id in self.writers,
            "ruleset": getattr(state, "ruleset", "?"),
            "last_seq": getattr(state, "last_seq", 0),
            "combats": [_combat(c, names) for c in combats if c.last_plan is not None],
            "prompts": [_prompt(p, names) for p in prompts],
            "refusals": list(self.refusals.get(world_id, ())),
        }


def _combat(combat: Any, names: Mapping[str, str]) -> dict[str, Any]:
    plan = plan_of(combat)
    rows = []
    for entry in plan["order"]:
        cid = entry["combatant_id"]
        rows.append({**entry, "name": names.get(cid, cid), "current": cid == plan["current"]})
    return {"id": plan["combat_id"], "round": plan["round"], "revision": plan["revision"], "rows": rows}


def _prompt(prompt: Any, names: Mapping[str, str]) -> dict[str, Any]:
    wire = prompt.to_wire()
    to = wire["to"] if isinstance(wire["to"], str) else ", ".join(wire["to"])
    who = names.get(wire["combatant_id"] or "", wire["combatant_id"] or "")
    return {**wire, "to": to, "who": who}


def _lang(request: web.Request) -> str:
    return language(request.query.get("lang"), request.headers.get("Accept-Language", ""))


def _html(text: str, headers: dict[str, str], status: int = 200) -> web.Response:
    return web.Response(text=text, status=status, content_type="text/html", charset="utf-8", headers=headers)


def _sse(event: str, data: str) -> bytes:
    lines = "".join(f"data: {line}\n" for line in data.splitlines() or [""])
    return f"event: {event}\n{lines}\n".encode()


def add_status_routes(app: web.Application, board: StatusBoard) -> None:
    base = board.config.base_path  # the app is mounted under it: routes are relative, links are not

    async def index(request: web.Request) -> web.Response:
        lang = _lang(request)
        scope = board.session(request)
        if scope is None:
            return _html(board.page("status_login.html", lang, error=None), board.headers(request), status=401)
        return _html(board.page("status.html", lang, worlds=board.worlds_html(scope, lang)), board.headers(request))

    async def login(request: web.Request) -> web.Response:
        form = await request.post()
        lang = language(str(form.get("lang", "")), request.headers.get("Accept-Language", ""))
        keys = board.throttle_keys(request_client(request, bool(board.config.public_origins)))
        wait = board.throttle.turn(keys)
        if wait > 0:  # recent wrong tokens: this attempt waits its turn, then is checked
            await asyncio.sleep(wait)
        scope = board.scope_of(str(form.get("token", "")))
        if scope is None:
            board.throttle.failed_attempt(keys)
            page = board.page("status_login.html", lang, error=TEXTS[lang]["wrong_token"])
            return _html(page, board.headers(request), status=401)
        response = web.HTTPSeeOther(f"{base}/?lang={lang}")
        response.set_cookie(COOKIE, board.open_session(scope), httponly=True, samesite="Strict", path=f"{base}/",
                            max_age=SESSION_SECONDS, secure=public_scheme(board.config, request) == "https")
        raise response

    async def logout(request: web.Request) -> web.Response:
        board.sessions.pop(request.cookies.get(COOKIE, ""), None)
        response = web.HTTPSeeOther(f"{base}/?lang={_lang(request)}")
        response.del_cookie(COOKIE, path=f"{base}/")
        raise response

    async def events(request: web.Request) -> web.StreamResponse:
        scope = board.session(request)
        if scope is None:
            raise web.HTTPUnauthorized(text="log in first")
        lang = _lang(request)
        response = web.StreamResponse(headers={**board.headers(request), "Content-Type": "text/event-stream"})
        await response.prepare(request)
        subscriber = Subscriber(scope)
        board.subscribers.add(subscriber)
        sent = None
        try:
            while not board.closing and board.session(request) is not None:
                subscriber.changed.clear()
                html = board.worlds_html(scope, lang)
                if html != sent:
                    await response.write(_sse("worlds", html))
                    sent = html
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(subscriber.changed.wait(), timeout=2.0)
                await asyncio.sleep(0.05)  # let a burst of messages land before drawing again
        except ConnectionResetError:
            pass  # the page was closed
        finally:
            board.subscribers.discard(subscriber)
        return response

    async def on_shutdown(_: web.Application) -> None:
        board.close()

    app.on_shutdown.append(on_shutdown)
    app.router.add_get("/", index)
    app.router.add_post("/login", login)
    app.router.add_post("/logout", logout)
    app.router.add_get("/status/events", events)
    for name, kind in (("status.js", "text/javascript"), ("status.css", "text/css")):
        app.router.add_get(f"/status/{name}", _static(name, kind, board.headers))


def _static(name: str, kind: str, headers: Callable[[web.Request], dict[str, str]]) -> Callable[[web.Request], Any]:
    text = source(name)

    async def serve(request: web.Request) -> web.Response:
        return web.Response(text=text, content_type=kind, headers=headers(request))

    return serve
