"""A real ``initiative-sidecar serve`` in a child process, on a free port, with a temporary
database: what a GM runs, for the tests that go over HTTP or drive a browser."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.sidecar import TOKEN

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Served:
    url: str
    process: subprocess.Popen[str]
    log: Path

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8")


@contextmanager
def serve(tmp: Path, *args: str, command: tuple[str, ...] = (sys.executable, "-m", "adapter"),
          cwd: Path = ROOT) -> Iterator[Served]:
    log = tmp / "serve.log"
    env = {**os.environ, "INITIATIVE_SIDECAR_TOKEN": TOKEN}
    with open(log, "w", encoding="utf-8") as err:
        process = subprocess.Popen(
            [*command, "serve", "--port", "0", "--db", str(tmp / "sidecar.db"), "--log-level", "DEBUG", *args],
            stdout=subprocess.PIPE, stderr=err, text=True, env=env, cwd=cwd,
        )
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 20
        line = ""
        while "listening on" not in line:
            line = process.stdout.readline()
            assert line or process.poll() is None, f"serve exited: {log.read_text(encoding='utf-8')}"
            assert time.monotonic() < deadline, "serve did not start in 20 s"
        port = line.rsplit(":", 1)[1].strip()  # --port 0: the system's choice, never a guessed free one
        yield Served(f"http://127.0.0.1:{port}", process, log)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
