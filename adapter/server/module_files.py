"""The Foundry module as the sidecar serves it and ``make release`` writes it.

``GET /module/module.json``: the manifest, its ``manifest`` and ``download`` URLs pointing
back at the address the request came to; ``GET /module/initiative-sidecar.zip``: the module's
files (``vtt_module/`` of the checkout, or the copy a wheel installs; :data:`DEV_FILES` left
out, as in ``pyproject.toml``) with that manifest, its ``version`` and ``flags.protocol``
stamped from :mod:`adapter.version` and the protocol.
"""

from __future__ import annotations

import io
import json
import logging
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from aiohttp import web

from .. import protocol
from ..config import Config
from ..version import __version__
from .origins import public_scheme

log = logging.getLogger("initiative_sidecar.server")
MODULE_ID = "initiative-sidecar"
ZIP_NAME = f"{MODULE_ID}.zip"
#: first path parts never shipped: the node tests, npm's files, dotfiles
DEV_FILES = ("test", "node_modules", "package.json", "package-lock.json")
#: where ``make release`` says the manifest and zip are published (``--url`` changes it)
RELEASE_URL = "https://github.com/initiative-sidecar/initiative-sidecar/releases/latest/download"
#: a fixed timestamp for every zip entry, so the same files make the same bytes
ZIP_DATE = (2020, 2, 2, 0, 0, 0)


def module_dir() -> Path:
    """``vtt_module/`` of the source tree, or the copy installed inside the package."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here.parent / "vtt_module", here / "vtt_module"):
        if (candidate / "module.json").exists():
            return candidate
    raise FileNotFoundError("the vtt_module/ folder was not found beside the adapter package")


def module_files() -> list[str]:
    """The module's files to ship, as sorted POSIX paths relative to its folder: not the
    :data:`DEV_FILES`, dotfiles or ``__pycache__``."""
    folder = module_dir()
    relative = (p.relative_to(folder) for p in folder.rglob("*") if p.is_file())
    return sorted(r.as_posix() for r in relative if r.parts[0] not in DEV_FILES
                  and not any(part.startswith(".") or part == "__pycache__" for part in r.parts))


def manifest(base_url: str) -> bytes:
    """module.json's bytes with this version and protocol, its URLs under ``base_url``."""
    data: dict[str, Any] = json.loads((module_dir() / "module.json").read_text(encoding="utf-8"))
    data["version"] = __version__
    data["flags"] = {**data.get("flags", {}), "protocol": protocol.PROTOCOL_VERSION}
    base = base_url.rstrip("/")
    data["manifest"] = f"{base}/module.json"
    data["download"] = f"{base}/{ZIP_NAME}"
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()


@lru_cache(maxsize=8)
def module_zip(base_url: str) -> bytes:
    """The module's zip: its files at the root, ``module.json`` the :func:`manifest` for
    ``base_url``. The files are compressed once (:func:`_files_zip`), so a request naming yet
    another Host cannot make the event loop compress the module again."""
    import zipfile  # on the first download, not at start-up

    buffer = io.BytesIO(_files_zip())
    with zipfile.ZipFile(buffer, "a", compression=zipfile.ZIP_DEFLATED) as archive:
        info = zipfile.ZipInfo("module.json", date_time=ZIP_DATE)
        archive.writestr(info, manifest(base_url), zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


@cache
def _files_zip() -> bytes:
    """The module's files but ``module.json``, deflated, in a zip of their own."""
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in module_files():
            if name != "module.json":
                content = (module_dir() / name).read_bytes()
                archive.writestr(zipfile.ZipInfo(name, date_time=ZIP_DATE), content, zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


def release(out: Path, base_url: str) -> list[Path]:
    """``make release``: the manifest and the zip for a published release, in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "module.json", out / ZIP_NAME]
    written[0].write_bytes(manifest(base_url))
    written[1].write_bytes(module_zip(base_url))
    return written


def request_base(request: web.Request, config: Config) -> str:
    """Where this request came to: its scheme and Host, under the base path (behind a proxy,
    Host as passed and the scheme of the ``--public-origin`` it names; no ``X-Forwarded-*``)."""
    return f"{public_scheme(config, request)}://{request.host}{config.base_path}/module"


def add_module_routes(app: web.Application, config: Config) -> None:
    async def get_manifest(request: web.Request) -> web.Response:
        body = manifest(request_base(request, config))
        return web.Response(body=body, content_type="application/json")

    async def get_zip(request: web.Request) -> web.Response:
        return web.Response(
            body=module_zip(request_base(request, config)),
            content_type="application/zip",
            headers={"Content-Disposition": f'attachment; filename="{ZIP_NAME}"'},
        )

    app.router.add_get("/module/module.json", get_manifest)
    app.router.add_get(f"/module/{ZIP_NAME}", get_zip)


def version_warnings(auth: dict[str, Any]) -> dict[str, Any]:
    """What the welcome adds to warn of a module whose version is not the sidecar's (another
    protocol is refused at connect): ``{"warnings": [...]}``, logged; or nothing."""
    module = auth.get("module_version")
    if not isinstance(module, str) or module in ("", __version__):
        return {}
    message = (
        f"the module is version {module}, the sidecar {__version__}: install the module the "
        "sidecar serves at /module/module.json, or the sidecar that matches the module"
    )
    log.warning("world %s: %s", auth.get("world"), message)
    return {"warnings": [{"code": "version_mismatch", "message": message,
                          "data": {"module": module, "sidecar": __version__}}]}
