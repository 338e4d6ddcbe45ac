"""The bench's processes. Its servers, each on a free loopback port: the echo server and the
sidecar (:func:`start`: timed until it accepts connections, its peak memory read), and real
PostgreSQL, Redis and nginx (Debian's packages) for ``bench --hosted`` and the hosted tests,
each in a temporary folder. As root, PostgreSQL runs as the ``postgres`` user (it refuses
root); nginx runs ``deploy/nginx.conf``: a source checkout. The load put on them is
:mod:`.load`'s.
"""

from __future__ import annotations

import compileall
import functools
import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

TOKEN = "bench-token-0123456789abcdef"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop(process: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """SIGTERM, then SIGKILL if it has not exited within ``timeout``."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout)


def wait_port(name: str, port: int, process: subprocess.Popen[bytes] | None = None,
              timeout: float = 10.0) -> None:
    """Until a TCP connection to ``port`` succeeds; an error if ``process`` exits first (with
    what it wrote to a piped stderr) or after ``timeout``."""
    deadline = time.perf_counter() + timeout
    while True:
        if process is not None and process.poll() is not None:
            said = process.stderr.read().decode() if process.stderr else ""
            raise RuntimeError(f"the {name} exited with {process.returncode} at start {said}".rstrip())
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if time.perf_counter() > deadline:
                raise RuntimeError(f"the {name} did not accept connections on port {port} "
                                   f"in {timeout}s") from None
            time.sleep(0.002)


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    port: int
    startup_s: float

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def peak_rss_mb(self) -> float:
        """The high-water mark of the process's resident memory (VmHWM), MB."""
        return _status_kb(self.process.pid, "VmHWM") / 1024

    def rss_mb(self) -> float:
        return _status_kb(self.process.pid, "VmRSS") / 1024

    def stop(self) -> None:
        stop(self.process)


@functools.cache
def compiled() -> None:
    """The package's bytecode, up to date, as pip writes it at install: the servers run with
    ``PYTHONDONTWRITEBYTECODE``, and the start-up figure must not count compiling (~0.1 s)."""
    compileall.compile_dir(Path(__file__).resolve().parent.parent, quiet=2)


def start(kind: str, db: Path | None = None, timeout: float = 30.0, extra: tuple[str, ...] = ()) -> Server:
    """Start a server process and wait until a TCP connection to it succeeds (``extra``: more
    ``serve`` flags, e.g. ``--store``)."""
    compiled()
    port = free_port()
    if kind == "echo":
        argv = [sys.executable, "-m", "adapter.benchkit.echo", str(port)]
    else:
        assert db is not None
        # every bench client connects from loopback, many at once (the guard's default is 64)
        argv = [sys.executable, "-m", "adapter", "serve", "--host", "127.0.0.1",
                "--port", str(port), "--db", str(db), "--token", TOKEN, "--log-level", "WARNING",
                "--pending-per-address", "4096", *extra]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    began = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, env=env)
    try:
        wait_port(f"{kind} server", port, process, timeout)
    except RuntimeError:
        stop(process)
        raise
    return Server(process, port, time.perf_counter() - began)


def hosted(stack: ExitStack, folder: Path, count: int, store: str, redis: str,
           **options: int) -> tuple[list[Server], str]:
    """``count`` sidecar processes on one PostgreSQL store and Redis behind nginx (``options``:
    :func:`nginx`'s), stopped with ``stack``; and nginx's URL."""
    folder.mkdir(parents=True, exist_ok=True)
    started = []
    for i in range(count):
        started.append(start("sidecar", folder / f"unused-{i}.db", extra=("--store", store, "--redis", redis)))
        stack.callback(started[-1].stop)
    port = stack.enter_context(nginx([s.port for s in started], **options))
    return started, f"http://127.0.0.1:{port}"


def _status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not found for process {pid}")


def pg_bin(name: str) -> str | None:
    """``name`` on the PATH, else in the last (by name) of Debian's PostgreSQL version folders."""
    return shutil.which(name) or max(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), default=None)


#: the binaries the hosted tests run
NEEDS = ("initdb", "pg_ctl", "redis-server", "nginx")


def missing(*needs: str) -> list[str]:
    """Which of the binaries a test module needs are not on this machine."""
    where = {"initdb": pg_bin, "pg_ctl": pg_bin}
    return [n for n in needs if not where.get(n, shutil.which)(n)]


def _as_postgres(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


@dataclass
class Postgres:
    """A throwaway cluster (trust auth on loopback; fsync off, as it is thrown away anyway,
    unless ``durable``: the capacity bench commits as a real deployment does)."""

    root: Path
    port: int
    count: int = 0
    durable: bool = False

    @property
    def data(self) -> Path:
        return self.root / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://sidecar@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh, empty database: its URL (each test gets its own)."""
        import psycopg

        self.count += 1
        name = f"hosted_{os.getpid()}_{self.count}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}".encode())
        return self.url(name)

    def start(self) -> None:
        fsync = "on" if self.durable else "off"
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync={fsync} -c max_connections=200"
        subprocess.run(_as_postgres([str(pg_bin("pg_ctl")), "-D", str(self.data), "-o", options, "-l",
                                     str(self.root / "log"), "-w", "start"]),
                       check=True, capture_output=True, cwd=self.root)

    def stop(self) -> None:
        subprocess.run(_as_postgres([str(pg_bin("pg_ctl")), "-D", str(self.data), "-m", "immediate", "stop"]),
                       capture_output=True, cwd=self.root)


@contextmanager
def postgres(*, durable: bool = False) -> Iterator[Postgres]:
    root = Path(tempfile.mkdtemp(prefix="sidecar-pg-"))
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
    cluster = Postgres(root, free_port(), durable=durable)
    subprocess.run(_as_postgres([str(pg_bin("initdb")), "-D", str(cluster.data), "-A", "trust", "-U", "sidecar",
                                 "--no-sync", "-E", "UTF8"]), check=True, capture_output=True, cwd=root)
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


@dataclass
class Redis:
    """A redis-server without persistence on one port, which can be stopped and started again."""

    port: int
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                                      "--save", "", "--appendonly", "no"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port("redis-server", self.port, self.proc)

    def pause(self) -> None:
        """SIGSTOP: alive, its connections open, answering nothing (a stuck Redis)."""
        if self.proc is not None:
            self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGCONT)  # a paused one must be able to die
            self.proc.kill()
            self.proc.wait()
            self.proc = None


@contextmanager
def redis() -> Iterator[Redis]:
    server = Redis(free_port())
    server.start()
    try:
        yield server
    finally:
        server.stop()


NGINX_CONF = """\
{user}worker_processes {workers};
worker_rlimit_nofile {files};
error_log {root}/error.log warn;
pid {root}/nginx.pid;
events {{ worker_connections {connections}; }}
http {{
    access_log off;
    client_body_temp_path {root}/body;
    proxy_temp_path {root}/proxy;
    fastcgi_temp_path {root}/fastcgi;
    uwsgi_temp_path {root}/uwsgi;
    scgi_temp_path {root}/scgi;
    include {root}/sites-enabled/*;
}}
"""


def upstream_weight() -> int:
    """The ``weight=`` deploy/nginx.conf gives its upstream servers (1 when none)."""
    sample = (Path(__file__).resolve().parents[2] / "deploy" / "nginx.conf").read_text(encoding="utf-8")
    found = re.search(r"^ *server 127\.0\.0\.1:\d+ .*\bweight=(\d+)", sample, flags=re.M)
    return int(found.group(1)) if found else 1


def snippet(upstreams: list[int], port: int) -> str:
    """deploy/nginx.conf (a server-block snippet) with its sample upstream servers replaced
    by sidecars on loopback ``upstreams`` ports, listening on ``port``."""
    sample = (Path(__file__).resolve().parents[2] / "deploy" / "nginx.conf").read_text(encoding="utf-8")
    found = re.findall(r"^( *)server 127\.0\.0\.1:\d+ ?(.*)$", sample, flags=re.M)
    indent, options = found[0]
    listed = "".join(f"{indent}server 127.0.0.1:{p} {options}\n" for p in upstreams)
    body = re.sub(r"(^ *server 127\.0\.0\.1:\d+.*\n)+", listed, sample, flags=re.M)
    return body.replace("listen 80;", f"listen 127.0.0.1:{port};")


@contextmanager
def nginx(upstreams: list[int], *, workers: int = 1, connections: int = 2048) -> Iterator[int]:
    """nginx running deploy/nginx.conf (:func:`snippet`) in front of sidecars on
    ``upstreams`` ports; yields nginx's port."""
    port = free_port()
    with nginx_site(snippet(upstreams, port), port, workers=workers, connections=connections):
        yield port


@contextmanager
def nginx_site(site: str, port: int, *, workers: int = 1, connections: int = 512) -> Iterator[None]:
    """nginx serving one site (a server-block snippet, as an operator puts it in sites-enabled)
    that listens on ``port``; stopped and its folder removed on exit."""
    root = Path(tempfile.mkdtemp(prefix="sidecar-nginx-"))
    (root / "sites-enabled").mkdir()
    (root / "sites-enabled" / "initiative-sidecar").write_text(site)
    user = "user root;\n" if os.geteuid() == 0 else ""
    conf = root / "nginx.conf"
    conf.write_text(NGINX_CONF.format(user=user, root=root, workers=workers, connections=connections,
                                      files=2 * connections + 64))
    with subprocess.Popen(["nginx", "-p", str(root), "-c", str(conf), "-g", "daemon off;"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as proc:
        try:
            wait_port("nginx", port, proc)
            yield
        finally:
            stop(proc)
            shutil.rmtree(root, ignore_errors=True)

