"""Behind the same-origin proxy (``--base-path`` with ``--public-origin``, docs/setups.md) every
browser reaches the sidecar from the proxy's loopback address. The per-address limits (the
token throttle, ``pending_per_address``, the status login's throttle) count the client the
proxy names in the rightmost ``X-Forwarded-For`` entry, so one attacker on the internet
neither slows nor locks out the GM; the header is the client's own word, and ignored, from
any other peer or without ``--public-origin``."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from adapter.config import Config
from adapter.server import sidecar_of
from adapter.server.pacing import client_address
from tests.server.rawclient import RawClient
from tests.server.test_origins import EVIL, app_of, attempt, recording
from tests.support.sidecar import TOKEN, Running, auth, free_port, until

ROOT = Path(__file__).resolve().parents[2]
BASE = "/initiative-sidecar"
PUBLIC = "https://foundry.example.org"
WORLD_A, WORLD_B = "worldAAAAAAAAAAA", "worldBBBBBBBBBBB"
TOKENS = {WORLD_A: "token-of-world-a-0123456789", WORLD_B: "token-of-world-b-0123456789"}
ATTACKER, GM = "203.0.113.1", "198.51.100.2"


def test_the_nginx_snippet_names_the_client_in_the_rightmost_entry() -> None:
    """What the sidecar counts by: nginx appends its peer's address to the client's header."""
    sample = (ROOT / "deploy/same-origin/nginx.conf").read_text(encoding="utf-8")
    assert re.search(r"^\s*proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;", sample, re.M)


def proxied(client: str) -> dict[str, str]:
    """The headers nginx's snippet sends for ``client`` (deploy/same-origin/nginx.conf)."""
    return {"Host": "foundry.example.org", "X-Forwarded-For": client, "X-Forwarded-Proto": "https"}


@pytest.fixture
async def mounted(tmp_path: Path) -> AsyncIterator[Running]:
    config = Config(host="127.0.0.1", port=free_port(), db=tmp_path / "s.db", token=TOKEN, world_tokens=TOKENS,
                    base_path=BASE, public_origins=(PUBLIC,), auth_failures=3, throttle_spacing=5.0)
    running = Running(config)
    await running.start()
    yield running
    await running.stop()


async def test_wrong_tokens_from_one_client_behind_the_proxy_share_no_throttle_key_with_another(
    mounted: Running,
) -> None:
    """World A's attacker puts nothing in the way of world B's GM: the keys B's connect is
    checked against are none of those A's guesses counted against, and none is hot."""
    throttle = recording(mounted)
    url, path = mounted.url, f"{BASE}/socket.io"
    for n in range(3):
        guess = await attempt(url, auth(world=WORLD_A, token=f"guess-{n}"), PUBLIC, path, proxied(ATTACKER))
        assert guess["refused"]["code"] == "auth_failed"
    guessed = set(throttle.failed)
    assert guessed == {f"address {ATTACKER}", f"token {WORLD_A}"}
    welcomed = await attempt(url, auth(world=WORLD_B, token=TOKENS[WORLD_B]), PUBLIC, path, proxied(GM))
    assert welcomed["welcome"]["world"] == WORLD_B
    gm_keys = set(throttle.asked[-1])
    assert gm_keys == {f"address {GM}", f"token {WORLD_B}"}
    assert not gm_keys & guessed
    assert throttle.hot(gm_keys) == [] and throttle.turns[-1] == 0.0


async def test_the_proxy_s_own_entry_counts_not_what_the_client_wrote_before_it(mounted: Running) -> None:
    """nginx appends the client's address to whatever X-Forwarded-For the client sent: only the
    rightmost entry is the proxy's word, so forging entries to its left rotates nothing."""
    throttle = recording(mounted)
    for n in range(3):
        forged = {**proxied(ATTACKER), "X-Forwarded-For": f"10.0.0.{n}, {GM}, {ATTACKER}"}
        await attempt(mounted.url, auth(world=WORLD_A, token=f"guess-{n}"), PUBLIC, f"{BASE}/socket.io", forged)
    assert len(throttle.failed[f"address {ATTACKER}"]) == 3
    assert f"address {GM}" not in throttle.failed


async def test_a_status_login_behind_the_proxy_counts_against_the_client_it_names(mounted: Running) -> None:
    throttle = recording(mounted)
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{mounted.url}{BASE}/login", data={"token": "guess"},
                             headers={**proxied(ATTACKER), "Origin": PUBLIC}) as login:
            assert login.status == 401
    assert f"address {ATTACKER}" in throttle.failed
    assert "address loopback" not in throttle.failed


async def test_sockets_waiting_to_authenticate_are_counted_per_client_behind_the_proxy(mounted: Running) -> None:
    """``pending_per_address`` is per client: an attacker's idle sockets are its own, and the
    GM's socket is neither refused nor counted with them."""
    sio = sidecar_of(app_of(mounted)).sio
    url = mounted.url + BASE
    clients = [await RawClient.open(url, headers=proxied(ATTACKER)) for _ in range(2)]
    clients.append(await RawClient.open(url, headers=proxied(GM)))
    try:
        assert await until(lambda: len(sio.peers) == 3)
        assert sorted(p.address for p in sio.peers.values()) == [GM, ATTACKER, ATTACKER]
    finally:
        for client in clients:
            await client.close()


async def test_without_public_origin_the_header_is_ignored(sidecar: Running) -> None:
    """A sidecar no proxy stands before: X-Forwarded-For is whatever the client wrote."""
    throttle = recording(sidecar)
    refused = await attempt(sidecar.url, auth(token="guess"), EVIL, headers={"X-Forwarded-For": ATTACKER})
    assert refused["refused"]["code"] == "auth_failed"
    assert set(throttle.failed) == {"address loopback", "token (shared)"}


@pytest.mark.parametrize(("peer", "header", "behind_proxy", "client"), [
    ("127.0.0.1", [ATTACKER], True, ATTACKER),
    ("::1", [f"6.6.6.6, {ATTACKER}"], True, ATTACKER),  # the rightmost entry is the proxy's
    ("127.0.0.1", ["6.6.6.6", ATTACKER], True, ATTACKER),  # two headers: the last one's
    ("127.0.0.1", ["2001:db8::7"], True, "2001:db8::7"),
    ("127.0.0.1", [f"{ATTACKER}:4711"], True, ATTACKER),
    ("127.0.0.1", [], True, "127.0.0.1"),  # no header: the proxy itself, or a local client
    ("127.0.0.1", ["unknown"], True, "127.0.0.1"),  # not an address: the peer counts
    ("127.0.0.1", [ATTACKER], False, "127.0.0.1"),  # no --public-origin: no proxy to trust
    ("192.0.2.7", [ATTACKER], True, "192.0.2.7"),  # not loopback: not the proxy
    ("::ffff:192.0.2.7", [ATTACKER], True, "::ffff:192.0.2.7"),
])
def test_the_client_is_the_proxy_s_entry_only_from_a_loopback_peer_with_public_origin(
    peer: str, header: list[str], behind_proxy: bool, client: str,
) -> None:
    assert client_address(peer, header, behind_proxy) == client


@pytest.mark.parametrize("path", ["/healthz", "/metrics"])
@pytest.mark.parametrize("header", [{"X-Forwarded-For": "1.2.3.4"}, {"Forwarded": "for=1.2.3.4"},
                                    {"X-Real-IP": "1.2.3.4"}])
async def test_health_and_metrics_refuse_a_forged_loopback_host_that_came_through_a_proxy(
    mounted: Running, path: str, header: dict[str, str],
) -> None:
    """The proxy passes Host as the client wrote it: ``Host: 127.0.0.1:8765`` through Foundry's
    server block looks like loopback, but the proxy's own header says where it came from."""
    forged = {"Host": f"127.0.0.1:{mounted.config.port}", **header}
    async with aiohttp.ClientSession() as http:
        async with http.get(mounted.url + BASE + path, headers=forged) as through:
            assert through.status == 403
        async with http.get(mounted.url + BASE + path) as direct:
            assert direct.status == 200


def directives(policy: str) -> dict[str, list[str]]:
    return {d.split()[0]: d.split()[1:] for d in (p.strip() for p in policy.split(";")) if d}


@pytest.mark.parametrize("path", ["/", "/status/status.js", "/status/status.css"])
async def test_the_status_page_runs_only_its_own_files_not_all_of_foundry_s_origin(mounted: Running,
                                                                                 path: str) -> None:
    """Behind the proxy the page's origin is Foundry's: ``'self'`` would let it run a script a
    player uploaded to Foundry's Data folder, so each source is named by its path."""
    here = f"{PUBLIC}{BASE}"
    async with aiohttp.ClientSession() as http:
        async with http.get(mounted.url + BASE + path, headers=proxied(GM)) as page:
            policy = directives(page.headers["Content-Security-Policy"])
    assert policy["script-src"] == [f"{here}/status/status.js"]
    assert policy["style-src"] == [f"{here}/status/status.css"]
    assert policy["connect-src"] == [f"{here}/status/events"]
    assert policy["form-action"] == [f"{here}/"]
    assert policy["default-src"] == ["'none'"]
    assert "'self'" not in repr(policy)


async def test_a_host_no_browser_sends_does_not_write_into_the_policy(tmp_path: Path) -> None:
    """A sidecar listening beyond loopback checks no Host: a weird one gets ``'self'``."""
    running = Running(Config(host="0.0.0.0", allow_remote=True, port=free_port(), db=tmp_path / "s.db", token=TOKEN))
    await running.start()
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(running.url + "/", headers={"Host": "a.example; script-src *"}) as page:
                assert page.status == 401
                policy = directives(page.headers["Content-Security-Policy"])
    finally:
        await running.stop()
    assert policy["script-src"] == ["'self'"] and "*" not in repr(policy)
