"""The fastest "is it valid?" check: msgspec types built from the JSON Schemas at load time.

``msgspec.convert`` checks a decoded message against a type in C, several times faster than
the compiled draft-07 check (:mod:`.fast`) for the hot messages (a hook, an ack). The types
are not written by hand: each schema is inlined (:func:`.fast.inline`) and translated here,
keyword by keyword, so the schemas stay the one contract. A schema using a keyword this
translation does not know gets no typed check (the compiled one is used instead).

The invariant is the one of :mod:`.fast`: a message this check accepts, jsonschema accepts
too (tests/protocol/test_fast_validation.py compares them on recordings, goldens and
mutants); where the types are stricter than the schema (``1.0`` for an integer, NaN for a
bounded number), the message is only judged by the slower checks, which decide. How each
keyword becomes a type:

- ``type``: ``string`` -> ``str``, ``integer`` -> ``int`` (never a bool), ``number`` -> ``int |
  float``, ``boolean``, ``null``, ``array`` -> ``list`` (``items``, ``minItems``/``maxItems``),
  ``object`` -> a ``Struct`` when it names ``properties``/``required`` (``additionalProperties:
  false`` forbids unknown fields; otherwise they pass, as the schema lets them), else ``dict``;
  bounds, lengths and sizes become ``msgspec.Meta`` constraints;
- ``enum``/``const`` of strings -> ``Literal``; ``const`` true/false and ``anyOf`` of bare
  ``required`` lists -> checks in the struct's ``__post_init__``;
- ``anyOf`` -> a union (msgspec picks the one alternative of the value's kind, so a union
  never accepts what every alternative refuses);
- a top-level ``if``/``then``/``else`` on one property's ``const`` (the ack's ``ok``, the
  hook's ``hook``) -> two types and a test of that property.

Plain JSON only: a message holding a tuple, bytes or another Python type is judged by the
slower checks (the inbound shape check refuses such values first; an outbound message is
only encoded once it passed, see :mod:`adapter.protocol.encoded`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, Union

import msgspec

from .fast import Unresolvable, inline

#: keywords that say nothing about validity (jsonschema asserts no ``format`` by default)
_ANNOTATIONS = frozenset({"description", "title", "$comment", "default", "examples", "format", "deprecated"})
_OBJECT_KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties", "anyOf", "maxProperties"})

Check = Callable[[Any], bool]


class Unsupported(ValueError):
    """A schema keyword (or combination) this translation does not turn into a type."""


def compile_typed(schemas: Mapping[str, Mapping[str, Any]], base_uri: str, name: str) -> Check | None:
    """The typed check of one schema, or None if it uses what :func:`to_type` does not know."""
    documents = {base_uri + f"{n}.schema.json": s for n, s in schemas.items()}
    uri = base_uri + f"{name}.schema.json"
    if uri not in documents:
        return None
    try:
        schema = inline(documents[uri], uri, documents)
        return _conditional(schema) if "if" in schema else _plain(to_type(schema, name))
    except (Unsupported, Unresolvable):
        return None


def _plain(kind: Any) -> Check:
    try:  # msgspec refuses some unions only when it first uses the type
        msgspec.convert(None, kind)
    except msgspec.ValidationError:
        pass
    except TypeError as error:
        raise Unsupported(f"msgspec cannot use the type: {error}") from error
    convert, invalid = msgspec.convert, msgspec.ValidationError

    def check(instance: Any) -> bool:
        try:
            convert(instance, kind)
        except invalid:
            return False
        return True

    return check


def _conditional(schema: Mapping[str, Any]) -> Check:
    """``if: {properties: {P: {const: C}}}`` (``required: [P]`` optional), ``then``, ``else``:
    the base schema merged with each branch, and the branch chosen as jsonschema would."""
    condition = schema["if"]
    if not isinstance(condition, dict) or set(condition) - {"properties", "required"}:
        raise Unsupported("an if other than one property's const")
    tests = condition.get("properties", {})
    if len(tests) != 1:
        raise Unsupported("an if other than one property's const")
    (prop, test), = tests.items()
    if not isinstance(test, dict) or set(test) != {"const"} or condition.get("required", [prop]) != [prop]:
        raise Unsupported("an if other than one property's const")
    wanted = test["const"]
    needs = "required" in condition
    base = {k: v for k, v in schema.items() if k not in ("if", "then", "else")}
    then_check = _plain(to_type(_merged(base, schema.get("then", {})), "then"))
    else_check = _plain(to_type(_merged(base, schema.get("else", {})), "else"))

    def check(instance: Any) -> bool:
        if type(instance) is not dict:
            return False
        if prop in instance:
            value = instance[prop]
            holds = type(value) is type(wanted) and value == wanted
        else:
            holds = not needs
        return then_check(instance) if holds else else_check(instance)

    return check


def _merged(base: Mapping[str, Any], branch: Mapping[str, Any]) -> dict[str, Any]:
    """Both schemas at once (what ``allOf: [base, branch]`` means), for object schemas."""
    out = dict(base)
    for key, value in branch.items():
        if key == "required":
            out["required"] = [*out.get("required", []), *(r for r in value if r not in out.get("required", []))]
        elif key == "properties":
            props = dict(out.get("properties", {}))
            for name, sub in value.items():
                if name in props and props[name] != sub:
                    raise Unsupported(f"property {name} constrained twice")
                props[name] = sub
            out["properties"] = props
        elif key in out and out[key] != value:
            raise Unsupported(f"{key} in both the base and a branch")
        else:
            out[key] = value
    return out


def to_type(schema: Any, where: str = "") -> Any:
    """The msgspec type of an inlined schema (no ``$ref`` left), or :class:`Unsupported`."""
    if schema is True or schema == {}:
        return Any
    if not isinstance(schema, dict):
        raise Unsupported(f"{where}: schema {schema!r}")
    keys = set(schema) - _ANNOTATIONS
    if "enum" in keys or "const" in keys:
        return _literal(schema, keys, where)
    if "anyOf" in keys and keys <= {"anyOf"}:
        return _union([to_type(alt, f"{where}/anyOf") for alt in schema["anyOf"]], where)
    kinds = schema.get("type")
    if kinds is None:
        if keys & {"properties", "required"}:
            kinds = "object"  # stricter than the schema (a non-object would pass it): fine
        else:
            raise Unsupported(f"{where}: keywords {sorted(keys)} without a type")
    names = kinds if isinstance(kinds, list) else [kinds]
    return _union([_of_type(str(k), schema, keys, where) for k in names], where)


def _union(types: list[Any], where: str) -> Any:
    if not types:
        raise Unsupported(f"{where}: an empty union")
    return types[0] if len(types) == 1 else Union[tuple(types)]  # noqa: UP007


def _literal(schema: Mapping[str, Any], keys: set[str], where: str) -> Any:
    values = schema["enum"] if "enum" in schema else [schema["const"]]
    if keys - {"enum", "const", "type"} or not all(isinstance(v, str) for v in values):
        raise Unsupported(f"{where}: an enum or const other than strings")
    if "type" in schema and schema["type"] != "string":
        raise Unsupported(f"{where}: an enum of strings typed {schema['type']!r}")
    return Literal[tuple(values)]


def _meta(**bounds: Any) -> dict[str, Any]:
    return {k: v for k, v in bounds.items() if v is not None}


def _of_type(kind: str, schema: Mapping[str, Any], keys: set[str], where: str) -> Any:
    if kind == "null":
        return None
    if kind == "boolean":
        return bool
    if kind == "string":
        _only(keys, {"type", "minLength", "maxLength"}, where)
        meta = _meta(min_length=schema.get("minLength"), max_length=schema.get("maxLength"))
        return Annotated[str, msgspec.Meta(**meta)] if meta else str
    if kind in ("integer", "number"):
        _only(keys, {"type", "minimum", "maximum"}, where)
        low, high = schema.get("minimum"), schema.get("maximum")
        whole = Annotated[int, msgspec.Meta(**_meta(ge=None if low is None else math.ceil(low),
                                                    le=None if high is None else math.floor(high)))]
        if kind == "integer":
            return whole
        return Union[whole, Annotated[float, msgspec.Meta(**_meta(ge=low, le=high))]]  # noqa: UP007
    if kind == "array":
        _only(keys, {"type", "items", "minItems", "maxItems"}, where)
        item = to_type(schema.get("items", True), f"{where}/items")
        meta = _meta(min_length=schema.get("minItems"), max_length=schema.get("maxItems"))
        return Annotated[list[item], msgspec.Meta(**meta)] if meta else list[item]  # type: ignore[valid-type]
    if kind == "object":
        _only(keys, _OBJECT_KEYWORDS, where)
        if keys & {"properties", "required", "anyOf"} or schema.get("additionalProperties") is False:
            return _struct(schema, where)
        values = schema.get("additionalProperties", True)
        if not isinstance(values, bool):
            raise Unsupported(f"{where}: additionalProperties as a schema")
        meta = _meta(max_length=schema.get("maxProperties"))
        return Annotated[dict[str, Any], msgspec.Meta(**meta)] if meta else dict[str, Any]
    raise Unsupported(f"{where}: type {kind!r}")


def _only(keys: set[str], allowed: set[str] | frozenset[str], where: str) -> None:
    extra = keys - allowed - {"type", "enum", "const"}
    if extra:
        raise Unsupported(f"{where}: keywords {sorted(extra)}")


def _struct(schema: Mapping[str, Any], where: str) -> Any:
    """A Struct with a field per property (renamed: wire names need not be Python names)."""
    if "maxProperties" in schema or not isinstance(schema.get("additionalProperties", True), bool):
        raise Unsupported(f"{where}: maxProperties or additionalProperties beside properties")
    properties: Mapping[str, Any] = schema.get("properties", {})
    required: list[str] = list(schema.get("required", []))
    names = list(properties) + [r for r in required if r not in properties]
    attr = {name: f"f{i}" for i, name in enumerate(names)}
    fields: list[tuple[str, Any, Any]] = []
    truths: list[tuple[str, bool]] = []  # fields whose const is true or false
    for name in names:
        sub = properties.get(name, True)
        if isinstance(sub, dict) and set(sub) - _ANNOTATIONS == {"const"} and isinstance(sub["const"], bool):
            kind: Any = bool
            truths.append((attr[name], sub["const"]))
        else:
            kind = to_type(sub, f"{where}/{name}")
        if name in required:
            fields.append((attr[name], kind, msgspec.field(name=name)))
        else:
            fields.append((attr[name], Union[kind, msgspec.UnsetType],  # noqa: UP007
                           msgspec.field(name=name, default=msgspec.UNSET)))
    for alt in schema.get("anyOf", []):
        if not isinstance(alt, dict) or set(alt) != {"required"} or not set(alt["required"]) <= set(attr):
            raise Unsupported(f"{where}: anyOf other than lists of required properties")
    groups = [[attr[n] for n in alt["required"]] for alt in schema.get("anyOf", [])]
    namespace = {"__post_init__": _post_init(truths, groups)} if truths or groups else {}
    return msgspec.defstruct(
        "Typed", fields, kw_only=True, gc=False, forbid_unknown_fields=schema.get("additionalProperties") is False,
        namespace=namespace,
    )


def _post_init(truths: list[tuple[str, bool]], groups: list[list[str]]) -> Callable[[Any], None]:
    unset = msgspec.UNSET

    def post_init(self: Any) -> None:
        for name, wanted in truths:
            value = getattr(self, name)
            if value is not unset and value is not wanted:
                raise ValueError(f"must be {str(wanted).lower()}")
        if groups and not any(all(getattr(self, n) is not unset for n in group) for group in groups):
            raise ValueError("none of the required alternatives")

    return post_init
