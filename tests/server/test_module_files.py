"""The module installs from the sidecar: its manifest and zip over HTTP from a real ``serve``."""

from __future__ import annotations

import io
import json
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from adapter import protocol
from adapter.cli import main
from adapter.server.module_files import DEV_FILES, ZIP_NAME, module_dir, module_files
from adapter.version import __version__
from tests.server.serving import ROOT, Served, serve


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve(tmp_path_factory.mktemp("module")) as running:
        yield running


async def fetch(url: str, headers: dict[str, str] | None = None) -> tuple[int, str, bytes]:
    async with aiohttp.ClientSession() as http, http.get(url, headers=headers or {}) as response:
        return response.status, response.content_type, await response.read()


def check_as_foundry_reads(manifest: dict[str, Any], files: set[str]) -> None:
    """The fields Foundry v13 reads of a module manifest (research notes, section 5)."""
    assert manifest["id"] == "initiative-sidecar" and manifest["title"].strip()
    assert manifest["version"] == __version__
    for key in ("minimum", "verified", "maximum"):
        assert isinstance(manifest["compatibility"][key], str)
    assert manifest["esmodules"] and all(path in files for path in manifest["esmodules"])
    assert all((s if isinstance(s, str) else s["src"]) in files for s in manifest["styles"])
    assert {lang["lang"] for lang in manifest["languages"]} == {"en", "ru"}
    assert all(lang["path"] in files for lang in manifest["languages"])
    assert manifest["socket"] is True
    assert manifest["flags"]["protocol"] == protocol.PROTOCOL_VERSION


async def test_the_manifest_points_back_at_the_address_the_request_came_to(served: Served) -> None:
    status, kind, body = await fetch(f"{served.url}/module/module.json")
    assert (status, kind) == (200, "application/json")
    manifest = json.loads(body)
    assert manifest["manifest"] == f"{served.url}/module/module.json"
    assert manifest["download"] == f"{served.url}/module/initiative-sidecar.zip"
    check_as_foundry_reads(manifest, set(module_files()))
    port = served.url.rsplit(":", 1)[1]
    _, _, other = await fetch(f"{served.url}/module/module.json", {"Host": f"localhost:{port}"})
    assert json.loads(other)["download"] == f"http://localhost:{port}/module/initiative-sidecar.zip"


async def test_the_zip_holds_the_module_without_tests_or_dev_files(served: Served) -> None:
    _, _, manifest_body = await fetch(f"{served.url}/module/module.json")
    status, kind, body = await fetch(f"{served.url}/module/initiative-sidecar.zip")
    assert (status, kind) == (200, "application/zip")
    archive = zipfile.ZipFile(io.BytesIO(body))
    names = archive.namelist()
    assert sorted(names) == module_files()
    assert not [n for n in names if n.split("/")[0] in DEV_FILES or "/." in f"/{n}"]
    assert json.loads(archive.read("module.json")) == json.loads(manifest_body)
    for name in names:
        if name != "module.json":
            assert archive.read(name) == (module_dir() / name).read_bytes(), name
    check_as_foundry_reads(json.loads(archive.read("module.json")), set(names))


def test_every_tracked_module_file_but_the_dev_files_is_shipped() -> None:
    tracked = subprocess.run(["git", "ls-files", "vtt_module"], cwd=ROOT, capture_output=True, text=True, check=True)
    wanted = sorted(
        p.removeprefix("vtt_module/") for p in tracked.stdout.split()
        if p.removeprefix("vtt_module/").split("/")[0] not in DEV_FILES
        and not p.removeprefix("vtt_module/").startswith(".")
    )
    assert wanted and set(wanted) <= set(module_files())


def test_the_checkout_copies_of_the_version_and_protocol_agree_with_the_one_source() -> None:
    checked_in = json.loads((ROOT / "vtt_module/module.json").read_text(encoding="utf-8"))
    assert checked_in["version"] == __version__
    assert checked_in["flags"]["protocol"] == protocol.PROTOCOL_VERSION
    constants = (ROOT / "vtt_module/scripts/constants.js").read_text(encoding="utf-8")
    assert f"export const PROTOCOL = {protocol.PROTOCOL_VERSION};" in constants
    notes = (ROOT / "docs/protocol.md").read_text(encoding="utf-8")
    assert f"Protocol version: **{protocol.PROTOCOL_VERSION}**" in notes


def test_module_command_writes_the_release_manifest_and_zip(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    base = "https://example.invalid/releases/v1"
    with pytest.raises(SystemExit) as done:
        main(["module", "--out", str(tmp_path), "--url", base])
    assert done.value.code == 0
    manifest = json.loads((tmp_path / "module.json").read_text(encoding="utf-8"))
    assert manifest["manifest"] == f"{base}/module.json"
    assert manifest["download"] == f"{base}/initiative-sidecar.zip"
    archive = zipfile.ZipFile(tmp_path / "initiative-sidecar.zip")
    assert sorted(archive.namelist()) == module_files()
    assert json.loads(archive.read("module.json")) == manifest
    check_as_foundry_reads(manifest, set(archive.namelist()))


def test_a_zip_per_host_compresses_the_module_once_so_hosts_cannot_stall_the_loop() -> None:
    """/module/ answers anyone (Foundry's server fetches it by whatever name it knows): a
    request naming yet another Host must not make the event loop deflate the module again."""
    from adapter.server import module_files as mf

    mf._files_zip.cache_clear()
    mf.module_zip.cache_clear()
    bases = [f"http://host{i}.example:8765/module" for i in range(12)]
    zips = [mf.module_zip(base) for base in bases]
    assert mf._files_zip.cache_info().misses == 1 and mf.module_zip.cache_info().misses == 12
    for base, body in zip(bases, zips, strict=True):
        archive = zipfile.ZipFile(io.BytesIO(body))
        assert archive.testzip() is None and sorted(archive.namelist()) == module_files()
        assert json.loads(archive.read("module.json"))["download"] == f"{base}/{ZIP_NAME}"
