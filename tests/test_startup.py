"""What ``serve`` loads before it listens, and hosted mode's packages as an extra.

Start-up time is measured by the benchmark (docs/performance.md), never asserted here; these
tests keep its causes away: the command line and a serving sidecar (with a stored world to
restore) must not import the validator library behind refusals (``jsonschema``), ``rich``,
Jinja2, the replay and bench machinery, nor hosted mode's ``redis``/``psycopg``. Each child
process hides ``redis`` and ``psycopg`` as an install without ``[hosted]`` lacks them
(python-socketio imports ``redis`` by itself whenever it is installed).
"""

from __future__ import annotations

import gc
import importlib.machinery
import json
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from adapter import protocol
from adapter.cli import parser
from adapter.config import ConfigError, from_args
from adapter.errors import InvalidMessage
from adapter.rulesets import RULESETS
from adapter.service import Worlds
from adapter.store import Store
from adapter.store.snapshots import Codec
from tests.server.test_roundtrip import hook
from tests.support.sidecar import TOKEN, auth

#: reads the snapshots of every built-in ruleset's worlds
CODEC = Codec(RULESETS.values())

ROOT = Path(__file__).resolve().parent.parent

#: loaded only by the commands or the messages that need them
NOT_AT_START = ("jsonschema", "referencing", "jsonschema_specifications", "rich", "jinja2", "redis",
                "psycopg", "adapter.replay", "adapter.replay_html", "adapter.bench",
                "adapter.benchkit", "adapter.progress")

#: the child's prelude: an install without the hosted extra
WITHOUT_HOSTED = "import sys\nsys.modules['redis'] = sys.modules['psycopg'] = None\n"

SERVE = WITHOUT_HOSTED + """
import io, json, os, signal
from adapter.cli import parser, run
after_cli = sorted(m for m, v in sys.modules.items() if v is not None)
at_listen = []

class Out(io.StringIO):
    def flush(self):
        if "listening on" in self.getvalue() and not at_listen:
            at_listen.extend(m for m, v in sys.modules.items() if v is not None)
            os.kill(os.getpid(), signal.SIGTERM)  # a clean stop, as a GM's Ctrl-C

log = io.StringIO()
code = run(parser().parse_args(sys.argv[1:]), Out(), log)
print(json.dumps({"code": code, "cli": after_cli, "listen": sorted(at_listen), "log": log.getvalue()}))
"""


def child(script: str, *args: str) -> Any:
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == n or m.startswith(n + ".") for n in names)]


def stored_world(db: Path, world: str = "world0000000001", messages: int = 2) -> None:
    """A world whose messages are stored and not snapshotted: a start replays them."""
    store = Store(db, codec=CODEC)
    worlds = Worlds(store, rulesets=RULESETS)
    worlds.connect(auth(world=world))
    for seq in range(1, messages + 1):
        assert worlds.handle(world, "hook", hook(seq)).error is None
    store.close()


def test_serve_listens_without_loading_what_only_refusals_tools_or_hosted_mode_need(tmp_path: Path) -> None:
    db = tmp_path / "sidecar.db"
    stored_world(db)

    got = child(SERVE, "serve", "--port", "0", "--db", str(db), "--token", TOKEN, "--log-level", "INFO")

    assert got["code"] == 0, got["log"]
    assert "world world0000000001 restored at seq 2 (2 messages replayed)" in got["log"]
    assert loaded(got["cli"], ("adapter.server", "adapter.engine", "aiohttp", "socketio")) == []
    assert loaded(got["cli"], NOT_AT_START) == []
    assert "adapter.server" in got["listen"] and "adapter.rulesets" in got["listen"]
    assert loaded(got["listen"], NOT_AT_START) == []


REFUSE = """
import json, sys
from adapter import protocol
from adapter.errors import InvalidMessage
before = "jsonschema" in sys.modules
refusals = []
for message in json.loads(sys.argv[1]):
    try:
        protocol.validate("hook", message)
    except InvalidMessage as error:
        refusals.append([error.message, error.path])
print(json.dumps({"before": before, "after": "jsonschema" in sys.modules, "refusals": refusals}))
"""


def test_the_first_refusal_loads_jsonschema_and_refusals_read_as_before() -> None:
    messages = [hook(1) | change for change in ({"seq": "one"}, {"combat": {"round": -1}}, {"hook": "noSuchHook"})]
    here = []
    for message in messages:  # in this process, jsonschema has refused messages before
        with pytest.raises(InvalidMessage) as refused:
            protocol.validate("hook", message)
        here.append([refused.value.message, refused.value.path])

    fresh = child(REFUSE, json.dumps(messages))

    assert (fresh["before"], fresh["after"]) == (False, True)
    assert fresh["refusals"] == here


def test_redis_rooms_over_valkey_need_only_the_valkey_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """python-socketio's AsyncRedisManager takes valkey:// with the valkey package alone."""
    monkeypatch.setitem(sys.modules, "redis", None)
    hidden = ["serve", "--db", str(tmp_path / "s.db"), "--token", TOKEN, "--redis"]
    monkeypatch.setitem(sys.modules, "valkey", None)
    with pytest.raises(ConfigError, match="needs the valkey package"):
        from_args(parser().parse_args([*hidden, "valkey://127.0.0.1:6379/0"]))
    with pytest.raises(ConfigError, match="needs the redis or valkey package"):
        from_args(parser().parse_args([*hidden, "unix:///run/redis.sock"]))
    valkey = types.ModuleType("valkey")
    valkey.__spec__ = importlib.machinery.ModuleSpec("valkey", None)
    monkeypatch.setitem(sys.modules, "valkey", valkey)  # installed: either URL is taken
    assert from_args(parser().parse_args([*hidden, "valkey://127.0.0.1:6379/0"])).redis.startswith("valkey://")
    assert from_args(parser().parse_args([*hidden, "unix:///run/redis.sock"])).redis.startswith("unix://")
    with pytest.raises(ConfigError, match="needs the redis package"):
        from_args(parser().parse_args([*hidden, "redis://127.0.0.1:6379/0"]))


@pytest.mark.parametrize("flag, package", [("redis", "redis"), ("store", "psycopg")])
def test_a_hosted_flag_without_the_hosted_extra_says_what_to_install(
    flag: str, package: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, package, None)  # as in an install without [hosted]
    url = "redis://127.0.0.1:6379/0" if flag == "redis" else "postgresql://sidecar@127.0.0.1/sidecar"
    args = parser().parse_args(["serve", "--db", str(tmp_path / "s.db"), "--token", TOKEN, f"--{flag}", url])

    with pytest.raises(ConfigError) as refused:  # serve says it and exits 2, before opening anything
        from_args(args)

    assert f"--{flag} (hosted mode) needs the {package} package" in str(refused.value)
    assert "pip install 'initiative-sidecar[hosted]'" in str(refused.value)


def test_restoring_worlds_sets_nothing_aside_from_the_collector_for_good(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "sidecar.db"
    for n in (1, 2, 3):
        stored_world(db, f"world000000000{n}")
    store = Store(db, codec=CODEC)
    worlds = Worlds(store, rulesets=RULESETS)
    frozen = gc.get_freeze_count()

    worlds.load()  # each world is frozen as it is restored, and all given back at the end

    assert sorted(worlds.states) == ["world0000000001", "world0000000002", "world0000000003"]
    assert gc.get_freeze_count() == frozen
    again = Worlds(store, rulesets=RULESETS)
    restore = again.load_world

    def fail_on_the_third(world: str) -> None:
        if world.endswith("3"):
            raise RuntimeError("a world that cannot be restored")
        restore(world)

    monkeypatch.setattr(again, "load_world", fail_on_the_third)
    with pytest.raises(RuntimeError):
        again.load()
    assert gc.get_freeze_count() == frozen
    store.close()
