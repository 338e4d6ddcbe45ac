"""Each server in its own process: start it, time how long until it accepts connections,
read its peak memory, stop it."""

from __future__ import annotations

import compileall
import functools
import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

TOKEN = "bench-token-0123456789abcdef"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    kind: str  # "echo" or "sidecar"
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

    def stop(self, timeout: float = 10.0) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout)


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
    server = Server(kind, process, port, 0.0)
    deadline = began + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the {kind} server exited with {process.returncode} at start")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError:
            if time.perf_counter() > deadline:
                server.stop()
                raise RuntimeError(f"the {kind} server did not accept connections in {timeout}s") from None
            time.sleep(0.002)
    server.startup_s = time.perf_counter() - began
    return server


def hosted(stack: ExitStack, folder: Path, count: int, store: str, redis: str) -> list[Server]:
    """``count`` sidecar processes on one PostgreSQL store and Redis, stopped with ``stack``."""
    folder.mkdir(parents=True, exist_ok=True)
    started = []
    for i in range(count):
        started.append(start("sidecar", folder / f"unused-{i}.db", extra=("--store", store, "--redis", redis)))
        stack.callback(started[-1].stop)
    return started


def _status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not found for process {pid}")
