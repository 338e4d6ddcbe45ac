"""/healthz and /metrics scraped from a running sidecar; the version warning at connect."""

from __future__ import annotations

import asyncio
from concurrent.futures import Future
from typing import Any
from unittest import mock

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request
from prometheus_client.parser import text_string_to_metric_families

from adapter import protocol
from adapter.config import Config
from adapter.server import sidecar_of
from adapter.server.metrics import Metrics, operator_only
from adapter.store import Store
from adapter.version import __version__
from tests.server.test_roundtrip import hook, roll
from tests.support.sidecar import Running, auth, connect, refused


async def get(url: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        return response.status, await response.text()


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


async def test_healthz_says_the_store_is_writable_and_how_many_worlds_are_loaded(sidecar: Running) -> None:
    client = await connect(sidecar.url, auth())
    await asyncio.wait_for(client.welcome, 5)
    status, body = await get(f"{sidecar.url}/healthz")
    assert status == 200
    assert '"store": "writable"' in body and '"worlds_loaded": 1' in body and '"worlds_connected": 1' in body
    await client.close()


async def test_healthz_is_503_when_the_store_cannot_be_written(sidecar: Running) -> None:
    assert sidecar.runner is not None
    store = sidecar_of(sidecar.runner.app).worlds.store
    assert isinstance(store, Store)
    store.db.close()
    status, body = await get(f"{sidecar.url}/healthz")
    assert status == 503 and "the store cannot be written" in body


async def test_healthz_is_503_once_the_sidecar_is_stopping(sidecar: Running) -> None:
    assert sidecar.runner is not None
    app = sidecar.runner.app
    health = next(r for r in app.router.routes() if r.resource is not None and r.resource.canonical == "/healthz")
    await sidecar.runner.cleanup()  # the store closes: a late probe must not open it again
    sidecar.runner = None
    loopback = mock.Mock()
    loopback.get_extra_info.side_effect = lambda key, default=None: ("127.0.0.1", 1234) if key == "peername" else default
    response = await health.handler(make_mocked_request("GET", "/healthz", app=app, transport=loopback))
    assert isinstance(response, web.Response)
    assert response.status == 503 and "the sidecar is stopping" in (response.text or "")


async def test_metrics_count_messages_refusals_latency_worlds_and_commits(sidecar: Running) -> None:
    client = await connect(sidecar.url, auth())
    await asyncio.wait_for(client.welcome, 5)
    assert (await client.send("hook", hook(1)))["ok"]
    assert (await client.send("hook", hook(1)))["duplicate"]
    bad = hook(2)
    bad["world_time"] = "noon"
    assert (await client.send("hook", bad))["error"]["code"] == "invalid_message"
    assert (await client.send("hook", roll(3, "bbbb000000000002", 15)))["ok"]
    assert (await client.send("explode", {"seq": 4}))["error"]["code"] == "invalid_message"
    status, text = await get(f"{sidecar.url}/metrics")
    assert status == 200
    got = samples(text)
    assert got[("initiative_sidecar_messages_total", (("event", "hook"), ("result", "ok")))] == 2
    assert got[("initiative_sidecar_messages_total", (("event", "hook"), ("result", "duplicate")))] == 1
    assert got[("initiative_sidecar_messages_total", (("event", "hook"), ("result", "refused")))] == 1
    assert got[("initiative_sidecar_messages_total", (("event", "other"), ("result", "refused")))] == 1
    assert got[("initiative_sidecar_refusals_total", (("code", "invalid_message"),))] == 2
    assert got[("initiative_sidecar_ack_seconds_count", (("event", "hook"),))] == 4
    assert got[("initiative_sidecar_connected_worlds", ())] == 1
    assert got[("initiative_sidecar_loaded_worlds", ())] == 1
    assert got[("initiative_sidecar_store_commit_seconds_count", ())] == 3  # two accepted, one refused
    await client.close()
    connected = None
    for _ in range(200):  # the server hears of the close a moment later: poll, up to 10 s
        connected = samples((await get(f"{sidecar.url}/metrics"))[1])[("initiative_sidecar_connected_worlds", ())]
        if connected == 0:
            break
        await asyncio.sleep(0.05)
    assert connected == 0


async def test_metrics_count_connections_accepted_and_refused_by_code(sidecar: Running) -> None:
    client = await connect(sidecar.url, auth())
    await asyncio.wait_for(client.welcome, 5)
    await client.close()
    assert (await refused(sidecar.url, auth(token="wrong-token")))["code"] == "auth_failed"
    assert (await refused(sidecar.url, auth(protocol=2)))["code"] == "protocol_mismatch"
    got = samples((await get(f"{sidecar.url}/metrics"))[1])
    assert got[("initiative_sidecar_connects_total", (("result", "accepted"),))] == 1
    assert got[("initiative_sidecar_connects_total", (("result", "auth_failed"),))] == 1
    assert got[("initiative_sidecar_connects_total", (("result", "protocol_mismatch"),))] == 1


def request_from(address: str) -> Any:
    transport = mock.Mock()
    transport.get_extra_info.side_effect = lambda key, default=None: (address, 1234) if key == "peername" else default
    return make_mocked_request("GET", "/metrics", transport=transport)


@pytest.mark.parametrize("address, networks, allowed", [
    ("127.0.0.1", (), True),
    ("::1", (), True),
    ("192.168.1.20", (), False),
    ("10.1.2.3", ("10.0.0.0/8",), True),
    ("192.168.1.20", ("10.0.0.0/8",), False),
])
def test_health_and_metrics_answer_to_loopback_unless_a_network_is_named(
    address: str, networks: tuple[str, ...], allowed: bool
) -> None:
    assert operator_only(Config(metrics_from=networks))(request_from(address)) is allowed


async def test_a_module_of_another_version_is_welcomed_with_a_warning(sidecar: Running) -> None:
    client = await connect(sidecar.url, auth(module_version="0.0.9"))
    welcome = await asyncio.wait_for(client.welcome, 5)
    protocol.check_outbound("welcome", welcome)
    [warning] = welcome["warnings"]
    assert warning["code"] == "version_mismatch"
    assert warning["data"] == {"module": "0.0.9", "sidecar": __version__}
    await client.close()


async def test_a_module_of_the_same_version_is_welcomed_without_warnings(sidecar: Running) -> None:
    client = await connect(sidecar.url, auth(module_version=__version__))
    assert "warnings" not in await asyncio.wait_for(client.welcome, 5)
    await client.close()


def test_a_commit_made_in_the_stores_thread_is_timed_once_it_is_done() -> None:
    """PostgreSQL's ``append_soon`` returns at once; its commit is timed when its future is done."""
    metrics = Metrics()
    pending: Future[None] = Future()
    timed = metrics.timed(lambda: pending)

    def count() -> float | None:
        return metrics.registry.get_sample_value("initiative_sidecar_store_commit_seconds_count")

    assert timed() is pending and count() == 0
    pending.set_result(None)
    assert count() == 1
