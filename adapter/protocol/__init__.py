"""The wire protocol v1: the schemas, and every message checked both ways.

An inbound message is decoded once into its strict struct (:func:`decode`, :mod:`.inbound`),
after :func:`check_shape` refused what JSON forbids or would make checking costly. A refusal
is an :class:`~adapter.errors.InvalidMessage` phrased by jsonschema, imported on the first
refusal (docs/protocol.md): its message and the JSON pointer of the deepest failing field.
An outbound message that fails its schema is a bug: :func:`check_outbound` raises
``AssertionError`` and the tests make sure none does.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from contextlib import suppress
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import orjson

from ..errors import InternalError, InvalidMessage
from . import inbound, outbound, wirejson

if TYPE_CHECKING:  # imported when first needed (a refusal, check_schemas): see the docstring
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError
    from referencing import Registry

PROTOCOL_VERSION = 1
BASE_URI = "https://initiative-sidecar.invalid/schemas/v1/"
MAX_DEPTH = 32



def schema_dir() -> Path:
    """``schemas/`` of the source tree, or the copy installed inside the package."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent.parent / "schemas", here / "schemas"):
        if (candidate / "common.schema.json").exists():
            return candidate
    raise FileNotFoundError("the schemas/ folder was not found beside the adapter package")


def load_schemas(folder: Path | None = None) -> dict[str, dict[str, Any]]:
    """Every ``*.schema.json`` below the folder, by its path relative to it (no suffix)."""
    folder = folder or schema_dir()
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.rglob("*.schema.json")):
        name = path.relative_to(folder).as_posix().removesuffix(".schema.json")
        found[name] = json.loads(path.read_text(encoding="utf-8"))
    return found


@lru_cache(maxsize=1)
def registry() -> Registry:
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    resources = [
        (schema["$id"], Resource.from_contents(schema, default_specification=DRAFT202012))
        for schema in load_schemas().values()
    ]
    return Registry().with_resources(resources)


@cache
def validator(name: str) -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    schema = registry().contents(BASE_URI + f"{name}.schema.json")
    return Draft202012Validator(schema, registry=registry())


def check_schemas() -> list[str]:
    """Problems with the schemas themselves (each against its metaschema, ``$id`` present)."""
    from jsonschema import Draft202012Validator

    problems = []
    for name, schema in load_schemas().items():
        if schema.get("$id") != BASE_URI + f"{name}.schema.json":
            problems.append(f"{name}: $id should be {BASE_URI}{name}.schema.json")
        for error in Draft202012Validator(Draft202012Validator.META_SCHEMA).iter_errors(schema):
            problems.append(f"{name}: {error.message} at {pointer(error.absolute_path)}")
        resolver = registry().resolver(base_uri=schema.get("$id", ""))
        for ref in _refs(schema):
            try:
                resolver.lookup(ref)
            except Exception as error:  # referencing raises several kinds: report them all
                problems.append(f"{name}: $ref {ref!r} does not resolve ({type(error).__name__})")
    return problems


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


# ---------------------------------------------------------------- inbound


def check_shape(
    instance: Any, max_depth: int = MAX_DEPTH, encoded: bytes | None = None, from_wire: bool = False,
    shallow_text: bool | None = None,
) -> None:
    """Refuse what no message may hold, naming where: NaN/Infinity, values JSON has no type
    for, text with a lone UTF-16 surrogate, nesting deeper than ``max_depth``.
    ``encoded``: orjson's text of ``instance``, if the caller has it. ``from_wire``:
    ``instance`` is what :func:`.wirejson.loads` read (a non-finite number is a
    :class:`.wirejson.NonFinite`, which orjson refuses): ``encoded`` then proves all but the
    depth, read from the text; ``shallow_text``: :func:`shallow` of ``encoded``, if known."""
    if from_wire and encoded is not None:
        if shallow_text is None or max_depth != MAX_DEPTH:
            shallow_text = shallow(encoded, max_depth)
        if shallow_text:
            return
    if _plain(instance, max_depth):
        try:  # orjson writes it (no surrogates, 64-bit integers, nesting within 254): nothing to name
            if encoded is None:
                orjson.dumps(instance)
            return
        except TypeError:  # orjson.JSONEncodeError among them
            pass
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(instance, ())]
    while stack:
        value, path = stack.pop()
        if len(path) > max_depth:
            raise InvalidMessage(
                f"the message is nested deeper than {max_depth} levels", path=pointer(path)
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise InvalidMessage(f"{value} is not a JSON number", path=pointer(path))
        if isinstance(value, dict):
            for key in value:
                if not isinstance(key, str) or _has_surrogate(key):
                    raise InvalidMessage(f"the key {printable(key)!r} is not text: {LONE_SURROGATE}",
                                         path=pointer(path + (key,)))
            stack.extend((v, path + (k,)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, path + (i,)) for i, v in enumerate(value))
        elif isinstance(value, str):
            if _has_surrogate(value):
                raise InvalidMessage(f"the text is not text: {LONE_SURROGATE}", path=pointer(path))
        elif type(value) is int and not INT_RANGE[0] <= value <= INT_RANGE[1]:
            raise InvalidMessage(f"the integer {_abbreviated(value)} is beyond the 64-bit range a message may hold",
                                 path=pointer(path))
        elif isinstance(value, wirejson.Unreadable):
            raise InvalidMessage(f"{value.what} is not a value a message may hold", path=pointer(path))
        elif not (value is None or isinstance(value, (int, float))):
            # e.g. bytes of a binary attachment: not JSON, cannot be stored
            raise InvalidMessage(f"a {type(value).__name__} is not a JSON value", path=pointer(path))


#: the integers a message may hold: what orjson writes and the store reads back (JavaScript's
#: ``JSON.stringify(1e20)`` prints a 21-digit integer, which lands outside it)
INT_RANGE = (-(2**63), 2**64 - 1)


def _abbreviated(value: int) -> str:
    text = str(value)
    return text if len(text) <= 24 else f"{text[:10]}...({len(text)} digits)"


LONE_SURROGATE = "it holds a lone UTF-16 surrogate (half of a character, e.g. a name cut inside an emoji)"
_SURROGATE = re.compile("[\ud800-\udfff]")


def _has_surrogate(text: str) -> bool:
    return not text.isascii() and _SURROGATE.search(text) is not None


def printable(text: str) -> str:
    """``text`` with each lone surrogate written as its ``\\uXXXX`` escape (storable, sendable)."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def storable(value: Any, max_depth: int = MAX_DEPTH) -> Any:
    """A copy of a refused message the store can always write: lone surrogates as ``\\uXXXX``
    text, values JSON has no type for as ``<what>``, what lies deeper than ``max_depth`` as
    one string."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int]] = [(value, root, 0, 0)]
    while stack:
        item, parent, key, depth = stack.pop()
        if isinstance(item, (dict, list)) and depth > max_depth:
            parent[key] = f"<nested deeper than {max_depth} levels>"
        elif isinstance(item, dict):
            copy: dict[str, Any] = {}
            parent[key] = copy
            for k, v in item.items():
                name = printable(k) if isinstance(k, str) else str(k)
                copy[name] = None
                stack.append((v, copy, name, depth + 1))
        elif isinstance(item, list):
            parent[key] = elements = [None] * len(item)
            stack.extend((v, elements, i, depth + 1) for i, v in enumerate(item))
        elif isinstance(item, str):
            parent[key] = printable(item)
        elif item is None or isinstance(item, (int, float)):
            parent[key] = item
        else:
            parent[key] = repr(item) if isinstance(item, wirejson.Unreadable) else f"<{type(item).__name__}>"
    return root[0]


#: the bytes of orjson's text that nesting is read from: brackets, and what delimits strings
_DROP = bytes(c for c in range(256) if c not in b'[]{}"\\')
_BRACKETS = bytes.maketrans(b"[]{}", b"()()")
_STRING = re.compile(rb'"[^"]*"')


def shallow(text: bytes, max_depth: int = MAX_DEPTH) -> bool:
    """True if no array or object in orjson's ``text`` lies more than ``max_depth`` deep;
    False: walk the message. With every byte but brackets and quotes dropped and the strings
    cut out, the nesting is left, and each pass deleting every ``()`` peels one level (empty
    containers count: this may send to the walk what the walk accepts, never the reverse)."""
    nesting = text.translate(_BRACKETS, _DROP)
    if b"\\" in nesting:
        return False
    if b'"' in nesting:
        nesting = nesting.replace(b'""', b"")  # strings with no bracket (two strings side by side merge: harmless)
        if b'"' in nesting:
            nesting = _STRING.sub(b"", nesting)
    for _ in range(max_depth):
        if not nesting:
            return True
        nesting = nesting.replace(b"()", b"")
    return not nesting


def _plain(value: Any, depth: int) -> bool:
    """The fast path of :func:`check_shape`: True if nothing in ``value`` is wrong (False:
    the slow walk finds and names the problem). Exact type tests: it runs on every message."""
    stack: list[tuple[Any, int]] = [([value], depth + 1)]
    pop, push = stack.pop, stack.append
    while stack:
        container, room = pop()
        items = container.values() if type(container) is dict else container
        if not items:
            continue
        if room <= 0:
            return False
        for item in items:
            kind = type(item)
            if kind is str or kind is int or kind is bool or item is None:
                continue
            if kind is float:
                if item - item != 0.0:  # NaN or an infinity
                    return False
            elif kind is dict or kind is list:
                push((item, room - 1))
            else:
                return False  # anything else: the slow walk decides and names it
    return True


def decode(
    name: str, instance: Any, encoded: bytes | None = None, from_wire: bool = False,
    combatants_known: bool = False, shallow_text: bool | None = None,
) -> Any:
    """The inbound message ``name`` (a key of :data:`.inbound.CONVERT`) as its strict struct,
    converted once, or :class:`InvalidMessage` with jsonschema's message and deepest failing
    path. ``encoded``, ``from_wire``, ``shallow_text``: see :func:`check_shape`;
    ``combatants_known``: see :func:`.inbound.hook`."""
    check_shape(instance, encoded=encoded, from_wire=from_wire, shallow_text=shallow_text)
    try:
        return inbound.CONVERT[name](instance, combatants_known)
    except ValueError as failure:  # msgspec.ValidationError, or a check of the struct
        refused = str(failure)
    if (error := deepest(name, instance)) is not None:
        raise InvalidMessage(describe(error), path=pointer(error.absolute_path))
    # a bug (tests/protocol/test_inbound_structs.py forbids it)
    raise InternalError(f"the {name} struct refused what its schema accepts: {refused}")


def validate(name: str, instance: Any, **options: Any) -> None:
    """:func:`decode`, for a caller that keeps the payload."""
    decode(name, instance, **options)


def deepest(name: str, instance: Any) -> ValidationError | None:
    """The most specific error of ``instance`` against the schema ``name`` (None: it passes):
    descend into ``anyOf``/``if`` branches, keep the deepest."""
    leaves = _leaves(validator(name).iter_errors(instance))
    return max(leaves, key=lambda e: (len(e.absolute_path), e.validator != "required"), default=None)


def _leaves(errors: Iterable[ValidationError]) -> Iterator[ValidationError]:
    for error in errors:
        if error.context:
            yield from _leaves(error.context)
        else:
            yield error


def describe(error: ValidationError) -> str:
    where = pointer(error.absolute_path) or "the message"
    if error.validator == "required":
        return f"{where} is missing a field: {error.message}"
    if error.validator == "not":  # jsonschema's text quotes the whole instance: a session's token
        return f"{where} must not hold {', '.join(error.validator_value.get('required', ['this']))}"
    return f"{where}: {error.message}"


def pointer(path: Iterable[Any]) -> str:
    """A JSON pointer (RFC 6901) for a path of keys and indexes."""
    parts = [printable(str(p)).replace("~", "~0").replace("/", "~1") for p in path]
    return "".join("/" + p for p in parts)


# ---------------------------------------------------------------- outbound


def check_outbound(name: str, instance: Any) -> None:
    """An outbound message that fails its schema (its struct, :mod:`.outbound`) is a bug in
    the sidecar: ``AssertionError``, phrased by jsonschema."""
    with suppress(msgspec.ValidationError, TypeError):  # TypeError: a value no JSON type holds
        outbound.CHECKS[name](instance)
        return
    if (error := deepest(name, instance)) is not None:
        raise AssertionError(f"outbound {name} fails its schema: {describe(error)}")
