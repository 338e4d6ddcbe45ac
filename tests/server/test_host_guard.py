"""DNS rebinding: a page whose own name resolves to 127.0.0.1 reaches the sidecar with a
loopback peer and a matching Origin; only the Host header gives it away."""

from __future__ import annotations

import aiohttp
import pytest

from adapter.server.origins import loopback_name
from tests.support.sidecar import Running

FOREIGN = "rebound.example:8765"


@pytest.mark.parametrize("host", ["127.0.0.1:8765", "127.0.0.1", "localhost:8765", "LOCALHOST", "[::1]:8765",
                                  "::1", "127.3.2.1:9"])
def test_loopback_host_names_are_recognised(host: str) -> None:
    assert loopback_name(host)


@pytest.mark.parametrize("host", [FOREIGN, "evil.example", "10.0.0.5:8765", "[2001:db8::1]:8765",
                                  "localhost.evil.example", "127.0.0.1.evil.example", ""])
def test_other_host_names_are_not(host: str) -> None:
    assert not loopback_name(host)


@pytest.mark.parametrize("path", ["/metrics", "/healthz", "/"])
async def test_a_page_asked_for_by_a_foreign_host_name_is_refused(sidecar: Running, path: str) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.get(sidecar.url + path, headers={"Host": FOREIGN}) as foreign:
            assert foreign.status == 403
            assert "metric" not in (await foreign.text()).lower()
        async with http.get(sidecar.url + path) as own:  # Host: 127.0.0.1:<port>
            assert own.status in (200, 401)  # the status page asks for a login


async def test_a_login_posted_under_a_foreign_host_name_is_refused(sidecar: Running) -> None:
    origin = f"http://{FOREIGN}"
    async with aiohttp.ClientSession() as http:
        async with http.post(sidecar.url + "/login", data={"token": "guess"},
                             headers={"Host": FOREIGN, "Origin": origin}, allow_redirects=False) as posted:
            assert posted.status == 403


async def test_the_module_manifest_answers_any_host_name(sidecar: Running) -> None:
    """Foundry's server fetches the manifest by whatever name it knows the sidecar."""
    async with aiohttp.ClientSession() as http:
        async with http.get(sidecar.url + "/module/module.json", headers={"Host": FOREIGN}) as manifest:
            assert manifest.status == 200
            assert (await manifest.json())["manifest"].startswith(f"http://{FOREIGN}/")
