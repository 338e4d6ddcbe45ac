"""deploy/README.md, run as written: its own ``sh deploy`` blocks, extracted from the document
(not a copy), in order, as root, on loopback in a network namespace of their own (so its ports
are the document's own: 80, 5432's stand-in, 6379, 8765, 8766, and its private address
10.0.0.5 exists there), with the paths of its ``sh deploy-env`` block pointed at a temporary
folder. The machine's services are left alone: the test makes a PostgreSQL cluster of its own
(Debian's ``pg_createcluster``), copies of Debian's stock redis.conf and nginx.conf, and a
``systemctl`` stand-in that does the same verbs on them (no systemd in CI). At the end a world
connects through nginx with the document's token and its message is acked and stored.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "deploy" / "README.md"
NEEDS = ("unshare", "ip", "pg_createcluster", "pg_ctlcluster", "runuser", "useradd", "redis-server", "nginx")

if os.geteuid() != 0 or any(shutil.which(n) is None for n in NEEDS) or not Path("/etc/redis/redis.conf").exists():
    pytest.skip("the deploy test runs deploy/README.md as root on Debian (CI), with "
                + ", ".join(NEEDS), allow_module_level=True)


def blocks(text: str, kind: str) -> list[str]:
    """The fenced blocks whose info string is ``sh <kind>``, in document order."""
    return re.findall(rf"^```sh {kind}\n(.*?)^```$", text, flags=re.M | re.S)


def names(env_block: str) -> list[str]:
    return re.findall(r"^export ([A-Z_]+)=", env_block, flags=re.M)


SYSTEMCTL = r"""#!/bin/bash
# systemctl for the deploy test: the README's verbs, on this test's own services
set -eu
T="$DEPLOY_TEST_DIR"
verb=$1; shift
[ "$verb" = daemon-reload ] && exit 0
[ "${1:-}" = --now ] && shift
unit=$1
case "$unit" in
  postgresql)
    case "$verb" in enable|start) pg_ctlcluster "$PGCLUSTER" start ;; restart) pg_ctlcluster "$PGCLUSTER" restart ;; esac ;;
  redis-server)
    if [ -f "$T/redis.pid" ]; then pid=$(cat "$T/redis.pid"); kill "$pid"; while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done; fi
    redis-server "$REDIS_CONF" ;;
  nginx)
    if [ -s "$T/nginx.pid" ]; then nginx -c "$NGINX_ETC/nginx.conf" -s reload; else nginx -c "$NGINX_ETC/nginx.conf"; fi ;;
  initiative-sidecar@*)
    port=${unit#*@}; f="$SYSTEMD_DIR/initiative-sidecar@.service"
    user=$(sed -n 's/^User=//p' "$f"); envf=$(sed -n 's/^EnvironmentFile=//p' "$f")
    cmd=$(sed -n 's/^ExecStart=//p' "$f"); cmd=${cmd//%i/$port}
    ( set -a; . "$envf"; set +a; exec runuser -u "$user" -- $cmd ) > "$T/sidecar-$port.log" 2>&1 &
    echo $! >> "$T/sidecar.pids" ;;
  *) echo "systemctl stand-in: unknown unit $unit" >&2; exit 1 ;;
esac
"""

PRELUDE = r"""set -euo pipefail
ip link set lo up
ip addr add 10.0.0.5/32 dev lo
export PATH="$DEPLOY_TEST_DIR/bin:$PATH"
cleanup() {
  set +e
  [ -f "$DEPLOY_TEST_DIR/sidecar.pids" ] && kill $(cat "$DEPLOY_TEST_DIR/sidecar.pids") 2>/dev/null
  [ -s "$DEPLOY_TEST_DIR/nginx.pid" ] && nginx -c "$NGINX_ETC/nginx.conf" -s quit
  [ -f "$DEPLOY_TEST_DIR/redis.pid" ] && kill "$(cat "$DEPLOY_TEST_DIR/redis.pid")"
  pg_ctlcluster "$PGCLUSTER" stop -m fast
  sleep 0.5
}
trap cleanup EXIT
"""


@pytest.fixture
def stage() -> Iterator[dict[str, str]]:
    """The values of the README's settings for this run, and what they point at."""
    tmp = Path(tempfile.mkdtemp(prefix="deploy-readme-"))
    tmp.chmod(0o755)  # the sidecar user reaches its home inside
    version = sorted(p.name for p in Path("/usr/lib/postgresql").iterdir())[-1]
    cluster = f"isc{os.getpid()}"
    # a user of its own, as the README makes; root where this Python is out of other users'
    # reach (a pyenv under /root): the steps are the same, the user already exists
    others = subprocess.run(["runuser", "-u", "nobody", "--", sys.executable, "-c", ""], capture_output=True)
    user = f"isc-test-{os.getpid()}" if others.returncode == 0 else "root"
    created = subprocess.run(["pg_createcluster", version, cluster], capture_output=True, text=True)
    assert created.returncode == 0, created.stderr
    conf_file = Path(f"/etc/postgresql/{version}/{cluster}/postgresql.conf").read_text()
    port = re.search(r"^port = (\d+)", conf_file, flags=re.M)
    assert port is not None
    (tmp / "bin").mkdir()
    (tmp / "bin" / "systemctl").write_text(SYSTEMCTL)
    (tmp / "bin" / "systemctl").chmod(0o755)
    # the stock configuration of a fresh Debian, with its own pid and log paths
    shutil.copytree("/etc/nginx", tmp / "nginx", symlinks=True)
    conf = (tmp / "nginx" / "nginx.conf").read_text()
    (tmp / "nginx-log").mkdir()
    conf = conf.replace("/etc/nginx", str(tmp / "nginx")).replace("/var/log/nginx", str(tmp / "nginx-log"))
    conf = conf.replace("/run/nginx.pid", str(tmp / "nginx.pid"))
    (tmp / "nginx" / "nginx.conf").write_text(conf)
    redis = Path("/etc/redis/redis.conf").read_text()
    redis += (f"\n# deploy test: its own files\ndaemonize yes\nsupervised no\npidfile {tmp}/redis.pid\n"
              f"logfile {tmp}/redis.log\ndir {tmp}\n")
    (tmp / "redis.conf").write_text(redis)
    (tmp / "systemd").mkdir()
    values = {
        "PRIVATE_ADDR": "10.0.0.5", "SIDECAR_NET": "10.0.0.0/24",
        "FOUNDRY_ORIGINS": "https://foundry.example.com", "SIDECAR_PORTS": "8765 8766",
        "PGCLUSTER": f"{version}/{cluster}", "PGPORT": port.group(1),
        "PG_ETC": f"/etc/postgresql/{version}/{cluster}",
        "REDIS_CONF": str(tmp / "redis.conf"), "REDIS_PORT": "6379",
        "NGINX_ETC": str(tmp / "nginx"), "SYSTEMD_DIR": str(tmp / "systemd"),
        "SIDECAR_VENV": sys.prefix, "SIDECAR_USER": user, "SIDECAR_HOME": str(tmp / "home"),
        "SIDECAR_ENV": str(tmp / "initiative-sidecar.env"), "DEPLOY_TEST_DIR": str(tmp),
    }
    try:
        yield values
    finally:
        subprocess.run(["pg_dropcluster", "--stop", version, cluster], capture_output=True)
        shutil.rmtree(f"/etc/postgresql/{version}/{cluster}", ignore_errors=True)  # the README's conf.d file
        if user != "root":
            subprocess.run(["userdel", "-r", user], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)


def test_the_deploy_readme_s_own_commands_bring_up_a_stack_that_acks_a_world_s_message(
    stage: dict[str, str],
) -> None:
    text = README.read_text(encoding="utf-8")
    [settings] = blocks(text, "deploy-env")
    steps = blocks(text, "deploy")
    assert len(steps) >= 6, "the README lost its deploy blocks"
    assert set(names(settings)) == set(stage) - {"DEPLOY_TEST_DIR"}, \
        "the README's settings and the values this test gives them differ"
    check = '"$SIDECAR_VENV/bin/python" -m tests.hosted.deploy_check "$SIDECAR_ENV"\n'
    script = PRELUDE + "\n".join(steps) + "\n" + check
    env = {**os.environ, **stage}
    done = subprocess.run(["unshare", "--net", "bash", "-c", script], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=240)
    logs = "".join(p.read_text() for p in Path(stage["DEPLOY_TEST_DIR"]).glob("sidecar-*.log"))
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}\n{logs}"
    ack = json.loads(done.stdout.strip().splitlines()[-1])["ack"]
    assert ack["ok"] is True and ack["seq"] == 1, ack
    assert "(PostgreSQL)" in logs and "Traceback" not in logs
    for secret in ("DB_PASSWORD", "REDIS_PASSWORD"):
        assert secret not in logs
