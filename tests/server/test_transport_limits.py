"""Issue 15, items 4, 6, 7 and 9: the transport holds no socket, buffer or log line without a bound.

Each test plays the attack at the frame level (tests/server/rawclient.py) against an
in-process sidecar with small limits, and checks that another world's GM is answered
meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import replace
from typing import Any

import aiohttp
import pytest

from adapter.server import SIDECAR_KEY
from adapter.server.guard import GuardedServer
from adapter.server.pacing import Quiet, address_key, quiet_loop_errors
from tests.server.rawclient import RawClient
from tests.support.sidecar import GM, Running, auth, connect


def hook(seq: int, combatants: int = 0) -> dict[str, Any]:
    people: list[dict[str, Any]] = [{"_id": f"c{i:015d}", "name": f"Fighter {i}", "initiative": None, "owners": [],
               "is_npc": True, "hidden": False, "defeated": False} for i in range(combatants)]
    return {"seq": seq, "user": GM, "world_time": 0, "hook": "updateCombat",
            "combat": {"_id": "combatTransport1", "round": 0, "combatants": people},
            "current": {"round": 0, "combatantId": None}}


async def reconfigure(sidecar: Running, **changes: Any) -> GuardedServer:
    await sidecar.stop()
    sidecar.config = replace(sidecar.config, **changes)
    await sidecar.start()
    assert sidecar.runner is not None
    return sidecar.runner.app[SIDECAR_KEY].sio


async def gm_answers(sidecar: Running, seq: int) -> None:
    """Another world's GM connects and is answered (within the test's timeouts)."""
    gm = await connect(sidecar.url, auth(world="worldOfTheGm"))
    try:
        assert (await gm.welcome)["world"] == "worldOfTheGm"
        assert (await gm.send("hook", hook(seq), timeout=5))["seq"] == seq
    finally:
        await gm.close()


def test_all_of_loopback_is_one_address_and_ipv6_counts_by_its_64() -> None:
    assert {address_key(a) for a in ("127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.5")} == {"loopback"}
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:bbbb::9") != address_key("2001:db8:1:3::1")
    assert address_key("192.0.2.7") == "192.0.2.7"


# ---------------------------------------------------------------- item 4: idle sockets


async def test_a_socket_that_does_not_authenticate_in_time_is_closed(sidecar: Running) -> None:
    server = await reconfigure(sidecar, connect_timeout=0.5)
    silent = await RawClient.open(sidecar.url)  # never sends CONNECT
    refused = await RawClient.open(sidecar.url)  # sends a wrong token, then stays
    accepted = await RawClient.open(sidecar.url)
    try:
        assert "error" in await refused.connect(auth(token="not-the-token"))
        assert "sid" in await accepted.connect(auth())
        assert await silent.closed(timeout=3) and await refused.closed(timeout=3)
        assert (await accepted.call("hook", hook(1)))["ok"] is True  # an accepted one stays
        assert len(server.peers) == 1
    finally:
        for raw in (silent, refused, accepted):
            await raw.close()


async def test_a_flood_of_idle_sockets_from_one_address_is_capped_and_the_gm_still_connects(
    sidecar: Running,
) -> None:
    server = await reconfigure(sidecar, pending_per_address=5, connect_timeout=30)
    idle = [await RawClient.open(sidecar.url) for _ in range(12)]
    try:
        assert len(server.pending("loopback")) == 5  # each new one closed the oldest idle one
        closed = await asyncio.gather(*(raw.closed(timeout=2) for raw in idle[:7]))
        assert all(closed)
        await gm_answers(sidecar, 1)  # the GM, on the same address, gets in at once
    finally:
        for raw in idle:
            await raw.close()


def test_a_repeated_event_loop_error_is_logged_once_a_second_with_a_count(caplog: pytest.LogCaptureFixture) -> None:
    """What fd exhaustion makes asyncio report on every accept()."""
    now = [0.0]
    loop = asyncio.new_event_loop()
    try:
        quiet_loop_errors(loop, Quiet(logging.getLogger("asyncio"), clock=lambda: now[0]))
        context = {"message": "socket.accept() out of system resource", "exception": OSError(24, "Too many open files")}
        with caplog.at_level(logging.ERROR, logger="asyncio"):
            for _ in range(10_000):
                now[0] += 0.0001  # 10,000 errors within one second
                loop.call_exception_handler(context)
            now[0] += 1.0
            loop.call_exception_handler(context)
    finally:
        loop.close()
    lines = [r.getMessage() for r in caplog.records if "out of system resource" in r.getMessage()]
    assert len(lines) == 2, lines
    assert "and 9999 more like it" in lines[1]


# ---------------------------------------------------------------- item 6: a client that never reads


async def test_a_client_that_never_reads_is_cut_off_and_its_buffer_goes(sidecar: Running) -> None:
    server = await reconfigure(sidecar, max_outgoing_bytes=256 * 1024, rate=1e6, burst=1_000_000)
    reader = await RawClient.open(sidecar.url)
    try:
        assert "sid" in await reader.connect(auth())
        assert (await reader.call("hook", hook(1, combatants=150)))["ok"] is True
        # duplicates of seq 1 each carry the 150-entry plan; the client reads none of them
        frame = "42" + "{}" + json.dumps(["hook", hook(1, combatants=150)])
        try:
            for i in range(3000):
                await reader.ws.send_str(frame.replace("{}", str(1000 + i), 1))
                if i % 100 == 0:
                    await asyncio.sleep(0)  # let the server handle them
        except (aiohttp.ClientError, ConnectionError):
            pass  # cut off while still sending
        for _ in range(200):
            if not server.peers:
                break
            await asyncio.sleep(0.05)
        assert not server.peers, "the connection that never reads was not cut"
        assert not server.eio.sockets
        await gm_answers(sidecar, 1)
    finally:
        await reader.close()


# ---------------------------------------------------------------- item 7: binary events


async def test_a_binary_event_is_refused_at_once_and_its_announced_attachments_are_dropped(sidecar: Running) -> None:
    server = await reconfigure(sidecar, rate=1e6, burst=1_000_000)
    raw = await RawClient.open(sidecar.url)
    try:
        assert "sid" in await raw.connect(auth())
        payload = {**hook(1), "options": {"blob": {"_placeholder": True, "num": 0}}}
        await raw.send_text("45999999-7" + json.dumps(["hook", payload]))  # announces 999,999 attachments
        ack = await raw.ack(7)
        assert ack["ok"] is False and ack["seq"] == 1 and ack["error"]["code"] == "invalid_message"
        assert ack["error"]["path"] == "/options/blob"
        for _ in range(2000):
            await raw.send_bytes(b"\x00" * 1024)
        assert (await raw.call("hook", hook(2)))["ok"] is True  # seq 1 was used up
        [peer] = server.peers.values()
        assert peer.skip_attachments == 999_999 - 2000
        assert not server._binary_packet  # socket.io buffered nothing
    finally:
        await raw.close()


# ---------------------------------------------------------------- item 9: malformed frames


async def test_malformed_frames_count_against_the_rate_and_are_logged_once_a_second(
    sidecar: Running, caplog: pytest.LogCaptureFixture,
) -> None:
    server = await reconfigure(sidecar, rate=50.0, burst=100)
    raw = await RawClient.open(sidecar.url)
    try:
        assert "sid" in await raw.connect(auth())
        unreadable = await raw.emit_raw('["hook",{"seq":1,')  # an event whose JSON is cut: its text shows seq 1
        ack = await raw.ack(unreadable)
        assert ack["ok"] is False and ack["seq"] == 1 and ack["error"]["code"] == "invalid_message"
        with caplog.at_level(logging.INFO, logger="initiative_sidecar.server"):
            try:
                for _ in range(2000):
                    await raw.send_text("4{garbage")
            except (aiohttp.ClientError, ConnectionError):
                pass
            assert await raw.closed(timeout=5), "a flood of malformed frames past the rate was not cut"
        assert not server.peers
        lines = [r.getMessage() for r in caplog.records if "could not be read" in r.getMessage()]
        assert 1 <= len(lines) <= 2, lines
        await gm_answers(sidecar, 1)
    finally:
        await raw.close()


# ---------------------------------------------------------------- messages in hand per connection


async def test_a_connection_has_one_message_in_hand_its_next_frames_wait_unread(sidecar: Running) -> None:
    """A connection's frames are read one at a time: while its message waits for its world,
    the frames behind it stay unread (in the socket, not decoded into a task each), and once
    it is answered they are handled in order."""
    server = await reconfigure(sidecar, rate=1e6, burst=1_000_000)
    assert sidecar.runner is not None
    world = sidecar.runner.app[SIDECAR_KEY].locks["world0000000001"]
    raw = await RawClient.open(sidecar.url)
    try:
        assert "sid" in await raw.connect(auth())
        loop = asyncio.get_running_loop()
        before = len(asyncio.all_tasks(loop))
        async with world:  # the world is busy: the first message waits for it
            ids = [await raw.emit("hook", hook(seq, combatants=20)) for seq in range(1, 51)]
            for _ in range(20):
                await asyncio.sleep(0.01)
            waiting = len(asyncio.all_tasks(loop)) - before
            assert not server.eio.sockets[next(iter(server.peers))].queue.qsize()  # nothing answered yet
        assert waiting <= 1, f"{waiting} tasks for one connection's 50 waiting messages"
        acks = [await raw.ack(i) for i in ids]
        assert [a["seq"] for a in acks] == list(range(1, 51)) and all(a["ok"] for a in acks)
    finally:
        await raw.close()


# ---------------------------------------------------------------- frames nested too deep to read (issue 28)


@pytest.mark.parametrize("depth", [1_030, 100_000])
async def test_an_event_nested_deeper_than_the_json_reader_allows_gets_invalid_message_with_its_seq(
    sidecar: Running, depth: int,
) -> None:
    await reconfigure(sidecar, rate=1e6, burst=1_000_000)
    raw = await RawClient.open(sidecar.url)
    try:
        assert "sid" in await raw.connect(auth())
        deep = "[" * depth + "]" * depth
        first = await raw.emit_raw('["hook",{"seq":1,"deep":' + deep + "}]")
        ack = await raw.ack(first)
        assert ack["ok"] is False and ack["error"]["code"] == "invalid_message", ack
        assert ack["seq"] == 1  # the seq its text shows
        # a "seq" deeper in, or in a string, is not the payload's: none shown
        hidden = await raw.emit_raw('["hook",{"note":"\\"seq\\":7","deep":[{"seq":9}],"x":' + deep + "}]")
        assert (await raw.ack(hidden))["seq"] is None
        binary = 1_000 + raw.next_id  # a binary event announcing an attachment, nested too deep
        await raw.send_text(f"451-{binary}" + '["hook",{"seq":2,"deep":' + deep + "}]")
        ack = await raw.ack(binary)
        assert ack["error"]["code"] == "invalid_message" and ack["seq"] == 2, ack
        await raw.send_bytes(b"\x00")
        assert (await raw.call("hook", hook(1)))["ok"] is True  # the unread seq 1 was not used up
    finally:
        await raw.close()


async def test_a_connect_whose_auth_is_nested_too_deep_is_refused_not_left_waiting(sidecar: Running) -> None:
    raw = await RawClient.open(sidecar.url)
    try:
        text = json.dumps(auth())[:-1] + ', "deep": ' + "[" * 5_000 + "]" * 5_000 + "}"
        await raw.send_text("40" + text)
        while raw.connect_reply is None:
            await raw._read(5)
        assert raw.connect_reply["error"]["data"]["code"] == "invalid_auth", raw.connect_reply
        raw.connect_reply = None
        assert "sid" in await raw.connect(auth())  # the same socket may still connect properly
    finally:
        await raw.close()
