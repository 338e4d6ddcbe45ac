"""Who hears of each answered message (the metrics and the status page) and of each
connection attempt (the metrics). A listener must be quick and must not raise (a failing
one is logged and the ack still goes out).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("initiative_sidecar.server")


@dataclass(frozen=True)
class Answered:
    """One message and its ack, as the listeners see it."""

    world: str | None
    event: str  # "hook", "intent", or "other" for any other event
    payload: Any
    ack: dict[str, Any]
    seconds: float


Listener = Callable[[Answered], None]
#: told "accepted", or the code a connection was refused with
ConnectListener = Callable[[str], None]


@dataclass(frozen=True)
class Observers:
    listeners: list[Listener]
    connect_listeners: list[ConnectListener]

    def tell(self, answered: Answered) -> None:
        for listener in self.listeners:
            try:
                listener(answered)
            except Exception:  # a display or a counter must never cost an ack
                log.exception("a listener failed on a %s ack", answered.event)

    def connected(self, result: str) -> None:
        for listener in self.connect_listeners:
            try:
                listener(result)
            except Exception:
                log.exception("a listener failed on a connect")

