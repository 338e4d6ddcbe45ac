"""JSON for socket.io packets: orjson where it gives the same result as the standard library,
the standard library where it would not.

python-socketio takes a ``json`` module (``dumps``/``loads``). orjson is several times faster
but differs on a few inputs: it refuses ``NaN``/``Infinity`` literals, integers beyond 64 bits,
lone surrogates and non-string keys. Those fall back to :mod:`json`, so what a peer can send
and what the sidecar answers are unchanged; only the spacing and escaping of the text differ
(no spaces, UTF-8 instead of ``\\u`` escapes), which every JSON reader treats alike.
orjson would write ``NaN`` as ``null``: floats that are not finite go to :mod:`json` too.
"""

from __future__ import annotations

import json
import math
from typing import Any

import orjson
import socketio.packet


def dumps(obj: Any, **kwargs: Any) -> str:
    try:
        text = orjson.dumps(obj)
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(obj, **kwargs)
    if b"null" in text and _has_nonfinite(obj):
        return json.dumps(obj, **kwargs)
    return text.decode()


def loads(text: str | bytes, **kwargs: Any) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text, **kwargs)


def _has_nonfinite(value: Any) -> bool:
    """Whether a float that is not finite hides anywhere in ``value`` (one loop, exact types:
    it runs on every outgoing packet whose text has a ``null``)."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is float:
            if item - item != 0.0:
                return True
        elif kind is dict:
            stack.extend(item.values())
        elif kind is list or kind is tuple:
            stack.extend(item)
        elif isinstance(item, float):  # a float subclass
            if not math.isfinite(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


class Packet(socketio.packet.Packet):  # type: ignore[misc]
    """python-socketio's packet with a quicker test for binary attachments.

    The stock ``data_is_binary`` walks every value of every packet in Python, in and out. If
    orjson can serialize the data, it holds no bytes (orjson refuses them): answer at C speed;
    otherwise (bytes, or anything else orjson refuses) ask the stock walk.
    """

    @classmethod
    def data_is_binary(cls, data: Any) -> bool:
        try:
            orjson.dumps(data)
        except TypeError:
            return bool(super().data_is_binary(data))
        return False
