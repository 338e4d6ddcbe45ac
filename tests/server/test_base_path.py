"""Issue 26, item 1: ``serve --base-path PATH`` serves every route under PATH (socket.io,
/module/, the status page, /healthz, /metrics), for a proxy that puts the sidecar under the
host already serving Foundry; ``--public-origin`` names that host, and the DNS-rebinding
guard answers it and still refuses any other name."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from adapter.cli import parser
from adapter.config import Config, ConfigError, from_args
from tests.server.test_origins import attempt
from tests.support.sidecar import TOKEN, Running, auth, free_port

BASE = "/initiative-sidecar"
PUBLIC = "https://foundry.example.org"


@pytest.fixture
async def mounted(tmp_path: Path) -> AsyncIterator[Running]:
    config = Config(host="127.0.0.1", port=free_port(), db=tmp_path / "s.db", token=TOKEN,
                    base_path=BASE, public_origins=(PUBLIC,))
    running = Running(config)
    await running.start()
    yield running
    await running.stop()


async def test_the_socket_is_served_under_the_base_path_only(mounted: Running) -> None:
    welcomed = await attempt(mounted.url, auth(), PUBLIC, path=f"{BASE}/socket.io")
    assert welcomed["welcome"]["world"] == "world0000000001"
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{mounted.url}/socket.io/?EIO=4&transport=websocket") as root:
            assert root.status == 404


@pytest.mark.parametrize("path", ["/", "/healthz", "/metrics", "/module/module.json", "/status/status.js"])
async def test_every_route_moves_under_the_base_path(mounted: Running, path: str) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.get(mounted.url + BASE + path) as under:
            assert under.status in (200, 401), path  # the status page asks for a login
        async with http.get(mounted.url + path) as root:
            assert root.status == 404, path


async def test_the_base_path_alone_leads_to_the_status_page(mounted: Running) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.get(mounted.url + BASE, allow_redirects=False) as bare:
            assert bare.status == 308 and bare.headers["Location"] == BASE + "/"


async def test_the_status_page_links_logs_in_and_sets_its_cookie_under_the_base_path(mounted: Running) -> None:
    public = {"Host": "foundry.example.org", "Origin": PUBLIC}  # as the proxy passes them
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{mounted.url}{BASE}/", headers={"Host": "foundry.example.org"}) as page:
            assert page.status == 401
            html = await page.text()
        assert f'action="{BASE}/login"' in html and f'href="{BASE}/status/status.css"' in html
        async with http.post(f"{mounted.url}{BASE}/login", data={"token": TOKEN, "lang": "en"},
                             headers=public, allow_redirects=False) as login:
            assert login.status == 303
            assert login.headers["Location"] == f"{BASE}/?lang=en"
            cookie = login.cookies["isc_status"]
            assert cookie["path"] == f"{BASE}/" and cookie["secure"]  # the browser's page is https
        async with http.get(f"{mounted.url}{BASE}/?lang=en", headers={"Host": "foundry.example.org"},
                            cookies={"isc_status": cookie.value}) as seen:
            assert seen.status == 200
            assert f'data-events="{BASE}/status/events?lang=en"' in await seen.text()


async def test_the_manifest_points_at_the_public_https_address_under_the_base_path(mounted: Running) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{mounted.url}{BASE}/module/module.json", headers={"Host": "foundry.example.org"}) as r:
            manifest = await r.json()
    assert manifest["manifest"] == f"{PUBLIC}{BASE}/module/module.json"
    assert manifest["download"] == f"{PUBLIC}{BASE}/module/initiative-sidecar.zip"


@pytest.mark.parametrize("path", ["/healthz", "/metrics"])
async def test_health_and_metrics_are_not_read_through_the_public_proxy(mounted: Running, path: str) -> None:
    """The proxy's peer address is loopback: the public name is what says it came through it."""
    async with aiohttp.ClientSession() as http:
        async with http.get(mounted.url + BASE + path, headers={"Host": "foundry.example.org"}) as proxied:
            assert proxied.status == 403
        async with http.get(mounted.url + BASE + path) as direct:
            assert direct.status == 200


@pytest.mark.parametrize("host", ["rebound.example", "foundry.example.org.evil.example", "evil.example:443"])
async def test_a_rebinding_name_is_still_refused_behind_the_proxy(mounted: Running, host: str) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{mounted.url}{BASE}/", headers={"Host": host}) as foreign:
            assert foreign.status == 403


def test_base_path_and_public_origin_are_read_from_flags_and_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    base = ["serve", "--db", str(tmp_path / "x.db"), "--token", "t"]
    config = from_args(parser().parse_args([*base, "--base-path", "/initiative-sidecar/",
                                            "--public-origin", "https://a.example, http://b.example:8080"]))
    assert config.base_path == BASE
    assert config.public_origins == ("https://a.example", "http://b.example:8080")
    monkeypatch.setenv("INITIATIVE_SIDECAR_BASE_PATH", "/vtt/sidecar")
    assert from_args(parser().parse_args(base)).base_path == "/vtt/sidecar"
    monkeypatch.setenv("INITIATIVE_SIDECAR_BASE_PATH", "/")
    assert from_args(parser().parse_args(base)).base_path == ""


@pytest.mark.parametrize(("flag", "value"), [
    ("--base-path", "initiative-sidecar"), ("--base-path", "/a/../b"), ("--base-path", "/a b"),
    ("--base-path", "/a?x=1"), ("--public-origin", "https://foundry.example.org/path"),
    ("--public-origin", "foundry.example.org"), ("--origins", "*"),
])
def test_a_bad_base_path_or_origin_fails_at_start(tmp_path: Path, flag: str, value: str) -> None:
    with pytest.raises(ConfigError, match=flag):
        from_args(parser().parse_args(["serve", "--db", str(tmp_path / "x.db"), "--token", "t", flag, value]))
