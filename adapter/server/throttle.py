"""Slowing down token guesses without ever refusing the right token.

Failed attempts are counted per source address (:func:`adapter.server.pacing.address_key`)
and per token over a sliding window. Once either has ``failures`` wrong tokens in it, the
attempts involving it are checked one at a time, at most one per ``spacing`` seconds, in the
order they came; a right token waits its turn and is admitted (docs/reliability.md, "What
the token throttle guarantees").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable


class Throttle:
    def __init__(self, failures: int, window: float, spacing: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.failures = failures
        self.window = window
        self.spacing = spacing
        self.clock = clock
        self.failed: dict[str, list[float]] = {}
        self.next_turn: dict[str, float] = {}

    def hot(self, keys: Iterable[str]) -> list[str]:
        """The keys with ``failures`` or more wrong tokens within the window."""
        now = self.clock()
        found = []
        for key in keys:
            recent = [t for t in self.failed.get(key, ()) if now - t < self.window]
            if recent:
                self.failed[key] = recent
            else:
                self.failed.pop(key, None)
            if len(recent) >= self.failures:
                found.append(key)
        return found

    def turn(self, keys: Iterable[str]) -> float:
        """Seconds until this attempt's turn (0 if none of its keys is under attack); the turn
        is taken, so the next attempt on the same keys waits ``spacing`` longer."""
        hot = self.hot(keys)
        if not hot:
            return 0.0
        now = self.clock()
        slot = max([now, *(self.next_turn.get(k, now) for k in hot)])
        for key in hot:
            self.next_turn[key] = slot + self.spacing
        return slot - now

    def failed_attempt(self, keys: Iterable[str]) -> None:
        now = self.clock()
        for key in keys:
            self.failed.setdefault(key, []).append(now)
        if len(self.failed) > 10_000:  # forget what is out of the window
            self.failed = {k: v for k, v in self.failed.items() if v and now - v[-1] < self.window}
            self.next_turn = {k: t for k, t in self.next_turn.items() if t > now}
