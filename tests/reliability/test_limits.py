"""Limits: the size limit below socket.io's own, the nesting limit, the per-connection rate
limit (far above a table's pace and the benchmark's), and throttled wrong tokens."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from adapter.cli import parser
from adapter.config import Config, ConfigError, from_args
from adapter.errors import ConnectRefused
from adapter.protocol import MAX_DEPTH
from adapter.server import SIDECAR_KEY
from adapter.server.throttle import Throttle
from tests.reliability.harness import auth_for, open_link
from tests.reliability.table import build
from tests.support.sidecar import GM, TOKEN, Running, auth, connect, refused, until


def hook(seq: int, **extra: Any) -> dict[str, Any]:
    return {"seq": seq, "user": GM, "world_time": 0, "hook": "updateCombat",
            "combat": {"_id": "combatLimits0001", "round": 0, "combatants": []},
            "current": {"round": 0, "combatantId": None}, **extra}


async def reconfigure(sidecar: Running, **changes: Any) -> Running:
    await sidecar.stop()
    sidecar.config = replace(sidecar.config, **changes)
    await sidecar.start()
    return sidecar


def test_the_size_limit_stays_below_socket_io_s_buffer_limit(tmp_path: Path) -> None:
    config = Config()
    assert config.max_bytes < config.buffer_bytes
    args = parser().parse_args(["serve", "--db", str(tmp_path / "x.db"), "--token", "t",
                                "--max-bytes", str(config.buffer_bytes)])
    with pytest.raises(ConfigError, match="below socket.io's buffer limit"):
        from_args(args)


async def test_a_message_past_the_size_limit_is_refused_too_large_and_one_past_the_buffer_only_drops_its_connection(
    sidecar: Running,
) -> None:
    client = await connect(sidecar.url, auth())
    other = await connect(sidecar.url, auth(world="worldOther"))
    await client.welcome
    await other.welcome
    limit = sidecar.config.max_bytes
    ack = await client.send("hook", hook(1, options={"pad": "x" * (limit + 1)}))
    assert ack["ok"] is False and ack["error"]["code"] == "too_large" and str(limit) in ack["error"]["message"]
    assert (await client.send("hook", hook(2, options={"pad": "x" * (limit - 1000)})))["ok"] is True
    with pytest.raises(Exception):  # noqa: B017 - socket.io drops the connection, no ack
        await client.send("hook", hook(3, options={"pad": "x" * (sidecar.config.buffer_bytes + 10)}), timeout=1)
    assert await until(lambda: not client.sio.connected)
    assert (await other.send("hook", hook(1)))["ok"] is True  # the others are still answered
    again = await connect(sidecar.url, auth())
    assert (await again.welcome)["last_seq"] == 2  # the oversized frame used up nothing
    await again.close()
    await other.close()


@pytest.mark.parametrize("depth, refused_at", [(MAX_DEPTH, None), (MAX_DEPTH + 1, MAX_DEPTH + 1), (200, MAX_DEPTH + 1)])
async def test_nesting_past_the_limit_is_refused_at_the_first_level_too_deep(
    sidecar: Running, depth: int, refused_at: int | None,
) -> None:
    chain: Any = 0
    for _ in range(depth - 2):  # /options/d/0/0...: the leaf is at ``depth`` levels
        chain = [chain]
    client = await connect(sidecar.url, auth())
    await client.welcome
    ack = await client.send("hook", hook(1, options={"d": chain}))
    if refused_at is None:
        assert ack["ok"] is True
    else:
        assert ack["error"]["code"] == "invalid_message"
        assert ack["error"]["path"] == "/options/d" + "/0" * (refused_at - 2)
    await client.close()


async def test_a_connection_past_its_rate_gets_rate_limited_and_its_seq_is_not_used_up(sidecar: Running) -> None:
    # a slow rate, so that the burst of 30 meets the limit however long a loaded machine takes
    # to answer it (a token comes back every 2 s; at 20 a second, a 0.3 s stall let more in)
    await reconfigure(sidecar, rate=0.5, burst=10)
    client = await connect(sidecar.url, auth())
    await client.welcome
    acks = await asyncio.gather(*(client.send("hook", hook(1)) for _ in range(30)))
    limited = [a for a in acks if not a["ok"]]
    assert len(limited) >= 15 and all(a["error"]["code"] == "rate_limited" and a["seq"] == 1 for a in limited)
    assert "0.5 messages per second" in limited[0]["error"]["message"]
    await asyncio.sleep(2.1)  # at least one token back: the bucket refills at the rate
    ack = await client.send("hook", hook(2))
    assert ack["ok"] is True and "duplicate" not in ack  # seq 2 follows: limited messages used no seq
    await client.close()


async def test_the_default_rate_limit_is_far_above_a_table_and_the_benchmark(sidecar: Running) -> None:
    """A table sends a few messages a second; the benchmark and a reconnect resend send
    hundreds at once. With the defaults none of a 1,000-message burst is rate limited."""
    config = Config()
    assert config.rate >= 2000 and config.burst >= 4000
    ref = build("world-pace", "foundry-core", 12, fights=17, rounds=5)
    link = await open_link(sidecar.url, auth_for(ref.world, ref.ruleset))
    try:
        await link.welcome
        futures = [await link.emit(e, d) for e, d in ref.messages[:1000]]
        acks = await asyncio.wait_for(asyncio.gather(*futures), 60)
    finally:
        await link.close()
    assert len(acks) == 1000 and acks == ref.acks[: len(acks)]


async def test_wrong_tokens_slow_down_guesses_but_never_lock_out_the_right_token(sidecar: Running) -> None:
    """Issue 15, item 5: 5 wrong tokens from 127.0.0.1 used to refuse the GM's right token for
    30 s. Now the attempts wait their turn (one per spacing) and the right one gets in."""
    await reconfigure(sidecar, auth_failures=3, throttle_seconds=30.0, throttle_spacing=0.2)
    for _ in range(3):
        assert (await refused(sidecar.url, auth(token="guessing-wrong")))["code"] == "auth_failed"
    client = await connect(sidecar.url, auth())  # the right token, at once after the guesses
    assert (await client.welcome)["last_seq"] == 0
    await client.close()
    loop = asyncio.get_running_loop()
    began = loop.time()
    guesses = await asyncio.gather(*(refused(sidecar.url, auth(token=f"guess-{i}")) for i in range(5)))
    assert [g["code"] for g in guesses] == ["auth_failed"] * 5
    assert loop.time() - began >= 4 * 0.2  # checked one at a time, one per 0.2 s
    client = await connect(sidecar.url, auth())
    await client.welcome
    await client.close()


async def test_wrong_tokens_for_a_world_slow_down_guesses_for_it_from_every_address(sidecar: Running) -> None:
    """Rotating source addresses (127.x.y.z gave 731 guesses/s) gains nothing: the throttle
    counts per token as well. Sidecar.check_auth is called with the addresses an attacker
    would rotate through; the right token, sent among the guesses, is admitted."""
    await reconfigure(sidecar, auth_failures=3, throttle_seconds=30.0, throttle_spacing=0.1,
                      world_tokens={"worldTarget": "the-right-one"})
    assert sidecar.runner is not None
    server = sidecar.runner.app[SIDECAR_KEY]

    async def attempt(remote: str, token: str, world: str = "worldTarget") -> str:
        try:
            await server.check_auth(remote, auth(world=world, token=token))
        except ConnectRefused as refused_:
            return refused_.code
        return "admitted"

    for i in range(3):  # three addresses, one wrong guess each
        assert await attempt(f"10.1.0.{i}", "wrong") == "auth_failed"
    loop = asyncio.get_running_loop()
    began = loop.time()
    results = await asyncio.gather(*(attempt(f"10.2.{i}.1", f"guess-{i}") for i in range(10)),
                                   attempt("10.3.0.1", "the-right-one"))
    took = loop.time() - began
    assert results == ["auth_failed"] * 10 + ["admitted"]
    assert took >= 10 * 0.1, took  # 11 checks, one per 0.1 s: at most 10 guesses a second
    assert await attempt("10.4.0.1", TOKEN, world="worldElse") == "admitted"  # other tokens are not slowed


def test_the_throttle_gives_each_attempt_on_a_hot_key_its_own_turn() -> None:
    now = [100.0]
    throttle = Throttle(failures=2, window=30.0, spacing=0.5, clock=lambda: now[0])
    assert throttle.turn(["a"]) == 0.0
    throttle.failed_attempt(["a", "t"])
    assert throttle.turn(["a"]) == 0.0  # one failure: not yet
    throttle.failed_attempt(["b", "t"])
    assert throttle.turn(["c", "x"]) == 0.0  # neither key is hot
    assert [throttle.turn(["c", "t"]) for _ in range(4)] == [0.0, 0.5, 1.0, 1.5]  # "t" is hot
    now[0] += 31.0  # the window passed
    assert throttle.turn(["c", "t"]) == 0.0
