"""Issue 26, item 5: the module's own connection code (vtt_module/scripts/sidecar-client.js) in
a real Chromium, on a page standing in for Foundry that Chromium treats as public
(``--ip-address-space-overrides``), so Local Network Access applies as it does to a Foundry
on the internet. Only loopback addresses are used: the page's name ``foundry.test`` is mapped
to 127.0.0.1 (``--host-resolver-rules``), which also makes an http:// page a non-secure one.

(a) an https page, sidecar on 127.0.0.1: permission granted, connects; denied, the module's
    local-network text; (b) an http page: the insecure-page text; (c) the same origin under
    nginx with TLS and ``--base-path``: connects, no permission asked, and the status page
    works through it; (d) a loopback page: connects as before.
"""

from __future__ import annotations

import json
import re
import shutil
import ssl
import subprocess
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from playwright.async_api import Browser, Page, async_playwright

from adapter.benchkit.services import nginx_site
from adapter.config import Config
from tests.browser import ARGS, ROOT
from tests.support.sidecar import TOKEN, Running, auth, free_port

pytestmark = pytest.mark.browser
MODULE = ROOT / "vtt_module"
IO_JS = MODULE / "node_modules/socket.io-client/dist/socket.io.min.js"
NAME = "foundry.test"
BASE = "/initiative-sidecar"
#: Chrome 142's permission, and the two it was later split into (loopback, local network)
LNA_NAMES = ("local-network-access", "loopback-network", "local-network")
EN = json.loads((MODULE / "lang/en.json").read_text(encoding="utf-8"))["INITIATIVE_SIDECAR"]

if missing := [b for b in ("chromium", "nginx", "openssl") if shutil.which(b) is None]:
    pytest.skip(f"needs {', '.join(missing)} (Debian: apt-get install chromium nginx openssl; .ci/run does)",
                allow_module_level=True)

# The page standing in for Foundry: socket.io's client as Foundry serves it (the global `io`),
# then the module's SidecarClient. Each status is kept and shown with the module's own text.
PAGE = """<!doctype html><meta charset="utf-8"><title>Foundry stand-in</title>
<script src="/io.js"></script>
<p id="status">starting</p>
<script type="module">
import { SidecarClient } from "/scripts/sidecar-client.js";
const en = await (await fetch("/lang/en.json")).json();
const text = (key, data) => key.split(".").slice(1).reduce((o, k) => o?.[k], en.INITIATIVE_SIDECAR)
  .replace(/\\{(\\w+)\\}/g, (_, name) => data[name] ?? "");
const url = new URLSearchParams(location.search).get("sidecar");
window.statuses = [];
const outbox = { peek: () => null, settle: () => "done", welcome: () => ({}) };
new SidecarClient({ io: window.io, url, auth: window.__auth, outbox, events: {
  onWelcome() {}, onAck() {}, onPlan() {}, onPrompt() {},
  onStatus(state, detail) {
    window.statuses.push({ state, reason: detail?.reason, code: detail?.code });
    document.getElementById("status").textContent =
      detail?.key ? text(detail.key, { url, origin: location.origin }) : state;
  }
} }).connect();
</script>"""


def module_ready() -> None:
    """socket.io's browser client comes from the module's npm packages (``make test-node``'s
    stamp): installed here if this run has not installed them yet."""
    if not IO_JS.exists():
        subprocess.run(["make", "-s", "vtt_module/node_modules/.installed"], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)


@dataclass
class Tls:
    cert: Path
    key: Path

    def context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.cert, self.key)
        return context


@pytest.fixture(scope="module")
def tls() -> Iterator[Tls]:
    """A self-signed certificate for foundry.test, made for this run."""
    folder = Path(tempfile.mkdtemp(prefix="sidecar-tls-"))
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-keyout", str(key),
                    "-out", str(cert), "-subj", f"/CN={NAME}", "-addext", f"subjectAltName=DNS:{NAME}"],
                   check=True, capture_output=True)
    yield Tls(cert, key)
    shutil.rmtree(folder, ignore_errors=True)


@asynccontextmanager
async def foundry_page(port: int, tls: Tls | None = None) -> AsyncIterator[int]:
    """The stand-in Foundry: the page, socket.io's client, the module's scripts and texts."""
    module_ready()

    async def page(_: web.Request) -> web.Response:
        return web.Response(text=PAGE, content_type="text/html")

    async def io_js(_: web.Request) -> web.FileResponse:
        return web.FileResponse(IO_JS)

    app = web.Application()
    app.router.add_get("/", page)
    app.router.add_get("/io.js", io_js)
    app.router.add_static("/scripts", MODULE / "scripts")
    app.router.add_static("/lang", MODULE / "lang")
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port, ssl_context=tls.context() if tls else None).start()
    try:
        yield port
    finally:
        await runner.cleanup()


@asynccontextmanager
async def sidecar_running(tmp_path: Path, **config: Any) -> AsyncIterator[Running]:
    running = Running(Config(host="127.0.0.1", port=free_port(), db=tmp_path / "s.db", token=TOKEN, **config))
    await running.start()
    try:
        yield running
    finally:
        await running.stop()


@contextmanager
def nginx_same_origin(tls: Tls, page_port: int, sidecar_port: int) -> Iterator[int]:
    """nginx with TLS in front of the page (as in front of Foundry) and, under /initiative-sidecar/,
    of the sidecar: deploy/same-origin/nginx.conf's own locations."""
    port = free_port()
    sample = (ROOT / "deploy/same-origin/nginx.conf").read_text(encoding="utf-8")
    locations = sample.split("# -- locations {\n", 1)[1].rsplit("# -- }", 1)[0]
    locations = locations.replace("127.0.0.1:8765", f"127.0.0.1:{sidecar_port}")
    body = f"""    map $http_upgrade $connection_upgrade {{ default upgrade; '' close; }}
    server {{
        listen 127.0.0.1:{port} ssl;
        ssl_certificate {tls.cert};
        ssl_certificate_key {tls.key};
{locations}
        location / {{ proxy_pass http://127.0.0.1:{page_port}; proxy_set_header Host $http_host; }}
    }}"""
    with nginx_site(body, port):
        yield port


@asynccontextmanager
async def chromium(public_ports: list[int]) -> AsyncIterator[Browser]:
    overrides = ",".join(f"127.0.0.1:{p}=public" for p in public_ports)
    args = [*ARGS, f"--host-resolver-rules=MAP {NAME} 127.0.0.1"]
    if overrides:
        args.append(f"--ip-address-space-overrides={overrides}")
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=shutil.which("chromium"), args=args, headless=True)
        try:
            yield browser
        finally:
            await browser.close()


async def open_page(browser: Browser, origin: str, sidecar_url: str, permission: str | None = None) -> Page:
    context = await browser.new_context(ignore_https_errors=True)
    page = await context.new_page()
    if permission == "granted":
        await context.grant_permissions(["local-network-access"], origin=origin)  # and its split names
    elif permission == "denied":  # what a GM's "Block" leaves; playwright can only grant
        cdp = await context.new_cdp_session(page)
        target = (await cdp.send("Target.getTargetInfo"))["targetInfo"]
        for name in LNA_NAMES:
            await cdp.send("Browser.setPermission", {"permission": {"name": name}, "setting": "denied", "origin": origin,
                                                     "browserContextId": target["browserContextId"]})
    await page.add_init_script(f"window.__auth = {json.dumps(auth())};")
    await page.goto(f"{origin}/?sidecar={sidecar_url}")
    return page


async def settled(page: Page) -> dict[str, Any]:
    """The first status the module reported, and the text it shows."""
    await page.wait_for_function("() => window.statuses && window.statuses.length > 0", timeout=20_000)
    first: dict[str, Any] = (await page.evaluate("() => window.statuses"))[0]
    first["shown"] = await page.locator("#status").inner_text()
    return first


def lna_text(key: str, url: str, origin: str) -> str:
    return str(EN["reach"][key]).replace("{url}", url).replace("{origin}", origin)


async def permission_state(page: Page) -> str:
    state: str = await page.evaluate(
        "async () => (await navigator.permissions.query({name: 'loopback-network'})).state")
    return state


async def test_a_public_https_page_connects_to_a_loopback_sidecar_once_local_network_access_is_granted(
    tmp_path: Path, tls: Tls,
) -> None:
    async with sidecar_running(tmp_path) as sidecar, foundry_page(free_port(), tls) as port:
        origin = f"https://{NAME}:{port}"
        async with chromium([port]) as browser:
            page = await open_page(browser, origin, sidecar.url, permission="granted")
            assert (await settled(page))["state"] == "connected"


async def test_a_public_https_page_denied_local_network_access_says_so_not_unreachable(
    tmp_path: Path, tls: Tls,
) -> None:
    async with sidecar_running(tmp_path) as sidecar, foundry_page(free_port(), tls) as port:
        origin = f"https://{NAME}:{port}"
        async with chromium([port]) as browser:
            page = await open_page(browser, origin, sidecar.url, permission="denied")
            status = await settled(page)
    assert status["state"] == "unreachable" and status["reason"] == "local_network_denied"
    assert status["shown"] == lna_text("local_network_denied", sidecar.url, origin)
    assert "Local network access" in status["shown"] and "nothing answers" not in status["shown"]


async def test_an_http_page_on_a_public_address_is_told_chromium_blocks_it(tmp_path: Path) -> None:
    async with sidecar_running(tmp_path) as sidecar, foundry_page(free_port()) as port:
        origin = f"http://{NAME}:{port}"
        async with chromium([port]) as browser:
            page = await open_page(browser, origin, sidecar.url)
            status = await settled(page)
    assert status["reason"] == "insecure_page"
    assert status["shown"] == lna_text("insecure_page", sidecar.url, origin)


async def test_the_same_origin_under_nginx_with_tls_and_a_base_path_connects_with_no_permission_asked(
    tmp_path: Path, tls: Tls,
) -> None:
    page_port = free_port()
    async with foundry_page(page_port):
        # the proxy's public origin is known once nginx has its port: the sidecar starts after it
        sidecar_port = free_port()
        with nginx_same_origin(tls, page_port, sidecar_port) as nginx_port:
            origin = f"https://{NAME}:{nginx_port}"
            running = Running(Config(host="127.0.0.1", port=sidecar_port, db=tmp_path / "s.db", token=TOKEN,
                                     base_path=BASE, public_origins=(origin,)))
            await running.start()
            try:
                async with chromium([nginx_port]) as browser:
                    page = await open_page(browser, origin, f"{origin}{BASE}")
                    assert (await settled(page))["state"] == "connected"
                    assert await permission_state(page) == "prompt"  # never asked, never refused
                    status = await page.context.new_page()  # the status page, through the same proxy
                    await status.goto(f"{origin}{BASE}/?lang=en")
                    await status.fill("input[name=token]", TOKEN)
                    await status.click("button[type=submit]")
                    await status.wait_for_selector("#live.on", timeout=20_000)
                    assert status.url == f"{origin}{BASE}/?lang=en"
                    assert await status.locator("section.world").count() == 1
                    health = await status.goto(f"{origin}{BASE}/healthz")
                    assert health is not None and health.status == 404  # not read from outside
            finally:
                await running.stop()


async def test_a_loopback_page_connects_as_before(tmp_path: Path) -> None:
    async with sidecar_running(tmp_path) as sidecar, foundry_page(free_port()) as port:
        async with chromium([]) as browser:
            page = await open_page(browser, f"http://127.0.0.1:{port}", sidecar.url)
            assert (await settled(page))["state"] == "connected"


def test_the_nginx_snippet_keeps_the_browser_s_host() -> None:
    """The DNS-rebinding guard reads Host: a snippet that set a fixed one would disarm it."""
    sample = (ROOT / "deploy/same-origin/nginx.conf").read_text(encoding="utf-8")
    assert re.search(r"proxy_set_header Host \$http_host;", sample)
    assert "proxy_set_header Host 127" not in sample
