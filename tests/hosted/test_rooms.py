"""Cross-process rooms through Redis (``--redis``): a broadcast to a world's room reaches the
world's connection whichever process publishes it; with Redis down the sidecar keeps serving
each world's own connection, and the broadcasts come back with Redis."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytest.importorskip("redis", reason="redis is not installed: pip install -e '.[hosted]'")
import redis.asyncio as aioredis  # noqa: E402
import socketio  # noqa: E402

from adapter.server.rooms import OnceThenCount, room_of  # noqa: E402
from tests.hosted import services  # noqa: E402
from tests.reliability.harness import Serve, auth_for  # noqa: E402
from tests.reliability.table import Reference, build  # noqa: E402
from tests.support.sidecar import Client, connect  # noqa: E402


@pytest.fixture
def redis_server() -> Iterator[services.Redis]:
    with services.redis() as server:
        yield server


async def heard(client: Client, url: str, world: str, mark: int, timeout: float = 10) -> bool:
    """Publish a plan to the world's room (as another process would) until the client hears it."""
    emitter = socketio.AsyncRedisManager(url, write_only=True)
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    try:
        while loop.time() < end:
            await emitter.emit("plan", {"mark": mark}, room=room_of(world))
            for _ in range(10):
                if ("plan", {"mark": mark}) in client.events:
                    return True
                await asyncio.sleep(0.05)
        return False
    finally:
        await emitter.redis.aclose()


async def test_redis_down_for_a_moment_the_world_is_still_served_and_broadcasts_come_back(
    serve_factory: Callable[..., Serve], pg_url: str, redis_server: services.Redis,
) -> None:
    ref: Reference = build("rooms-world", "foundry-core", 3, fights=1, rounds=2)
    a = serve_factory("a", args=("--store", pg_url, "--redis", redis_server.url))
    await a.start()
    client = await connect(a.url, auth_for(ref.world, ref.ruleset))
    await asyncio.wait_for(client.welcome, 10)
    third = len(ref.messages) // 3

    async def play(part: list[tuple[str, dict[str, Any]]]) -> None:
        for event, data in part:
            assert await client.send(event, data) == ref.acks[data["seq"] - 1]

    await play(ref.messages[:third])
    assert await heard(client, redis_server.url, ref.world, 1), "a broadcast published on Redis never arrived"
    redis_server.stop()
    await play(ref.messages[third:2 * third])  # acked all the same: acks do not go through Redis
    redis_server.start()
    assert await heard(client, redis_server.url, ref.world, 2, timeout=15), "broadcasts did not come back with Redis"
    await play(ref.messages[2 * third:])
    await client.close()
    assert "Traceback" not in a.logs()


async def test_a_stuck_redis_costs_no_ack_and_publishes_nothing_of_the_worlds_own(
    serve_factory: Callable[..., Serve], pg_url: str, redis_server: services.Redis,
) -> None:
    """Redis paused (SIGSTOP: its sockets open, no reply ever comes) while a world is played:
    each ack still comes. Nothing the sidecar emits (welcome, plans) is published: no other
    process listens to it, and a Redis subscriber hears none of it."""
    ref: Reference = build("stuck-redis-world", "foundry-core", 3, fights=1, rounds=2)
    a = serve_factory("a", args=("--store", pg_url, "--redis", redis_server.url))
    await a.start()
    spy = aioredis.Redis.from_url(redis_server.url).pubsub()
    await spy.subscribe("socketio")
    client = await connect(a.url, auth_for(ref.world, ref.ruleset))
    await asyncio.wait_for(client.welcome, 10)
    half = len(ref.messages) // 2
    for event, data in ref.messages[:half]:
        assert await client.send(event, data) == ref.acks[data["seq"] - 1]
    published = await spy.get_message(ignore_subscribe_messages=True, timeout=0.5)
    assert published is None, f"the sidecar published {published}"
    redis_server.pause()
    try:
        for event, data in ref.messages[half:]:
            assert await client.send(event, data, timeout=10) == ref.acks[data["seq"] - 1]
    finally:
        redis_server.resume()
    await client.close()
    await spy.aclose()
    assert "Traceback" not in a.logs()


def test_redis_failures_are_logged_once_then_as_a_count(caplog: pytest.LogCaptureFixture) -> None:
    clock = [0.0]
    sink = OnceThenCount(every=60.0)
    sink.quiet.clock = lambda: clock[0]
    with caplog.at_level(logging.DEBUG, logger="initiative_sidecar.rooms"):
        for i in range(1210):  # a 1.2 s restart's worth of retries
            clock[0] = i * 0.001
            sink.error(f"Cannot receive from redis... retrying in {1 + i % 3} secs",
                       extra={"redis_exception": "Connection refused"})
        clock[0] = 61.0
        sink.error("Cannot receive from redis... retrying in 1 secs", extra={"redis_exception": "Connection refused"})
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2, lines
    assert "Connection refused" in lines[0] and "1209 more like it" in lines[1]
