"""Damage at the wire: the JSON text of a valid message with one spot made unreadable or
unstorable, as an attacker (or a browser cutting a string inside an emoji) would send it.

Kinds: a lone UTF-16 surrogate in a string or in a key, an integer of 401 to 6,000 digits,
nesting 33 to 990 levels deep, a binary attachment (a socket.io placeholder), and an
arbitrary JSON value (hypothesis-made, lone surrogates included) in place of a field. The
text is decoded by the sidecar's own reader (:func:`adapter.protocol.wirejson.loads`), and a
binary event is turned into what the transport guard hands on, so the pipeline sees exactly
what the server would.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from adapter.protocol import MAX_DEPTH, wirejson
from adapter.server.guard import without_attachments
from tests.reliability.mutations import Base, Draw

KINDS = ("surrogate_value", "surrogate_key", "huge_integer", "deep_nesting", "binary", "any_json")
SENTINEL = "\u0001damage\u0001"
SENTINEL_TEXT = json.dumps(SENTINEL)  # how it appears in the message's JSON text


@dataclass
class WireCase:
    kind: str
    event: str
    text: str  # the payload's JSON text
    binary: bool  # sent as a binary event (the damage is an attachment placeholder)
    path: str | None  # the JSON pointer the refusal must give (None: not fixed)
    seq_damaged: bool

    def payload(self) -> Any:
        """What the server's handler receives."""
        data = wirejson.loads(self.text)
        return without_attachments(data) if self.binary else data


def spots(doc: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every value's path (containers and leaves), the root excluded."""
    found = []
    if isinstance(doc, dict):
        for key, value in doc.items():
            found.append(path + (key,))
            found.extend(spots(value, path + (key,)))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            found.append(path + (i,))
            found.extend(spots(value, path + (i,)))
    return found


def pointer(path: tuple[Any, ...]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def put(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        doc = doc[key]
    doc[path[-1]] = value


def get(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def wire_case(draw: Draw, kind: str, base: Base, seq: int, any_json: Any = None) -> WireCase:
    event, template = draw.choice(base.templates)
    payload = copy.deepcopy(template)
    payload["seq"] = seq
    places = spots(payload)
    binary = False
    if kind == "surrogate_value":
        strings = [p for p in places if isinstance(get(payload, p), str)]
        path = draw.choice(strings)
        code = draw.integer(0xD800, 0xDFFF)
        escape = f"\\u{code:04x}"
        value = get(payload, path)
        put(payload, path, value + SENTINEL if code < 0xDC00 else SENTINEL + value)  # never a pair
        text = json.dumps(payload).replace(SENTINEL_TEXT[1:-1], escape)
        return WireCase(kind, event, text, False, pointer(path), False)
    if kind == "surrogate_key":
        objects = [()] + [p for p in places if isinstance(get(payload, p), dict)]
        path = draw.choice(objects)
        code = draw.integer(0xD800, 0xDFFF)
        get(payload, path)[SENTINEL] = 1
        text = json.dumps(payload).replace(SENTINEL_TEXT[1:-1], f"\\u{code:04x}")
        return WireCase(kind, event, text, False, pointer(path) + f"/\\u{code:04x}", False)
    path = draw.choice(places)
    seq_damaged = path == ("seq",)
    if kind == "any_json":
        put(payload, path, any_json)
        return WireCase(kind, event, json.dumps(payload), False, None, seq_damaged)
    put(payload, path, SENTINEL)
    if kind == "huge_integer":
        digits = "-" * draw.integer(0, 1) + str(draw.integer(1, 9)) + "7" * draw.integer(400, 6000)
        text = json.dumps(payload).replace(SENTINEL_TEXT, digits)
        where = pointer(path)
    elif kind == "deep_nesting":
        levels = draw.integer(max(1, MAX_DEPTH + 1 - len(path)), 990)
        text = json.dumps(payload).replace(SENTINEL_TEXT, "[" * levels + "0" + "]" * levels)
        where = pointer((path + (0,) * levels)[: MAX_DEPTH + 1])
    else:  # binary: the value becomes attachment 0 of a binary event
        binary = True
        text = json.dumps(payload).replace(SENTINEL_TEXT, '{"_placeholder":true,"num":0}')
        where = pointer(path)
    return WireCase(kind, event, text, binary, "/seq" if seq_damaged else where, seq_damaged)
