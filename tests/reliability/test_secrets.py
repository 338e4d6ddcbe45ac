"""Secrets and exposure: the token is never logged and never read from a URL; the sidecar
binds to loopback by default and warns when bound elsewhere without TLS. (Which origins may
connect: tests/server/test_origins.py.)"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import socketio

from adapter.cli import parser
from adapter.config import Config, ConfigError, from_args, is_loopback
from tests.reliability.harness import Serve, auth_for, open_link
from tests.reliability.table import build
from tests.support.sidecar import TOKEN, Running, auth, connect, refused

SECRET = "s3cret-token-that-must-never-be-logged-7f1e"
WRONG = "wrong-token-also-never-logged-0c2d"


async def test_the_token_is_never_logged_across_connects_refusals_errors_and_restarts(
    serve_factory: Callable[..., Serve],
) -> None:
    serve = serve_factory("secret", token=SECRET, args=("--log-level", "DEBUG"))
    await serve.start()
    ref = build("world-secret", "balanced-d20", 3, fights=1, rounds=2)
    link = await open_link(serve.url, auth_for(ref.world, ref.ruleset, token=SECRET))
    await link.welcome
    for event, data in ref.messages[:20]:
        await (await link.emit(event, data))
    await (await link.emit("hook", {"seq": 21, "token": SECRET, "bad": float("nan")}))  # refused
    await (await link.emit("intent", {**ref.messages[0][1], "seq": 22, "kind": "nope"}))
    taker = await open_link(serve.url, auth_for(ref.world, ref.ruleset, token=SECRET))  # supersedes
    await taker.welcome
    for bad in (WRONG, SECRET + "x", ""):
        sio = socketio.AsyncClient(reconnection=False)
        with pytest.raises(socketio.exceptions.ConnectionError):
            await sio.connect(serve.url, auth=auth_for(ref.world, ref.ruleset, token=bad),
                              transports=["websocket"], wait_timeout=5)
        await sio.disconnect()
    await link.close()
    await taker.close()
    serve.kill()
    await serve.wait()
    await serve.start()
    await serve.stop()
    logs = serve.log.read_text()
    assert "connected: world world-secret" in logs and "refused: auth_failed" in logs  # it did log
    for secret in (SECRET, WRONG):
        assert secret not in logs and secret not in serve.out.read_text()


async def test_a_generated_token_is_shown_once_on_stdout_and_never_in_the_log(
    serve_factory: Callable[..., Serve], tmp_path: Path,
) -> None:
    serve = serve_factory("generated", token=None)
    await serve.start()
    await serve.stop()
    token = (tmp_path / "generated.token").read_text().strip()
    assert len(token) >= 32 and (tmp_path / "generated.token").stat().st_mode & 0o077 == 0
    assert serve.out.read_text().count(token) == 1
    await serve.start()
    client = await open_link(serve.url, auth_for("w", "foundry-core", token=token))
    await client.welcome
    await client.close()
    await serve.stop()
    assert serve.out.read_text().count(token) == 1 and token not in serve.log.read_text()


def test_an_in_process_server_logs_no_token_either(caplog: pytest.LogCaptureFixture) -> None:
    """The same through the logging records (caplog), with a wrong token that looks secret."""
    import asyncio

    from adapter.server import create_app  # noqa: F401 - the app under test logs via "initiative_sidecar"

    async def run() -> None:
        running = Running(Config(port=0, db=Path(caplog_dir) / "c.db", token=TOKEN))
        await running.start()
        try:
            assert (await refused(running.url, auth(token=WRONG)))["code"] == "auth_failed"
            client = await connect(running.url, auth())
            await client.welcome
            await client.send("hook", {"seq": 1, "token": TOKEN})
            await client.close()
        finally:
            await running.stop()

    import tempfile

    caplog_dir = tempfile.mkdtemp()
    with caplog.at_level(logging.DEBUG):
        asyncio.run(run())
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "refused: auth_failed" in text
    assert TOKEN not in text and WRONG not in text


async def test_a_token_in_the_url_is_not_read(sidecar: Running) -> None:
    """Only the socket.io auth payload carries the token: one in the query string is ignored."""
    no_token = {k: v for k, v in auth().items() if k != "token"}
    assert (await refused(f"{sidecar.url}?token={TOKEN}", no_token))["code"] == "invalid_auth"


def test_the_default_is_loopback(tmp_path: Path) -> None:
    assert Config().host == "127.0.0.1"
    assert from_args(parser().parse_args(["serve", "--db", str(tmp_path / "x.db"), "--token", "t"])).host == "127.0.0.1"
    assert [is_loopback(h) for h in ("127.0.0.1", "127.0.0.2", "::1", "localhost")] == [True] * 4
    assert [is_loopback(h) for h in ("0.0.0.0", "::", "192.168.1.10", "example.com")] == [False] * 4


async def test_serve_without_host_listens_on_loopback(serve_factory: Callable[..., Serve]) -> None:
    serve = serve_factory("loopback")
    serve.host = ()  # no --host
    await serve.start()
    await serve.stop()
    assert f"listening on http://127.0.0.1:{serve.port}" in serve.out.read_text()
    assert "not loopback" not in serve.log.read_text()


async def test_binding_elsewhere_needs_allow_remote_and_then_warns(serve_factory: Callable[..., Serve]) -> None:
    """192.0.2.1 (TEST-NET-1) is no address of this machine: without ``--allow-remote`` the
    start is refused and says why; with it the warning is printed, the bind then fails
    cleanly, and nothing is ever exposed beyond loopback by this test."""
    refused_start = serve_factory("exposed-refused")
    refused_start.host = ("--host", "192.0.2.1")
    with pytest.raises(RuntimeError, match="did not start"):
        await refused_start.start()
    assert refused_start.proc is not None and refused_start.proc.returncode == 2
    err = refused_start.log.read_text()
    assert "will not listen on 192.0.2.1, which is not loopback" in err and "--allow-remote" in err
    assert "clear text" in err and "cannot listen" not in err and "Traceback" not in err

    serve = serve_factory("exposed")
    serve.host = ("--host", "192.0.2.1", "--allow-remote")
    with pytest.raises(RuntimeError, match="did not start"):
        await serve.start()
    assert serve.proc is not None and serve.proc.returncode == 4
    err = serve.log.read_text()
    assert "bound to 192.0.2.1, which is not loopback, without TLS" in err and "clear text" in err
    assert "cannot listen on 192.0.2.1" in err and "Traceback" not in err


@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_host_setting_means_the_loopback_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str,
) -> None:
    monkeypatch.setenv("INITIATIVE_SIDECAR_HOST", value)
    config = from_args(parser().parse_args(["serve", "--db", str(tmp_path / "x.db"), "--token", "t"]))
    assert config.host == "127.0.0.1"
    config = from_args(parser().parse_args(["serve", "--host", value, "--db", str(tmp_path / "x.db"), "--token", "t"]))
    assert config.host == "127.0.0.1"


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10"])
def test_every_address_but_loopback_needs_allow_remote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       host: str) -> None:
    base = ["serve", "--host", host, "--db", str(tmp_path / "x.db"), "--token", "t"]
    with pytest.raises(ConfigError, match="--allow-remote"):
        from_args(parser().parse_args(base))
    assert from_args(parser().parse_args([*base, "--allow-remote"])).host == host
    monkeypatch.setenv("INITIATIVE_SIDECAR_ALLOW_REMOTE", "1")
    assert from_args(parser().parse_args(base)).allow_remote is True


@pytest.mark.parametrize("token", ["x" * 600, ["the-pasted-secret-0123"], {"t": "the-pasted-secret-0123"}],
                         ids=["too-long", "a-list", "an-object"])
async def test_a_refused_token_is_never_quoted_back(sidecar: Running, token: Any) -> None:
    """jsonschema's message quotes the value it refuses: at /token that is what the GM pasted
    as the token, which the module would then show on screen. The refusal names the field."""
    answer = await refused(sidecar.url, auth(token=token))
    assert answer["code"] == "invalid_auth" and "/token" in answer["message"], answer
    assert "x" * 20 not in answer["message"] and "the-pasted-secret" not in answer["message"], answer


async def test_an_auth_that_is_not_an_object_is_refused_without_quoting_it(sidecar: Running) -> None:
    answer = await refused(sidecar.url, [TOKEN, "world0000000001"])
    assert answer["code"] == "invalid_auth" and TOKEN not in answer["message"], answer
