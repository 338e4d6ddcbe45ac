"""The wheel is whole: built from the checkout, installed (not editable) in a fresh venv
outside it, its ``replay --expect``, ``schemas --check``, ``serve`` (with the module it
serves) and ``export`` work.

By default the venv borrows the test venv's installed dependencies (a ``.pth`` line; the
checkout itself is not on its path, and the ``adapter`` it imports is the wheel's), so the
test takes seconds; ``pytest --full`` installs the dependencies from the package index as a
user's ``pip install`` does (about 30 s more)."""

from __future__ import annotations

import asyncio
import io
import json
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import aiohttp
import pytest

from adapter.server.module_files import module_files
from tests.server.serving import ROOT, serve
from tests.server.test_roundtrip import hook
from tests.support.sidecar import auth, connect

GOLDEN = ROOT / "tests/recordings/storyteller/ST-E2-interrupt-before-larry"


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{args}: {done.stdout}\n{done.stderr}"
    return done


async def test_the_wheel_installed_outside_the_checkout_runs_every_command(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    full = bool(request.config.getoption("--full"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", tmp_path / "wheel", ROOT, cwd=elsewhere)
    [wheel] = (tmp_path / "wheel").glob("initiative_sidecar-*.whl")
    inside = zipfile.ZipFile(wheel).namelist()
    prefix = "adapter/vtt_module/"
    assert sorted(n.removeprefix(prefix) for n in inside if n.startswith(prefix)) == module_files()
    schemas = sorted(p.relative_to(ROOT / "schemas").as_posix() for p in (ROOT / "schemas").rglob("*.json"))
    prefix = "adapter/protocol/schemas/"
    assert sorted(n.removeprefix(prefix) for n in inside if n.startswith(prefix)) == schemas
    bin_ = tmp_path / "venv" / "bin"
    if full:
        run(sys.executable, "-m", "venv", tmp_path / "venv", cwd=elsewhere)
        run(bin_ / "python", "-m", "pip", "install", "--quiet", wheel, cwd=elsewhere)
    else:
        run(sys.executable, "-m", "venv", "--without-pip", tmp_path / "venv", cwd=elsewhere)
        borrowed = run(bin_ / "python", "-c", "import site; print(site.getsitepackages()[0])", cwd=elsewhere)
        Path(borrowed.stdout.strip(), "borrowed-deps.pth").write_text(site.getsitepackages()[0] + "\n")
        run(sys.executable, "-m", "pip", "--python", bin_ / "python", "install", "--quiet", "--no-deps",
            "--no-index", wheel, cwd=elsewhere)
    where = run(bin_ / "python", "-c", "import adapter; print(adapter.__file__)", cwd=elsewhere).stdout
    assert str(tmp_path / "venv") in where and str(ROOT) not in where

    tool = bin_ / "initiative-sidecar"
    replayed = run(tool, "replay", f"{GOLDEN}.jsonl", "--expect", f"{GOLDEN}.golden.jsonl", cwd=elsewhere)
    assert "output lines match" in replayed.stdout
    checked = run(tool, "schemas", "--check", "--recordings", ROOT / "tests/recordings", cwd=elsewhere)
    assert checked.stdout.rstrip().endswith("OK")

    with serve(tmp_path, command=(str(tool),), cwd=elsewhere) as served:
        client = await connect(served.url, auth())
        await asyncio.wait_for(client.welcome, 5)
        assert (await client.send("hook", hook(1)))["ok"]
        await client.close()
        async with aiohttp.ClientSession() as http, http.get(f"{served.url}/module/initiative-sidecar.zip") as got:
            archive = zipfile.ZipFile(io.BytesIO(await got.read()))
        assert sorted(archive.namelist()) == module_files()
    exported = run(tool, "export", "--world", "world0000000001", "--db", tmp_path / "sidecar.db", cwd=elsewhere)
    assert [json.loads(line)["event"] for line in exported.stdout.splitlines()] == ["session", "hook"]
