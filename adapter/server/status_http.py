"""The status page's HTTP side: the page, the login form, logging out, the event stream,
its script and style. What they show and who may see it: :mod:`.status`."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from aiohttp import web

from ..html import source
from ..texts import TEXTS, language
from .origins import public_scheme
from .pacing import request_client
from .status import COOKIE, SESSION_SECONDS, StatusBoard, Subscriber, page_headers


def _lang(request: web.Request) -> str:
    return language(request.query.get("lang"), request.headers.get("Accept-Language", ""))


def _html(text: str, headers: dict[str, str], status: int = 200) -> web.Response:
    return web.Response(text=text, status=status, content_type="text/html", charset="utf-8", headers=headers)


def _sse(event: str, data: str) -> bytes:
    lines = "".join(f"data: {line}\n" for line in data.splitlines() or [""])
    return f"event: {event}\n{lines}\n".encode()


def add_status_routes(app: web.Application, board: StatusBoard) -> None:
    base = board.config.base_path  # the app is mounted under it: routes are relative, links are not

    def headers(request: web.Request) -> dict[str, str]:
        return page_headers(board.config, request)

    async def index(request: web.Request) -> web.Response:
        lang = _lang(request)
        scope = board.session(request)
        if scope is None:
            return _html(board.page("status_login.html", lang, error=None), headers(request), status=401)
        return _html(board.page("status.html", lang, worlds=board.worlds_html(scope, lang)), headers(request))

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
            return _html(page, headers(request), status=401)
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
        response = web.StreamResponse(headers={**headers(request), "Content-Type": "text/event-stream"})
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
        app.router.add_get(f"/status/{name}", _static(name, kind, headers))


def _static(name: str, kind: str, headers: Callable[[web.Request], dict[str, str]]) -> Callable[[web.Request], Any]:
    text = source(name)

    async def serve(request: web.Request) -> web.Response:
        return web.Response(text=text, content_type=kind, headers=headers(request))

    return serve
