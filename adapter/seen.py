"""What a world's hooks last brought, and the frame reading that uses it (no I/O).

:data:`Seen` is, per combat of a world, orjson's text of the ``combat.combatants`` its last
accepted hook brought (and, for a caller that reads its own frames, the list as read); the
caller keeps it beside the world (``Worlds.seen``, ``Replay.seen``). :func:`seen_after` moves
it on, :func:`loads_frame` reads a frame holding that very text without parsing the list
again (docs/performance.md, "The frame is read without the kept list").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import orjson

from .engine.messages import DeleteCombat, Hook, Intent
from .protocol import wirejson


class Known(NamedTuple):
    """``combat.combatants`` of the last hook of a combat accepted."""

    #: orjson's text of the list
    text: bytes
    #: the list as read, for :func:`loads_frame` (``process(keep_read=True)``); never changed
    #: after (None: not kept, some 1.5 KB of Python objects per combatant)
    people: list[Any] | None


#: per combat of a world, what its last accepted hook brought
Seen = Mapping[str, Known]


def seen_after(
    seen: Seen | None, message: Hook | Intent, combat_id: str | None, people: bytes | None, payload: Any,
    keep_read: bool | int = False,
) -> Seen | None:
    """The world's :data:`Seen` once ``message`` (``payload``) is accepted (None: as it was)."""
    if combat_id is None or not isinstance(message, Hook):
        return None
    before = seen or {}
    if isinstance(message, DeleteCombat) or people is None:
        return {k: v for k, v in before.items() if k != combat_id} if combat_id in before else None
    last = before.get(combat_id)
    keep = keep_read is not False and len(people) >= int(keep_read)
    read = payload["combat"]["combatants"] if keep else None
    if last is not None and last.text == people and (last.people is read or not keep):
        return None
    # a copy holding only the text: orjson's own bytes keep the buffer they were written in
    return {**before, combat_id: Known(bytes(memoryview(people)), read)}


#: where a hook's combatant list starts in its text
_LIST_KEY = b'"combatants":'


def loads_frame(
    text: str | bytes, seen: Seen | None, payload_of: Callable[[Any], Any], *, worth: int = 2048,
) -> Any:
    """:func:`.protocol.wirejson.loads` of a frame (``payload_of`` finds the message in what
    it reads), with a kept list (of at least ``worth`` bytes) whose very text the frame holds
    at a ``"combatants":`` key put in as read: the frame is read with ``[]`` there, then with
    ``[0]``, and only if the message's ``combat.combatants`` is each in turn is that place the
    list's. Anything else is read whole."""
    if seen:
        try:
            raw = text.encode() if isinstance(text, str) else text
        except UnicodeEncodeError:  # a lone surrogate: the whole read says what it is
            return wirejson.loads(text)
        at = raw.find(_LIST_KEY)
        for _ in range(3):  # the combat's list comes before any combatant's own keys
            if at < 0:
                break
            start = at + len(_LIST_KEY)
            for known in seen.values():
                if known.people is not None and len(known.text) >= worth and raw.startswith(known.text, start):
                    item = _read_around(raw, start, start + len(known.text), known.people, payload_of)
                    if item is not None:
                        return item
            at = raw.find(_LIST_KEY, start)
    return wirejson.loads(text)


def event_payload(item: Any) -> Any:
    """The message in a socket.io event's arguments (``["hook", payload]``)."""
    return item[1] if type(item) is list and len(item) == 2 and item[0] == "hook" else None


def frame_reader(seen: Seen | None) -> Callable[[str | bytes], Any] | None:
    """How the server reads a socket.io frame of a connection whose world keeps ``seen``
    (:data:`.protocol.wirejson.FRAME_READER`), or None when nothing is kept to reuse."""
    if not seen or all(known.people is None for known in seen.values()):
        return None
    return lambda text: loads_frame(text, seen, event_payload)


def _read_around(raw: bytes, start: int, end: int, people: list[Any], payload_of: Callable[[Any], Any]) -> Any:
    head, tail = raw[:start], raw[end:]
    try:
        item = orjson.loads(head + b"[]" + tail)
        probe = orjson.loads(head + b"[0]" + tail)
    except orjson.JSONDecodeError:
        return None
    payload, other = payload_of(item), payload_of(probe)
    combat = payload.get("combat") if type(payload) is dict else None
    other_combat = other.get("combat") if type(other) is dict else None
    if type(combat) is not dict or type(other_combat) is not dict:
        return None
    if combat.get("combatants") != [] or other_combat.get("combatants") != [0]:
        return None
    combat["combatants"] = people
    return item
