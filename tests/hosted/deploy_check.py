"""The end of the deploy test (run inside its network namespace, after deploy/README.md's own
commands): a world connects through nginx with the token of the environment file, its message
is acked, and the ack means a row in PostgreSQL. Prints one JSON line. Run:
``python -m tests.hosted.deploy_check ENV_FILE`` (only tests/hosted/test_deploy_readme.py does)."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import socketio

from tests.support.sidecar import GM, auth


def token(env_file: Path) -> str:
    for line in env_file.read_text().splitlines():
        if line.startswith("INITIATIVE_SIDECAR_TOKEN="):
            return line.split("=", 1)[1]
    raise SystemExit("no token in the environment file")


async def welcomed(world: str, key: str) -> socketio.AsyncClient:
    """A connection through nginx, once its welcome came."""
    sio = socketio.AsyncClient(reconnection=False)
    welcome: asyncio.Future[object] = asyncio.get_running_loop().create_future()

    def on_welcome(data: object) -> None:
        if not welcome.done():
            welcome.set_result(data)

    sio.on("welcome", on_welcome)
    try:
        await sio.connect(f"http://127.0.0.1/?world={world}", auth=auth(world, token=key),
                          transports=["websocket"], wait_timeout=5)
        await asyncio.wait_for(welcome, 10)
    except BaseException:
        await sio.disconnect()
        raise
    return sio


async def main(env_file: Path) -> None:
    world = "deploy-check-world"
    deadline = time.monotonic() + 30
    while True:  # the sidecars and nginx come up in the background: bounded retries
        try:
            sio = await welcomed(world, token(env_file))
            break
        except (TimeoutError, socketio.exceptions.ConnectionError) as error:
            if time.monotonic() > deadline:
                raise SystemExit(f"no sidecar answered through nginx: {error}") from error
            await asyncio.sleep(0.5)
    hook = {"seq": 1, "user": GM, "world_time": 0, "hook": "updateCombat",
            "combat": {"_id": "combatDeploy0001", "round": 0, "combatants": []},
            "current": {"round": 0, "combatantId": None}}
    ack = await sio.call("hook", hook, timeout=10)
    await sio.disconnect()
    print(json.dumps({"ack": ack}))


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
