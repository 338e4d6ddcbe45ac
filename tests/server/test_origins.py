"""Issue 26, item 2: a GM's Foundry at any origin is welcomed with the right token and refused
``auth_failed`` with a wrong one (a connect refusal, never an HTTP 403); ``--origins``
narrows the socket (``origin_refused``); the cookie pages keep refusing other origins; a
foreign page without the token learns nothing and is throttled like any other."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import aiohttp
import pytest
import socketio
from aiohttp import web

from adapter import protocol
from adapter.server import MOUNTED_KEY, STATUS_KEY, sidecar_of
from adapter.server.throttle import Throttle
from tests.support.sidecar import TOKEN, Running, auth

FORGE = "https://gm-table.forge-vtt.com"
LAN = "http://192.168.1.20:30000"
EVIL = "https://evil.example"


async def attempt(url: str, data: dict[str, Any], origin: str | None, path: str = "socket.io",
                  headers: dict[str, str] | None = None) -> dict[str, Any]:
    """Connect with this Origin (and these other headers); what the sidecar said: ``welcome``
    and its data, or the refusal's ``code``/``message``, plus every other event heard."""
    sio = socketio.AsyncClient(reconnection=False)
    heard: list[tuple[str, Any]] = []
    welcomed: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    sio.on("connect_error", lambda d: heard.append(("connect_error", d)))

    def on_welcome(data: Any) -> None:
        if not welcomed.done():
            welcomed.set_result(data)

    sio.on("welcome", on_welcome)
    sio.on("*", lambda event, d: heard.append((event, d)))
    headers = {**(headers or {}), **({"Origin": origin} if origin else {})}
    try:
        await sio.connect(url, auth=data, transports=["websocket"], wait_timeout=5, headers=headers,
                          socketio_path=path)
    except socketio.exceptions.ConnectionError:
        await sio.disconnect()
        refusals = [d for e, d in heard if e == "connect_error"]
        assert refusals, f"refused without a connect_error (an HTTP refusal?): {heard}"
        return {"refused": refusals[0]["data"], "heard": heard}
    welcome = await asyncio.wait_for(welcomed, 5)
    await sio.disconnect()
    return {"welcome": welcome, "heard": heard}


class Recording(Throttle):
    """The sidecar's throttle, keeping the keys each attempt was checked against, the wait it
    was given and the moment its turn came (the throttle's clock, not the test's)."""

    def __init__(self, like: Throttle) -> None:
        super().__init__(like.failures, like.window, like.spacing, like.clock)
        self.asked: list[tuple[str, ...]] = []
        self.turns: list[float] = []
        self.slots: list[float] = []

    def turn(self, keys: Iterable[str]) -> float:
        self.asked.append(tuple(keys))
        wait = super().turn(self.asked[-1])
        self.turns.append(wait)
        taken = [self.next_turn[k] for k in self.asked[-1] if k in self.next_turn]
        self.slots.append(max(taken) - self.spacing if wait or taken else float("nan"))
        return wait


def app_of(running: Running) -> web.Application:
    assert running.runner is not None
    return running.runner.app


def recording(running: Running) -> Recording:
    """Put a :class:`Recording` throttle in the running sidecar (sockets and status login)."""
    app = app_of(running)
    sidecar = sidecar_of(app)
    throttle = Recording(sidecar.throttle)
    sidecar.throttle = throttle
    app.get(MOUNTED_KEY, app)[STATUS_KEY].throttle = throttle
    return throttle


async def reconfigure(sidecar: Running, **changes: Any) -> None:
    await sidecar.stop()
    sidecar.config = replace(sidecar.config, **changes)
    await sidecar.start()


@pytest.mark.parametrize("origin", [FORGE, LAN, "https://foundry.example.org", "http://localhost:30000", None])
async def test_a_foundry_page_at_any_origin_with_the_right_token_is_welcomed(sidecar: Running,
                                                                            origin: str | None) -> None:
    assert sidecar.config.origins == ()  # no flag
    result = await attempt(sidecar.url, auth(), origin)
    assert result["welcome"]["world"] == "world0000000001"


@pytest.mark.parametrize("origin", [FORGE, EVIL, None])
async def test_a_wrong_token_from_any_origin_is_refused_auth_failed_as_a_connect_refusal(
    sidecar: Running, origin: str | None,
) -> None:
    result = await attempt(sidecar.url, auth(token="not-the-token"), origin)
    refusal = result["refused"]
    protocol.check_outbound("connect-error", refusal)
    assert refusal == {"code": "auth_failed", "message": "the token is not the one this sidecar expects"}


async def test_a_foreign_page_without_the_token_learns_nothing_a_guess_without_origin_does_not(
    sidecar: Running,
) -> None:
    """Same refusal, word for word, as any wrong token; no world, plan or prompt is sent to it,
    whether or not a world is in play."""
    playing = await attempt(sidecar.url, auth(), FORGE)
    assert playing["welcome"]
    from_evil = await attempt(sidecar.url, auth(token="guess"), EVIL)
    from_nowhere = await attempt(sidecar.url, auth(token="guess"), None)
    assert from_evil["refused"] == from_nowhere["refused"]
    assert [e for e, _ in from_evil["heard"]] == ["connect_error"]
    assert "world0000000001" not in repr(from_evil)


async def test_a_foreign_page_s_guesses_are_throttled_like_any_other(sidecar: Running) -> None:
    """Wrong tokens from a foreign origin count against the address and the token as any do:
    past ``auth_failures``, each guess waits its turn; the right token still gets in."""
    await reconfigure(sidecar, auth_failures=3, throttle_seconds=30.0, throttle_spacing=0.2)
    throttle = recording(sidecar)
    for n in range(3):
        assert (await attempt(sidecar.url, auth(token=f"guess-{n}"), EVIL))["refused"]["code"] == "auth_failed"
    assert throttle.turns == [0.0] * 3  # not under attack yet
    guesses = await asyncio.gather(*(attempt(sidecar.url, auth(token=f"more-{n}"), EVIL) for n in range(4)))
    assert [g["refused"]["code"] for g in guesses] == ["auth_failed"] * 4
    slots = sorted(throttle.slots[3:])  # when each guess was given its turn: one per 0.2 s
    assert all(b - a >= 0.2 - 1e-9 for a, b in zip(slots, slots[1:])), slots
    assert (await attempt(sidecar.url, auth(), FORGE))["welcome"]


async def test_origins_narrows_the_socket_and_a_refused_origin_is_told_so_before_its_token_is_read(
    sidecar: Running, caplog: pytest.LogCaptureFixture,
) -> None:
    await reconfigure(sidecar, origins=(FORGE,), auth_failures=1, throttle_spacing=5.0)
    assert (await attempt(sidecar.url, auth(), FORGE))["welcome"]
    assert (await attempt(sidecar.url, auth(), FORGE.upper()))["welcome"]  # an origin's host has no case
    with caplog.at_level(logging.WARNING, logger="initiative_sidecar.server"):
        for token in (TOKEN, "guess-1", "guess-2"):  # the right token too: the origin decides
            refusal = (await attempt(sidecar.url, auth(token=token), EVIL))["refused"]
            protocol.check_outbound("connect-error", refusal)
            assert refusal["code"] == "origin_refused"
            assert FORGE not in refusal["message"]  # the list is not told to strangers
    assert "refused: origin_refused" in caplog.text
    assert sidecar_of(app_of(sidecar)).throttle.failed == {}  # the guesses above counted nothing
    assert (await attempt(sidecar.url, auth(), FORGE))["welcome"]


@pytest.mark.parametrize("path", ["/", "/healthz", "/health", "/module/module.json"])
async def test_the_pages_refuse_a_browser_request_from_another_origin(sidecar: Running, path: str) -> None:
    async with aiohttp.ClientSession() as http:
        for origin in (FORGE, EVIL):
            async with http.get(sidecar.url + path, headers={"Origin": origin}) as foreign:
                assert foreign.status == 403
        async with http.get(sidecar.url + path, headers={"Origin": sidecar.url}) as own:
            assert own.status in (200, 401)


async def test_a_login_posted_from_a_foundry_origin_is_refused(sidecar: Running) -> None:
    """The socket welcomes any origin; the cookie-setting login does not."""
    async with aiohttp.ClientSession() as http:
        async with http.post(sidecar.url + "/login", data={"token": TOKEN}, headers={"Origin": FORGE},
                             allow_redirects=False) as posted:
            assert posted.status == 403
            assert "Set-Cookie" not in posted.headers
