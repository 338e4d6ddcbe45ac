"""Configuration, read in one place: command-line flags, then ``INITIATIVE_SIDECAR_*``
environment variables, then defaults; a bad value fails loudly at start. The token made and
stored when none is given: docs/reliability.md, "Secrets and exposure".
"""

from __future__ import annotations

import importlib.util
import ipaddress
import json
import os
import re
import secrets
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .errors import ConfigError as ConfigError  # the start-up errors: adapter/errors.py

ENV_PREFIX = "INITIATIVE_SIDECAR_"
DEFAULT_HOST = "127.0.0.1"
#: application size limit for one message, bytes of JSON (below socket.io's buffer limit); the
#: pipeline's default too (this module imports no pipeline)
DEFAULT_MAX_BYTES = 256 * 1024


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


REMOTE_DANGER = (
    "anyone who can reach this machine on that address can connect, try tokens, and see and "
    "change the game; the token and the game travel in clear text without TLS"
)


@dataclass(frozen=True)
class Config:
    """The settings of one serving sidecar, as :func:`from_args` reads them: a setting with a
    ``serve`` flag of its name is what that flag's help says (:func:`adapter.cli.parser`)."""

    host: str = DEFAULT_HOST
    allow_remote: bool = False
    port: int = 8765
    db: Path = Path("initiative-sidecar.db")
    token: str = ""
    #: per-world tokens (``--tokens-file``); other worlds use ``token``
    world_tokens: Mapping[str, str] = field(default_factory=dict)
    #: empty: any origin, the token guards it (docs/reliability.md, "Origins")
    origins: tuple[str, ...] = ()
    base_path: str = ""
    public_origins: tuple[str, ...] = ()
    max_bytes: int = DEFAULT_MAX_BYTES
    #: socket.io's own buffer limit; past it the transport drops the connection
    buffer_bytes: int = 1024 * 1024
    snapshot_every: int = 200
    rate: float = 2000.0
    burst: int = 4000
    #: wrong tokens (from one address, or for one token) within ``throttle_seconds`` before
    #: attempts are checked one at a time, one per ``throttle_spacing`` seconds
    auth_failures: int = 5
    throttle_seconds: float = 30.0
    throttle_spacing: float = 0.5
    #: check what the sidecar sends against its schemas (no flag: INITIATIVE_SIDECAR_CHECK_OUTBOUND)
    check_outbound: bool = True
    connect_timeout: float = 5.0
    pending_per_address: int = 64
    max_outgoing_bytes: int = 8 * 1024 * 1024
    ws_compression: bool = False
    log_level: str = "INFO"
    metrics_from: tuple[str, ...] = ()
    store: str = ""
    redis: str = ""

    def token_for(self, world: str) -> str:
        return self.world_tokens.get(world, self.token)


#: each field's default, for a setting given neither as a flag nor in the environment
_DEFAULTS = {f.name: f.default for f in fields(Config)}


def _bool(raw: str) -> bool:
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected true or false")


def from_args(args: Any, *, announce: Callable[[str], None] = print) -> Config:
    """Build the config from parsed ``serve`` flags (attributes may be None), else the
    environment variable of each flag's name (``INITIATIVE_SIDECAR_MAX_BYTES``), else
    :class:`Config`'s default."""

    def get(name: str, cast: Callable[[str], Any] = str, default: Any = None) -> Any:
        if (flag := getattr(args, name, None)) is not None:
            return flag
        env = ENV_PREFIX + name.upper()
        if (raw := os.environ.get(env)) is None:
            return _DEFAULTS.get(name) if default is None else default
        try:
            return cast(raw)
        except ValueError as error:
            raise ConfigError(f"{env}={raw!r} is not valid: {error}") from error

    def positive(name: str, cast: Callable[[str], Any], what: str) -> Any:
        value = get(name, cast)
        if value <= 0:
            raise ConfigError(f"the {what} must be positive, not {value}")
        return value

    port = get("port", int)
    if not 0 <= port <= 65535:
        raise ConfigError(f"port {port} is out of range")
    host = get("host").strip() or DEFAULT_HOST
    allow_remote = bool(get("allow_remote", _bool))
    if not is_loopback(host) and not allow_remote:
        raise ConfigError(
            f"will not listen on {host}, which is not loopback: {REMOTE_DANGER}. "
            f"Pass --allow-remote (or {ENV_PREFIX}ALLOW_REMOTE=1) to bind there anyway."
        )
    config = Config(
        host=host,
        allow_remote=allow_remote,
        port=port,
        db=Path(get("db")),
        token=get("token"),
        world_tokens=_read_tokens_file(get("tokens_file")),
        origins=_origins(get("origins", default=""), "--origins"),
        base_path=base_path(get("base_path")),
        public_origins=_origins(get("public_origin", default=""), "--public-origin"),
        max_bytes=positive("max_bytes", int, "max bytes"),
        snapshot_every=positive("snapshot_every", int, "snapshot interval"),
        rate=float(positive("rate", float, "rate")),
        burst=positive("burst", int, "burst"),
        connect_timeout=float(positive("connect_timeout", float, "connect timeout")),
        pending_per_address=positive("pending_per_address", int, "pending sockets per address"),
        max_outgoing_bytes=positive("max_outgoing_bytes", int, "outgoing buffer"),
        log_level=get("log_level").upper(),
        check_outbound=get("check_outbound", _bool),
        ws_compression=get("ws_compression", _bool),
        metrics_from=_networks(get("metrics_from", default="")),
        store=get("store"),
        redis=get("redis"),
    )
    if config.max_bytes >= config.buffer_bytes:
        raise ConfigError("max bytes must stay below socket.io's buffer limit")
    _hosted_package(config.store, "--store", ("psycopg",))
    _hosted_package(config.redis, "--redis", _redis_packages(config.redis))
    if not config.token and config.store:  # a token made here would differ in each process
        raise ConfigError("--store (hosted mode) needs --token or INITIATIVE_SIDECAR_TOKEN, the same for "
                          "every process (see docs/hosting.md)")
    if not config.token:
        config = _with_stored_token(config, announce)
    return config


def _hosted_package(value: str, flag: str, packages: tuple[str, ...]) -> None:
    """Hosted mode's packages are an extra: asked for without any one of ``packages``, say
    which install brings them, before anything starts."""
    if value and all(importlib.util.find_spec(p) is None for p in packages):
        needs = " or ".join(packages)
        raise ConfigError(f"{flag} (hosted mode) needs the {needs} package, which is not installed: "
                          "pip install 'initiative-sidecar[hosted]' (see docs/hosting.md)")


def _redis_packages(url: str) -> tuple[str, ...]:
    """The client packages python-socketio's AsyncRedisManager can use for ``url``: valkey
    for ``valkey://``/``valkeys://``, either for a ``unix://`` socket, else redis."""
    scheme = url.split("://", 1)[0].split("+", 1)[0].lower()
    if scheme in ("valkey", "valkeys"):
        return ("valkey",)
    return ("redis", "valkey") if scheme == "unix" else ("redis",)


_BASE_PATH = re.compile(r"(/[A-Za-z0-9._~-]+)+")
_ORIGIN = re.compile(r"https?://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?")


def base_path(raw: str) -> str:
    """``--base-path``: ``/initiative-sidecar`` (a trailing ``/`` dropped); "" or ``/``: the root."""
    path = raw.strip().rstrip("/")
    if not path:
        return ""
    if not _BASE_PATH.fullmatch(path) or any(part in (".", "..") for part in path.split("/")):
        raise ConfigError(f"--base-path {raw!r}: expected a path such as /initiative-sidecar "
                          "(letters, digits, . _ ~ - between slashes)")
    return path


def _origins(raw: str, flag: str) -> tuple[str, ...]:
    """Comma-separated origins, each ``scheme://host[:port]`` (a browser's ``Origin``: no path)."""
    origins = tuple(o.strip().rstrip("/") for o in raw.split(",") if o.strip())
    for origin in origins:
        if not _ORIGIN.fullmatch(origin):
            raise ConfigError(f"{flag} {origin!r}: expected an origin such as https://foundry.example.org "
                              "(scheme, host and port only, no path)")
    return origins


def _networks(raw: str) -> tuple[str, ...]:
    networks = tuple(n.strip() for n in raw.split(",") if n.strip())
    for network in networks:
        try:
            ipaddress.ip_network(network, strict=False)
        except ValueError as error:
            raise ConfigError(f"--metrics-from: {error}") from error
    return networks


def _read_tokens_file(path: str | None) -> dict[str, str]:
    if not path:
        return {}
    try:
        _refuse_open_to_others(Path(path), "tokens file")
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ConfigError(f"tokens file {path}: {error}") from error
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) and v for k, v in data.items()):
        raise ConfigError(f"tokens file {path} must be a JSON object of world id -> non-empty token")
    return data


def _refuse_open_to_others(path: Path, what: str) -> None:
    """A secrets file must be the owner's alone (no group or other bits; POSIX only)."""
    mode = stat.S_IMODE(path.stat().st_mode)
    if os.name == "posix" and mode & 0o077:
        raise ConfigError(
            f"the {what} {path} is open to others (mode {mode:04o}): whoever can read it can "
            f"connect as the GM's module. Make it private with `chmod 600 {path}`, then start again."
        )


def _with_stored_token(config: Config, announce: Callable[[str], None]) -> Config:
    path = config.db.with_name(config.db.stem + ".token")  # game.db: game.token
    if path.exists():
        _refuse_open_to_others(path, "token file")
        token = path.read_text(encoding="utf-8").strip()
        if not token:
            raise ConfigError(f"the token file {path} is empty; delete it to make a new token")
    else:
        token = secrets.token_urlsafe(32)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(token + "\n")
        announce(
            f"A new token was made and stored in {path} (readable by you only).\n"
            f"Paste it into the module settings (Initiative Sidecar > Sidecar token):\n\n    {token}\n\n"
            "It will not be shown again; read it from that file if you need it."
        )
    return Config(**{**config.__dict__, "token": token})
