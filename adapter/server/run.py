"""Running the app: bind (loopback by default), say where, stop cleanly on a signal."""

from __future__ import annotations

import asyncio
import logging
import signal
from typing import TextIO

from aiohttp import web

from ..config import REMOTE_DANGER, Config, is_loopback
from . import SIDECAR_KEY, create_app
from .pacing import Quiet, quiet_loop_errors

log = logging.getLogger("initiative_sidecar.server")


class CannotListen(Exception):
    """The address or port cannot be bound (in use, or not an address of this machine)."""


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
    log.info("database %s; CORS origins: %s", config.db, ", ".join(config.origins))
    port = runner.addresses[0][1] if runner.addresses else config.port  # --port 0: the one the system gave
    stdout.write(f"initiative-sidecar listening on http://{config.host}:{port}\n")
    stdout.flush()
    try:
        await stop.wait()
        began = loop.time()
        log.info("stopping: no new connections; finishing the messages in hand")
        await site.stop()
        await app[SIDECAR_KEY].close()
        log.info("sockets closed after %.2f s; snapshots next", loop.time() - began)
    finally:
        await runner.cleanup()  # the lifespan's end: a snapshot of every world, the store closed
    log.info("stopped in %.2f s", loop.time() - began)


def serve_forever(config: Config, stdout: TextIO) -> None:
    asyncio.run(_serve(config, stdout))
