"""Running the app: bind (loopback by default), say where, stop cleanly on a signal."""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
from typing import TextIO

from aiohttp import web

from ..config import REMOTE_DANGER, Config, is_loopback
from ..errors import CannotListen as CannotListen  # the start-up errors: adapter/errors.py
from . import create_app, sidecar_of
from .pacing import Quiet, quiet_loop_errors

log = logging.getLogger("initiative_sidecar.server")
#: allocations between two collections of the youngest generation (Python's default: 700).
#: Each message's objects live until its commit; with the default they were collected and
#: promoted many times a message, and full collections came often (docs/performance.md,
#: "Hosted capacity", step 5)
GC_YOUNG = 20_000


async def _serve(config: Config, stdout: TextIO) -> None:
    if not is_loopback(config.host):
        log.warning(
            "bound to %s, which is not loopback, without TLS (--allow-remote): %s. Prefer "
            "127.0.0.1, or put a TLS proxy in front.", config.host, REMOTE_DANGER
        )
    quiet_loop_errors(asyncio.get_running_loop(), Quiet(logging.getLogger("asyncio")))
    app = create_app(config)
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.5)
    await runner.setup()
    site = web.TCPSite(runner, config.host, config.port)
    try:
        await site.start()
    except OSError as error:
        await runner.cleanup()
        raise CannotListen(f"cannot listen on {config.host}:{config.port}: {error.strerror or error}") from error
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):  # before "listening": a signal right after it stops cleanly
        loop.add_signal_handler(sig, stop.set)
    log.info("%s; Foundry origins: %s", store_in_use(config), ", ".join(config.origins) or "any, with the token")
    port = runner.addresses[0][1] if runner.addresses else config.port  # --port 0: the one the system gave
    stdout.write(f"initiative-sidecar listening on http://{config.host}:{port}{config.base_path}\n")
    stdout.flush()
    try:
        await stop.wait()
        began = loop.time()
        log.info("stopping: no new connections; finishing the messages in hand")
        await site.stop()
        await sidecar_of(app).close()
        log.info("sockets closed after %.2f s; snapshots next", loop.time() - began)
    finally:
        await runner.cleanup()  # the lifespan's end: a snapshot of every world, the store closed
    log.info("stopped in %.2f s", loop.time() - began)


def store_in_use(config: Config) -> str:
    """What the log says of the store: the PostgreSQL URL without its password (hosted
    mode), else the SQLite file."""
    if config.store:
        from ..store.postgres import redacted

        return f"store {redacted(config.store)} (PostgreSQL)"
    return f"database {config.db} (SQLite)"


def serve_forever(config: Config, stdout: TextIO) -> None:
    gc.set_threshold(GC_YOUNG, *gc.get_threshold()[1:])
    asyncio.run(_serve(config, stdout))
