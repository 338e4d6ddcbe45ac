"""Headless replay of a recording, through exactly the validation and engine the server uses,
without a database. The recording and output formats: docs/protocol.md, "Recordings and
replay"; a later ``session`` line is a reconnection.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

import orjson
from msgspec.structs import replace

from . import protocol
from .engine import World
from .engine.plan import PlanMemo
from .errors import InvalidMessage
from .pipeline import Rulesets, open_session, process, read_seq
from .protocol.wirejson import Encoded
from .seen import Seen, loads_frame

if TYPE_CHECKING:
    from .store import LogEntry


@dataclass
class Replay:
    """A replay in progress: the world so far and the problems reported, under ``rulesets``
    (:data:`adapter.pipeline.Rulesets`; the command line gives the built-in ones)."""

    rulesets: Rulesets = field(kw_only=True)
    world: World | None = None
    problems: list[str] = field(default_factory=list)
    #: a session line was just read: the next message may skip ahead (recording resumed)
    resumed: bool = False
    #: what the world's hooks last brought, and its plans were built from (as in the server)
    seen: Seen = field(default_factory=dict)
    plans: PlanMemo = field(default_factory=PlanMemo)

    def feed(self, number: int, line: str) -> Iterator[dict[str, Any]]:
        """The output lines for one input line (none for a session or a bad line)."""
        if not line.strip():
            return
        try:
            item = loads_frame(line, self.seen, _data)  # read as the server reads a frame
        except ValueError as error:
            self.problems.append(f"line {number}: not JSON ({error}); skipped")
            return
        if not isinstance(item, dict) or "event" not in item:
            self.problems.append(f"line {number}: no \"event\"; skipped")
            return
        event, data = item["event"], item.get("data")
        if event == "session":
            try:
                protocol.validate("session", data)
            except InvalidMessage as error:
                self.problems.append(f"line {number}: bad session: {error.message}; skipped")
                return
            self.world = open_session(self.world, data or {}, rulesets=self.rulesets)
            self.resumed = True
            return
        if event not in ("hook", "intent"):
            self.problems.append(f"line {number}: unknown event {event!r}; skipped")
            return
        if self.world is None:
            self.problems.append(f"line {number}: a {event} before any session line; skipped")
            return
        seq = read_seq(data)
        if self.resumed and seq is not None and seq > self.world.last_seq + 1:
            # the recording began (or resumed) mid-session: what came before is not in it
            self.problems.append(
                f"line {number}: the recording resumes at seq {seq} after {self.world.last_seq}; "
                "the messages between were not recorded"
            )
            self.world = replace(self.world, last_seq=seq - 1)
        self.resumed = False
        result = process(self.world, event, data, rulesets=self.rulesets,
                         from_wire=True, seen=self.seen, plans=self.plans, keep_read=True)
        self.world = result.world
        if result.seen is not None:
            self.seen = result.seen
        yield {"in": number, "type": "ack", "data": result.ack}
        for name, payload in result.emits:
            yield {"in": number, "type": "emit", "event": name, "data": payload}


def _data(item: Any) -> Any:
    """The message in a recording's line."""
    return item.get("data") if type(item) is dict else None


def replay_lines(lines: Iterable[str], replay: Replay) -> Iterator[dict[str, Any]]:
    for number, line in enumerate(lines, start=1):
        yield from replay.feed(number, line)


def dumps(item: Any) -> str:
    """One output line: compact JSON, UTF-8 as is (the standard library for what orjson will
    not take); an ack encoded once (:class:`Encoded`, the last field) is written as it was."""
    data = item.get("data") if type(item) is dict else None
    if type(data) is Encoded and len(item) > 1 and next(reversed(item)) == "data":
        head = dumps({k: v for k, v in item.items() if k != "data"})
        return f'{head[:-1]},"data":{data.text}}}'
    try:
        return orjson.dumps(item).decode()
    except TypeError:
        return json.dumps(item, ensure_ascii=False, separators=(",", ":"))


def recorded(history: Iterable[LogEntry]) -> list[str]:
    """A stored history as the lines of a recording (``{"event", "data"}``, JSON Lines: what
    :func:`replay_lines` reads; ``export`` writes them, from the command line and the GM's page)."""
    return [dumps({"event": entry.kind, "data": entry.data}) + "\n" for entry in history]


def compare(outputs: Iterable[dict[str, Any]], golden: TextIO) -> str | None:
    """The first difference between the outputs and a golden file, or None."""
    expected = [json.loads(line) for line in golden if line.strip()]
    got = list(outputs)
    for index, (want, have) in enumerate(zip(expected, got), start=1):
        if want != have:
            return (
                f"output line {index} (input line {have.get('in')}) differs:\n"
                f"  expected: {dumps(want)}\n  got:      {dumps(have)}"
            )
    if len(expected) != len(got):
        return f"expected {len(expected)} output lines, got {len(got)}"
    return None
