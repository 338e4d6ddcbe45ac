"""One owner per world across sidecar processes on one PostgreSQL store.

Two processes racing for a world: one serves it, the other refuses ``served_elsewhere``. A
process SIGKILLed mid-session: its worlds' writers reach the other process, which takes the
leases (PostgreSQL dropped them with the dead process's connections), loads the worlds from
the store and goes on; no acked message is lost and the final plans equal an uninterrupted run.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import time
from collections.abc import Callable
from typing import Any

import aiohttp
import pytest
import socketio

from tests.hosted import services
from tests.reliability.harness import Link, Outbox, Serve, auth_for, open_link
from tests.reliability.table import RULESETS, Reference, build

# the hosted extra (pip install -e ".[hosted]"): without it these tests are skipped, not broken
pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[hosted]'")
import psycopg  # noqa: E402


async def attempt(url: str, world: str) -> tuple[str, Any, socketio.AsyncClient]:
    """Connect as the world's writer: ("welcome", data) or ("refused", the connect error data)."""
    sio = socketio.AsyncClient(reconnection=False)
    welcome: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    refusals: list[Any] = []
    def on_welcome(data: Any) -> None:
        if not welcome.done():
            welcome.set_result(data)

    sio.on("welcome", on_welcome)
    sio.on("connect_error", lambda data: refusals.append(data))
    try:
        await sio.connect(url, auth=auth_for(world, "foundry-core"), transports=["websocket"], wait_timeout=5)
    except socketio.exceptions.ConnectionError:
        await sio.disconnect()
        return "refused", refusals[0]["data"], sio
    return "welcome", await asyncio.wait_for(welcome, 10), sio


async def health(url: str) -> tuple[int, Any]:
    async with aiohttp.ClientSession() as http, http.get(f"{url}/healthz") as response:
        return response.status, await response.json()


async def writer(url: str, ref: Reference, timeout: float = 10) -> Link:
    """The world's writer on this process, retried while the world's last owner lets go of
    it (a disconnect, a session's end reach the server a moment later), as the module does."""
    end = time.monotonic() + timeout
    while True:
        try:
            link = await open_link(url, auth_for(ref.world, ref.ruleset))
        except socketio.exceptions.ConnectionError:
            if time.monotonic() > end:
                raise
            await asyncio.sleep(0.05)
            continue
        await asyncio.wait_for(link.welcome, 10)
        return link


async def pair(serve_factory: Callable[..., Serve], url: str) -> tuple[Serve, Serve]:
    a = serve_factory("a", args=("--store", url, "--snapshot-every", "25"))
    b = serve_factory("b", args=("--store", url, "--snapshot-every", "25"))
    await asyncio.gather(a.start(), b.start())
    return a, b


async def test_two_processes_racing_for_one_world_one_serves_it_and_the_other_refuses(
    serve_factory: Callable[..., Serve], pg_url: str,
) -> None:
    a, b = await pair(serve_factory, pg_url)
    results = await asyncio.gather(*(attempt(s.url, "raced-world") for s in (a, b)))
    kinds = sorted(kind for kind, _, _ in results)
    assert kinds == ["refused", "welcome"], results
    [(_, refusal, _)] = [r for r in results if r[0] == "refused"]
    assert refusal["code"] == "served_elsewhere" and "another sidecar process" in refusal["message"]
    [winner] = [sio for kind, _, sio in results if kind == "welcome"]
    loser = b if results[0][0] == "welcome" else a
    await winner.disconnect()  # the writer leaves: the lease is released, the other may take it
    for _ in range(50):
        kind, data, sio = await attempt(loser.url, "raced-world")
        await sio.disconnect()
        if kind == "welcome":
            break
        await asyncio.sleep(0.05)
    assert kind == "welcome", data
    assert "Traceback" not in a.logs() + b.logs()


@pytest.fixture(scope="module")
def session() -> dict[str, Reference]:
    return {rs: build(f"hosted-{rs}", rs, 14, fights=2, rounds=3) for rs in RULESETS}


async def test_a_sigkilled_process_s_worlds_are_taken_over_with_no_acked_message_lost(
    serve_factory: Callable[..., Serve], pg_url: str, session: dict[str, Reference],
) -> None:
    a, b = await pair(serve_factory, pg_url)
    total = sum(len(r.messages) for r in session.values())
    acks = 0
    kill_at = total // 2

    def on_ack() -> None:
        nonlocal acks
        acks += 1
        if acks == kill_at:
            a.kill()  # mid-session, with messages in flight

    turns = itertools.cycle((a, b))  # every writer tries both; the lease decides who serves

    def url() -> str:
        serve = next(turns)
        return b.url if serve is a and a.proc is not None and a.proc.returncode is not None else serve.url

    boxes = {rs: Outbox(ref, url, window=8, on_ack=on_ack) for rs, ref in session.items()}
    deadline = time.monotonic() + 90
    await asyncio.gather(*(box.run(deadline=deadline) for box in boxes.values()))
    assert a.proc is not None and await a.wait() != 0  # it was killed, not finished
    with psycopg.connect(pg_url) as db:
        for rs, box in boxes.items():
            stored = [r[0] for r in db.execute(
                "SELECT seq FROM messages WHERE world = %s ORDER BY seq", (session[rs].world,))]
            assert stored == list(range(1, box.total + 1))
            assert box.acked <= set(stored)
    for rs, box in boxes.items():
        box.url = lambda: b.url
        assert await box.final_state() == session[rs].final, f"{rs}: final plans differ after the takeover"
    took_over = b.logs().count("restored at seq")
    assert took_over >= 1, "process b loaded no world from the store"
    assert "Traceback" not in a.logs() + b.logs()


async def test_a_world_is_loaded_again_when_it_comes_back_from_another_process(
    serve_factory: Callable[..., Serve], pg_url: str, session: dict[str, Reference],
) -> None:
    """A → B → A: what B stored is what A serves when the world comes back."""
    a, b = await pair(serve_factory, pg_url)
    ref = session["storyteller"]
    half = len(ref.messages) // 2
    for serve, part in ((a, ref.messages[:half]), (b, ref.messages[half:])):
        link = await writer(serve.url, ref)
        for event, data in part:
            ack = await asyncio.wait_for(await link.emit(event, data), 10)
            assert ack == ref.acks[data["seq"] - 1]
        await link.close()
    await (await writer(a.url, ref)).close()  # back on A once B has let go of it
    assert await Outbox(ref, lambda: a.url).final_state() == ref.final


async def test_postgresql_down_refuses_store_unavailable_and_serving_resumes_when_it_is_back(
    serve_factory: Callable[..., Serve], session: dict[str, Reference],
) -> None:
    """Nothing is acked while the store cannot commit; the writer's resends go through after."""
    ref = session["foundry-core"]
    with services.postgres() as own:  # its own cluster: this test stops it
        a = serve_factory("a", args=("--store", own.new_database()))
        await a.start()
        link = await open_link(a.url, auth_for(ref.world, ref.ruleset))
        await asyncio.wait_for(link.welcome, 10)
        for event, data in ref.messages[:5]:
            assert await asyncio.wait_for(await link.emit(event, data), 10) == ref.acks[data["seq"] - 1]
        assert (await health(a.url))[0] == 200
        own.stop()
        status, body = await health(a.url)
        assert status == 503 and "cannot be written" in body["store"], body
        event, data = ref.messages[5]
        ack = await asyncio.wait_for(await link.emit(event, data), 10)
        assert ack["ok"] is False and ack["error"]["code"] == "store_unavailable", ack
        await link.close()
        await asyncio.sleep(0.2)
        kind, refusal, sio = await attempt(a.url, "another-world")
        await sio.disconnect()
        assert (kind, refusal["code"]) == ("refused", "store_unavailable"), refusal
        own.start()
        assert (await health(a.url))[0] == 200
        box = Outbox(ref, lambda: a.url)
        box.stored = box.max_acked = box.max_sent = 5
        await box.run(deadline=time.monotonic() + 30)
        assert await box.final_state() == ref.final
        assert "Traceback" not in a.logs()


async def test_a_process_whose_postgresql_session_ended_acks_nothing_more_and_the_world_moves(
    serve_factory: Callable[..., Serve], pg_url: str, session: dict[str, Reference],
) -> None:
    """The session holding A's leases is terminated while A runs: A refuses the world's next
    message (never acks it), the writer moves to B, which resumes where A's acks ended."""
    a, b = await pair(serve_factory, pg_url)
    ref = session["dice-pool"]
    link = await open_link(a.url, auth_for(ref.world, ref.ruleset))
    await asyncio.wait_for(link.welcome, 10)
    for event, data in ref.messages[:10]:
        assert await asyncio.wait_for(await link.emit(event, data), 10) == ref.acks[data["seq"] - 1]
    assert a.proc is not None
    with psycopg.connect(pg_url, autocommit=True) as admin:
        ended = admin.execute(
            "SELECT pg_terminate_backend(l.pid, 5000) FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid "
            "WHERE l.locktype = 'advisory' AND s.application_name = %s",
            (f"initiative-sidecar {a.proc.pid}",)).fetchall()
    assert ended == [(True,)]
    event, data = ref.messages[10]
    codes = [(await asyncio.wait_for(await link.emit(event, data), 10))["error"]["code"] for _ in range(2)]
    assert codes == ["store_unavailable", "served_elsewhere"]
    await link.close()

    moved = await writer(b.url, ref)
    welcome = await asyncio.wait_for(moved.welcome, 10)
    assert welcome["last_seq"] == 10
    kind, refusal, sio = await attempt(a.url, ref.world)  # B holds it now: A refuses
    await sio.disconnect()
    assert (kind, refusal["code"]) == ("refused", "served_elsewhere")
    for event, data in ref.messages[10:]:
        assert await asyncio.wait_for(await moved.emit(event, data), 10) == ref.acks[data["seq"] - 1]
    await moved.close()
    await asyncio.sleep(0.2)
    assert await Outbox(ref, lambda: b.url).final_state() == ref.final


async def test_a_stopped_process_s_world_is_served_by_another_while_it_stays_stopped(
    serve_factory: Callable[..., Serve], pg_url: str, session: dict[str, Reference],
) -> None:
    """SIGSTOP: alive, its sockets open, its PostgreSQL session open, answering nothing. Its
    lease must not outlive its silence: the world's writer, refused ``served_elsewhere`` by the
    other process at first, is welcomed there while the owner is still stopped (the lease ends
    within seconds: LEASE_SILENCE_MS), resumes from the last acked seq, and ends as an
    uninterrupted run. Woken up, the stopped process stores nothing more for the world."""
    a, b = await pair(serve_factory, pg_url)
    ref = session["balanced-d20"]
    link = await open_link(a.url, auth_for(ref.world, ref.ruleset))
    await asyncio.wait_for(link.welcome, 10)
    half = len(ref.messages) // 2
    for event, data in ref.messages[:half]:
        assert await asyncio.wait_for(await link.emit(event, data), 10) == ref.acks[data["seq"] - 1]
    assert a.proc is not None
    os.kill(a.proc.pid, signal.SIGSTOP)
    try:
        refusals, deadline = 0, time.monotonic() + 30
        while True:  # bounded: the module retries the same way
            kind, data, sio = await attempt(b.url, ref.world)
            if kind == "welcome":
                break
            await sio.disconnect()
            assert data["code"] == "served_elsewhere", data
            refusals += 1
            assert time.monotonic() < deadline, "the stopped process kept its world"
            await asyncio.sleep(0.5)
        assert data["last_seq"] == half
        assert a.proc.returncode is None  # still there, still stopped
        await sio.disconnect()
    finally:
        os.kill(a.proc.pid, signal.SIGCONT)
    event, data = ref.messages[half]
    late = await asyncio.wait_for(await link.emit(event, data), 10)  # to the woken process
    assert late["ok"] is False and late["error"]["code"] in ("store_unavailable", "served_elsewhere"), late
    await link.close()
    moved = await writer(b.url, ref)
    for event, data in ref.messages[half:]:
        assert await asyncio.wait_for(await moved.emit(event, data), 10) == ref.acks[data["seq"] - 1]
    await moved.close()
    await asyncio.sleep(0.2)
    assert await Outbox(ref, lambda: b.url).final_state() == ref.final
    assert refusals >= 1  # it was the other process's world at first
