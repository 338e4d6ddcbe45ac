"""The whole hosted topology on this machine: two sidecar processes on one PostgreSQL store,
broadcasts through Redis, nginx in front routing by world (deploy/nginx.conf's own routing).

100 worlds play through nginx at once; every world's connections reach one process (no
``served_elsewhere`` while both run), both processes get worlds, and every world ends as its
uninterrupted run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator

import pytest

from tests.hosted import services
from tests.reliability.harness import Outbox, Serve
from tests.reliability.table import Reference, build

WORLDS = 100


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with services.redis() as server:
        yield server.url


@pytest.fixture(scope="module")
def tables() -> list[Reference]:
    return [build(f"nginx-world-{i:03d}", "foundry-core", i, fights=1, rounds=1) for i in range(WORLDS)]


async def test_two_processes_behind_nginx_serve_100_worlds_each_on_one_process(
    serve_factory: Callable[..., Serve], pg_url: str, redis_url: str, tables: list[Reference],
) -> None:
    args = ("--store", pg_url, "--redis", redis_url, "--snapshot-every", "50")
    a, b = serve_factory("a", args=args), serve_factory("b", args=args)
    await asyncio.gather(a.start(), b.start())
    with services.nginx([a.port, b.port]) as port:
        def via_nginx(world: str) -> Callable[[], str]:
            return lambda: f"http://127.0.0.1:{port}/?world={world}"

        boxes = [Outbox(ref, via_nginx(ref.world), window=4) for ref in tables]
        deadline = time.monotonic() + 60
        await asyncio.gather(*(box.run(deadline=deadline) for box in boxes))
        for box in boxes[:10]:  # read back through nginx: the final plans
            assert await box.final_state() == box.ref.final
    logs = {s: s.logs() for s in (a, b)}
    served = {s: {t.world for t in tables if f"connected: world {t.world}," in logs[s]} for s in (a, b)}
    assert served[a] and served[b], "nginx sent every world to one process"
    assert not served[a] & served[b], f"worlds reached both processes: {sorted(served[a] & served[b])[:5]}"
    assert len(served[a] | served[b]) == WORLDS
    assert sum(box.reconnects for box in boxes) == WORLDS  # one connection each, none refused
    assert "served_elsewhere" not in logs[a] + logs[b]
    assert "Traceback" not in logs[a] + logs[b]


async def test_behind_nginx_a_sigkilled_process_s_worlds_move_to_the_other_with_nothing_acked_lost(
    serve_factory: Callable[..., Serve], pg_url: str, redis_url: str, tables: list[Reference],
) -> None:
    """nginx skips the dead process (proxy_next_upstream), the hash sends its worlds to the
    other one, which takes their leases and loads them from PostgreSQL."""
    args = ("--store", pg_url, "--redis", redis_url, "--snapshot-every", "20")
    a, b = serve_factory("a", args=args), serve_factory("b", args=args)
    await asyncio.gather(a.start(), b.start())
    some = tables[:12]
    killed = False

    def on_ack() -> None:
        """Kill ``a`` mid-session: at the first ack of a world ``a`` serves while that world
        still has messages to send (a fixed count of acks let a loaded machine finish all of
        ``a``'s worlds first, or none, and nothing moved)."""
        nonlocal killed
        if killed:
            return
        logs = a.logs()
        if any(box.acked and len(box.acked) < box.total - 2 and f"connected: world {box.ref.world}," in logs
               for box in boxes):
            killed = True
            a.kill()

    with services.nginx([a.port, b.port]) as port:
        boxes = [Outbox(ref, (lambda w: lambda: f"http://127.0.0.1:{port}/?world={w}")(ref.world), window=4,
                        on_ack=on_ack) for ref in some]
        await asyncio.gather(*(box.run(deadline=time.monotonic() + 60) for box in boxes))
        assert a.proc is not None and await a.wait() != 0
        for box in boxes:
            assert await box.final_state() == box.ref.final, box.ref.world
    moved = [box.ref.world for box in boxes if box.reconnects > 1]
    assert moved, "no world was on the killed process"
    assert all(f"world {w} restored at seq" in b.logs() for w in moved)
    assert "Traceback" not in a.logs() + b.logs()
