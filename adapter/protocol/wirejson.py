"""JSON for socket.io packets (python-socketio's ``json``): orjson, and the standard library
where orjson would differ (``NaN``/``Infinity``, integers beyond 64 bits, lone surrogates,
non-string keys), so what a peer can send and what the sidecar answers are unchanged.

Reading never fails on a value it cannot hold: a huge integer becomes an :class:`Unreadable`
and a number JSON has no value for a :class:`NonFinite`, which
:func:`adapter.protocol.check_shape` refuses with their path; JSON nested too deep for either
parser is a ``ValueError`` (a malformed frame).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

import orjson

from ..engine.plan import finite


def dumps(obj: Any, **kwargs: Any) -> str:
    try:
        text = orjson.dumps(obj)
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(obj, **kwargs)
    if b"null" in text and not finite(obj):
        return json.dumps(obj, **kwargs)
    return text.decode()


class Encoded(dict[str, Any]):
    """A JSON object with its text, encoded once (stored, sent and replayed as it is); made
    only by :meth:`of` and :func:`encoded`, never changed after."""

    __slots__ = ("raw", "_text")
    #: orjson's bytes
    raw: bytes
    _text: str | None

    @classmethod
    def of(cls, value: dict[str, Any], text: bytes) -> Encoded:
        """``value`` and orjson's text of it, known to hold no NaN or infinity."""
        out = cls(value)
        out.raw, out._text = text, None
        return out

    @property
    def text(self) -> str:
        """The text, decoded when first asked (a hook replay stores nowhere is never decoded)."""
        if self._text is None:
            self._text = self.raw.decode()
        return self._text


def encoded(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` with its text, or ``value`` itself where :func:`dumps` would not write
    orjson's text: a NaN or an infinity (orjson writes ``null``), or what orjson refuses."""
    try:
        text = orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        return value
    if b"null" in text and orjson.loads(text) != value:  # a non-finite float became null
        return value
    return Encoded.of(value, text)


#: the most digits an integer may have (a JavaScript number never prints more than 309)
MAX_INTEGER_DIGITS = 400


class Unreadable:
    """A value read from the wire that no message may hold (a huge integer, a binary
    attachment), refused by its ``what``."""

    __slots__ = ("what",)

    def __init__(self, what: str) -> None:
        self.what = what

    def __repr__(self) -> str:
        return f"<{self.what}>"


def _parse_int(digits: str) -> int | Unreadable:
    count = len(digits) - digits.startswith("-")
    if count > MAX_INTEGER_DIGITS:
        return Unreadable(f"an integer of {count} digits")
    return int(digits)


class NonFinite(float):
    """A number read from the wire that JSON has no value for (``NaN``, ``Infinity``, beyond
    a double's range): the float it reads as, of a type orjson refuses to write."""

    __slots__ = ()


def _parse_float(text: str) -> float:
    value = float(text)
    return value if value - value == 0.0 else NonFinite(value)


def loads(text: str | bytes, **kwargs: Any) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        try:
            # orjson refuses non-finite numbers, so only this reader ever reads one; NaN,
            # Infinity, -Infinity: float() reads all three
            return json.loads(text, parse_int=_parse_int, parse_float=_parse_float,
                              parse_constant=NonFinite, **kwargs)
        except RecursionError:
            raise ValueError("JSON nested too deep to read") from None


#: how the frame being decoded is read, set by the server for a connection whose world keeps
#: combatant lists (:func:`adapter.seen.frame_reader`); None: :func:`loads`
FRAME_READER: ContextVar[Callable[[str | bytes], Any] | None] = ContextVar("frame_reader", default=None)


class _Frames:
    """This module as python-socketio's ``json``, reading through :data:`FRAME_READER`."""

    dumps = staticmethod(dumps)

    @staticmethod
    def loads(text: str | bytes, **kwargs: Any) -> Any:
        reader = FRAME_READER.get()
        return reader(text) if reader is not None else loads(text, **kwargs)


FRAMES = _Frames()
