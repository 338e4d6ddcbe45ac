"""Configuration, read in one place: command-line flags, then ``INITIATIVE_SIDECAR_*``
environment variables, then defaults. A bad value fails loudly at start.

The token: ``--token`` or ``INITIATIVE_SIDECAR_TOKEN``; without one, a token is generated on
first start, stored beside the database (``<db stem>.token``, mode 0600) and printed once,
so the GM can paste it into the module settings. It is never logged.
"""

from __future__ import annotations

import ipaddress
import json
import os
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .pipeline import DEFAULT_MAX_BYTES

ENV_PREFIX = "INITIATIVE_SIDECAR_"
DEFAULT_ORIGINS = ("http://localhost:30000", "http://127.0.0.1:30000")


class ConfigError(Exception):
    """A setting has a value the sidecar cannot start with."""


@dataclass(frozen=True)
class Config:
    host: str = "127.0.0.1"
    port: int = 8765
    db: Path = Path("initiative-sidecar.db")
    token: str = ""
    #: per-world tokens ({world id: token}); other worlds use ``token``
    world_tokens: Mapping[str, str] = field(default_factory=dict)
    origins: tuple[str, ...] = DEFAULT_ORIGINS
    max_bytes: int = DEFAULT_MAX_BYTES
    #: socket.io's own buffer limit; past it the transport drops the connection
    buffer_bytes: int = 1024 * 1024
    snapshot_every: int = 200
    #: messages per second per connection, and the burst allowed above it
    rate: float = 2000.0
    burst: int = 4000
    #: bad tokens from one address before it is throttled, and for how long (seconds)
    auth_failures: int = 5
    throttle_seconds: float = 30.0
    check_outbound: bool = True
    #: accept permessage-deflate on the websocket (off: loopback gains nothing from it)
    ws_compression: bool = False
    log_level: str = "INFO"
    #: networks besides loopback that may read /healthz and /metrics
    metrics_from: tuple[str, ...] = ()

    def token_for(self, world: str) -> str:
        return self.world_tokens.get(world, self.token)


def _env(name: str) -> str | None:
    return os.environ.get(ENV_PREFIX + name)


def _pick(flag: Any, env: str, default: Any, cast: Callable[[str], Any]) -> Any:
    if flag is not None:
        return flag
    raw = _env(env)
    if raw is None:
        return default
    try:
        return cast(raw)
    except ValueError as error:
        raise ConfigError(f"{ENV_PREFIX}{env}={raw!r} is not valid: {error}") from error


def _bool(raw: str) -> bool:
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected true or false")


def from_args(args: Any, *, announce: Callable[[str], None] = print) -> Config:
    """Build the config from parsed ``serve`` flags (attributes may be None) and the env."""
    db = Path(_pick(getattr(args, "db", None), "DB", "initiative-sidecar.db", str))
    port = int(_pick(getattr(args, "port", None), "PORT", 8765, int))
    if not 0 <= port <= 65535:
        raise ConfigError(f"port {port} is out of range")
    origins_raw = _pick(getattr(args, "origins", None), "ORIGINS", None, str)
    origins = tuple(o.strip() for o in origins_raw.split(",") if o.strip()) if origins_raw else DEFAULT_ORIGINS
    config = Config(
        host=_pick(getattr(args, "host", None), "HOST", "127.0.0.1", str),
        port=port,
        db=db,
        token=_pick(getattr(args, "token", None), "TOKEN", "", str),
        world_tokens=_read_tokens_file(_pick(getattr(args, "tokens_file", None), "TOKENS_FILE", None, str)),
        origins=origins,
        max_bytes=_positive(_pick(getattr(args, "max_bytes", None), "MAX_BYTES", DEFAULT_MAX_BYTES, int), "max bytes"),
        snapshot_every=_positive(
            _pick(getattr(args, "snapshot_every", None), "SNAPSHOT_EVERY", 200, int), "snapshot interval"
        ),
        rate=float(_positive(_pick(getattr(args, "rate", None), "RATE", 2000.0, float), "rate")),
        burst=_positive(_pick(getattr(args, "burst", None), "BURST", 4000, int), "burst"),
        log_level=_pick(getattr(args, "log_level", None), "LOG_LEVEL", "INFO", str).upper(),
        check_outbound=_pick(getattr(args, "check_outbound", None), "CHECK_OUTBOUND", True, _bool),
        ws_compression=_pick(getattr(args, "ws_compression", None), "WS_COMPRESSION", False, _bool),
        metrics_from=_networks(_pick(getattr(args, "metrics_from", None), "METRICS_FROM", "", str)),
    )
    if config.max_bytes >= config.buffer_bytes:
        raise ConfigError("max bytes must stay below socket.io's buffer limit")
    if not config.token:
        config = _with_stored_token(config, announce)
    return config


def _networks(raw: str) -> tuple[str, ...]:
    networks = tuple(n.strip() for n in raw.split(",") if n.strip())
    for network in networks:
        try:
            ipaddress.ip_network(network, strict=False)
        except ValueError as error:
            raise ConfigError(f"--metrics-from: {error}") from error
    return networks


def _positive(value: Any, what: str) -> Any:
    if value <= 0:
        raise ConfigError(f"the {what} must be positive, not {value}")
    return value


def _read_tokens_file(path: str | None) -> dict[str, str]:
    if not path:
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ConfigError(f"tokens file {path}: {error}") from error
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) and v for k, v in data.items()):
        raise ConfigError(f"tokens file {path} must be a JSON object of world id -> non-empty token")
    return data


def token_file(db: Path) -> Path:
    return db.with_name(db.stem + ".token")


def _with_stored_token(config: Config, announce: Callable[[str], None]) -> Config:
    path = token_file(config.db)
    if path.exists():
        token = path.read_text(encoding="utf-8").strip()
        if not token:
            raise ConfigError(f"the token file {path} is empty; delete it to make a new token")
        return Config(**{**config.__dict__, "token": token})
    token = secrets.token_urlsafe(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")
    announce(
        f"A new token was made and stored in {path} (readable by you only).\n"
        f"Paste it into the module settings (Initiative Sidecar > Token):\n\n    {token}\n\n"
        "It will not be shown again; read it from that file if you need it."
    )
    return Config(**{**config.__dict__, "token": token})
