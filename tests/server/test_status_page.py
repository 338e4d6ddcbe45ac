"""The status page over HTTP: behind the world's token, a cookie session, nothing shown without it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from adapter.config import Config
from adapter.server import STATUS_KEY
from tests.server.test_roundtrip import hook, roll
from tests.support.sidecar import TOKEN, Running, auth, connect

WORLD = "world0000000001"
OTHER = "worldOther000002"
OTHER_TOKEN = "other-world-token-42"


def session() -> aiohttp.ClientSession:
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


async def log_in(http: aiohttp.ClientSession, url: str, token: str, **headers: str) -> aiohttp.ClientResponse:
    return await http.post(f"{url}/login", data={"token": token, "lang": "en"}, allow_redirects=False,
                           headers=headers)


@pytest.fixture
async def two_worlds(tmp_path: Path) -> AsyncIterator[Running]:
    config = Config(host="127.0.0.1", port=0, db=tmp_path / "s.db", token=TOKEN,
                    world_tokens={OTHER: OTHER_TOKEN})
    running = Running(config)
    await running.start()
    for world, token in ((WORLD, TOKEN), (OTHER, OTHER_TOKEN)):
        client = await connect(running.url, auth(world=world, token=token))
        await asyncio.wait_for(client.welcome, 5)
        assert (await client.send("hook", hook(1)))["ok"]
        bad = hook(2)
        bad["world_time"] = "noon"
        await client.send("hook", bad)
        await client.close()
    yield running
    await running.stop()


async def test_without_a_cookie_the_page_is_401_and_shows_no_world(two_worlds: Running) -> None:
    async with session() as http:
        async with http.get(f"{two_worlds.url}/") as response:
            body = await response.text()
            assert response.status == 401
        assert 'name="token"' in body and 'type="password"' in body
        assert WORLD not in body and OTHER not in body and "Aria" not in body
        async with http.get(f"{two_worlds.url}/status/events") as response:
            assert response.status == 401


async def test_a_wrong_token_is_401_sets_no_cookie_and_shows_no_world(two_worlds: Running) -> None:
    async with session() as http:
        response = await log_in(http, two_worlds.url, "not-the-token")
        body = await response.text()
        assert response.status == 401 and "Set-Cookie" not in response.headers
        assert "not a token this sidecar knows" in body and WORLD not in body
        async with http.get(f"{two_worlds.url}/") as page:
            assert page.status == 401


async def test_the_token_opens_a_cookie_session_showing_its_worlds_plans_and_refusals(two_worlds: Running) -> None:
    async with session() as http:
        response = await log_in(http, two_worlds.url, TOKEN)
        assert response.status == 303 and TOKEN not in response.headers["Location"]
        cookie = response.headers["Set-Cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and TOKEN not in cookie
        async with http.get(f"{two_worlds.url}/") as page:
            body = await page.text()
            assert page.status == 200
        assert "Content-Security-Policy" in page.headers
    assert WORLD in body and OTHER not in body  # the other world has its own token
    assert "Aria" in body and "Boss" in body and "foundry-core" in body
    assert "invalid_message" in body and "/world_time" in body
    assert TOKEN not in body


async def test_a_worlds_own_token_shows_that_world_only(two_worlds: Running) -> None:
    async with session() as http:
        assert (await log_in(http, two_worlds.url, OTHER_TOKEN)).status == 303
        async with http.get(f"{two_worlds.url}/") as page:
            body = await page.text()
    assert OTHER in body and WORLD not in body


async def test_logging_out_ends_the_session(two_worlds: Running) -> None:
    async with session() as http:
        await log_in(http, two_worlds.url, TOKEN)
        async with http.post(f"{two_worlds.url}/logout", allow_redirects=False) as out:
            assert out.status == 303
        async with http.get(f"{two_worlds.url}/") as page:
            assert page.status == 401


async def test_a_login_from_another_origin_is_refused_and_from_the_page_itself_accepted(two_worlds: Running) -> None:
    async with session() as http:
        foreign = await log_in(http, two_worlds.url, TOKEN, Origin="http://evil.example")
        assert foreign.status == 403
        own = await log_in(http, two_worlds.url, TOKEN, Origin=two_worlds.url)
        assert own.status == 303


async def test_wrong_tokens_slow_the_guesses_for_every_address_and_never_refuse_the_right_token(
    two_worlds: Running,
) -> None:
    """Issue 15 item 5, at the status page's door too: guesses count per token as well as per
    address (a guesser rotating addresses gains nothing), and the right token waits its turn
    instead of being locked out."""
    assert two_worlds.runner is not None
    board = two_worlds.runner.app[STATUS_KEY]
    elsewhere = board.throttle_keys("203.0.113.9")  # an address that never guessed
    async with session() as http:
        assert not board.throttle.hot(elsewhere)
        codes = [(await log_in(http, two_worlds.url, f"guess-{n}")).status for n in range(6)]
        assert codes == [401] * 6
        assert "token (shared)" in board.throttle.hot(elsewhere)  # slowed wherever it comes from
        assert (await log_in(http, two_worlds.url, TOKEN)).status == 303


async def test_the_token_never_reaches_a_log(two_worlds: Running, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    async with session() as http:
        await log_in(http, two_worlds.url, TOKEN)
        await log_in(http, two_worlds.url, "wrong")
        async with http.get(f"{two_worlds.url}/") as page:
            await page.text()
    assert caplog.records and not [r for r in caplog.records if TOKEN in r.getMessage()]


async def test_the_event_stream_sends_the_worlds_and_their_changes(two_worlds: Running) -> None:
    async with session() as http:
        await log_in(http, two_worlds.url, TOKEN)
        async with http.get(f"{two_worlds.url}/status/events") as stream:
            assert stream.status == 200 and stream.content_type == "text/event-stream"
            first = await asyncio.wait_for(stream.content.readuntil(b"\n\n"), 5)
            assert first.startswith(b"event: worlds\n") and WORLD.encode() in first
            assert b'data-revision="1"' in first
            client = await connect(two_worlds.url, auth())
            await asyncio.wait_for(client.welcome, 5)
            ack = await client.send("hook", roll(3, "aaaa000000000001", 12))
            assert ack["ok"], ack
            changed = b""
            while b'data-revision="2"' not in changed:
                changed = await asyncio.wait_for(stream.content.readuntil(b"\n\n"), 5)
            await client.close()

