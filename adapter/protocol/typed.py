"""The one run-time validator: msgspec types built from the JSON Schemas at load time.

``msgspec.convert`` checks a decoded message against a type in C. The types are not written
by hand: each schema is inlined (:func:`inline`: every ``$ref`` replaced by its target) and
translated here, keyword by keyword, so the schemas stay the one contract. jsonschema runs
only when this check refuses: to phrase the refusal (its message and JSON path are the
contract), or, for a schema this translation does not express (:class:`Unsupported`: today
only ``common``, which holds definitions and is no message), to judge.

The invariant: this check accepts exactly what jsonschema accepts, for every message that
passed the shape check (:func:`adapter.protocol.check_shape`: plain JSON, finite numbers).
tests/protocol/test_fast_validation.py proves it on instances generated from each schema
(hypothesis-jsonschema), on mutants of them, on the recordings and on the goldens. How each
keyword becomes a type:

- ``type``: ``string`` -> ``str`` (``minLength``/``maxLength``/``pattern``), ``integer`` ->
  ``int | float`` whose float is a multiple of 1 (``2.0`` is an integer to JSON Schema; a
  bool never is), ``number`` -> ``int | float``, ``boolean``, ``null``, ``array`` -> ``list``
  (``items``, ``minItems``/``maxItems``), ``object`` -> a ``Struct`` when it names
  ``properties``/``required`` (``additionalProperties: false`` forbids unknown fields;
  otherwise they pass, as the schema lets them), else ``dict`` (``minProperties``/
  ``maxProperties``); bounds, lengths and sizes become ``msgspec.Meta`` constraints;
- ``enum``/``const`` of strings -> ``Literal``; in a struct, ``const`` true/false, ``anyOf``
  of bare ``required`` lists, ``not: {required: [...]}`` and ``minProperties``/
  ``maxProperties`` (with ``additionalProperties: false``) -> checks in ``__post_init__``;
- ``anyOf`` -> a union (msgspec picks the one alternative of the value's kind, so a union
  never accepts what every alternative refuses); ``allOf`` -> its schemas merged;
- ``if``/``then``/``else`` on one property's ``const``, at the top or in ``allOf`` (the ack's
  ``ok``, the hook's ``hook``, the intent's ``kind``, the settings' ``ruleset``) -> a type
  per value of that property (the base merged with the branches that value selects) and a
  lookup of the value; a property whose schema is such a conditional (a recording line's
  ``data``) is checked by that lookup in its struct's ``__post_init__``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, Union
from urllib.parse import urldefrag, urljoin

import msgspec

#: keywords that say nothing about validity (jsonschema asserts no ``format`` by default)
_ANNOTATIONS = frozenset({"description", "title", "$comment", "default", "examples", "format", "deprecated"})
_OBJECT_KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties", "anyOf", "maxProperties",
                              "minProperties", "not"})
_CONDITION = frozenset({"if", "then", "else"})

Check = Callable[[Any], bool]


class Unsupported(ValueError):
    """A schema keyword (or combination) this translation does not turn into a type."""


class Unresolvable(ValueError):
    """A ``$ref`` that points nowhere (or into a cycle): jsonschema alone judges that schema."""


def inline(schema: Any, base: str, documents: Mapping[str, Any], seen: tuple[str, ...] = ()) -> Any:
    """``schema`` (found in the document at ``base``) with every ``$ref`` replaced by its
    target; where a ``$ref`` has sibling keywords (which 2020-12 applies together), the
    target goes into ``allOf`` beside them."""
    if isinstance(schema, list):
        return [inline(item, base, documents, seen) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {
        key: inline(value, base, documents, seen)
        for key, value in schema.items()
        if key not in ("$id", "$schema", "$ref", "$defs")
    }
    ref = schema.get("$ref")
    if not isinstance(ref, str):
        return out
    target_uri = urljoin(base, ref)
    if target_uri in seen:
        raise Unresolvable(f"recursive $ref {target_uri}")
    document_uri, fragment = urldefrag(target_uri)
    try:
        target: Any = documents[document_uri]
        for part in (p.replace("~1", "/").replace("~0", "~") for p in fragment.split("/")[1:]):
            target = target[int(part)] if isinstance(target, list) else target[part]
    except (KeyError, IndexError, ValueError, TypeError) as error:
        raise Unresolvable(f"$ref {ref} (from {base}) does not resolve") from error
    resolved = inline(target, document_uri, documents, seen + (target_uri,))
    if schema.keys() <= _ANNOTATIONS | {"$ref"}:
        return resolved
    out["allOf"] = [resolved, *out.get("allOf", [])]
    return out


def compile_typed(schemas: Mapping[str, Mapping[str, Any]], base_uri: str, name: str) -> Check | None:
    """The typed check of one schema, or None if it uses what this translation does not know."""
    documents = {base_uri + f"{n}.schema.json": s for n, s in schemas.items()}
    uri = base_uri + f"{name}.schema.json"
    if uri not in documents:
        return None
    try:
        return to_check(inline(documents[uri], uri, documents), name)
    except (Unsupported, Unresolvable):
        return None


def to_check(schema: Any, where: str) -> Check:
    """The check of an inlined schema: a conditional's lookup, else one type's conversion."""
    if isinstance(schema, dict) and (_CONDITION & schema.keys() or "allOf" in schema):
        base, conditions = _split(schema, where)
        if conditions:
            return _conditional(base, conditions, where)
        schema = base
    return _plain(to_type(schema, where))


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


#: one ``if``/``then``/``else``: the property it tests, its const, whether ``if`` requires the
#: property, and the two branches
_Condition = tuple[str, Any, bool, Mapping[str, Any], Mapping[str, Any]]


def _split(schema: Mapping[str, Any], where: str) -> tuple[dict[str, Any], list[_Condition]]:
    """The schema without its conditionals (``allOf``'s other parts merged in), and them;
    a ``then``/``else`` without ``if`` is dropped, as 2020-12 ignores it."""
    base = {k: v for k, v in schema.items() if k not in _CONDITION and k != "allOf"}
    parts = [{k: schema[k] for k in _CONDITION if k in schema}] if "if" in schema else []
    conditions: list[_Condition] = []
    for part in [*parts, *schema.get("allOf", [])]:
        if isinstance(part, dict) and "if" in part and part.keys() - _ANNOTATIONS <= _CONDITION:
            conditions.append(_condition(part, where))
        elif isinstance(part, dict) and not (_CONDITION | {"allOf"}) & part.keys():
            base = _merged(base, part, where)
        else:
            raise Unsupported(f"{where}: an allOf part other than a schema or one if/then/else")
    return base, conditions


def _condition(part: Mapping[str, Any], where: str) -> _Condition:
    test = part["if"]
    if not isinstance(test, dict) or set(test) - {"properties", "required"} or len(test.get("properties", {})) != 1:
        raise Unsupported(f"{where}: an if other than one property's const")
    ((prop, const),) = test["properties"].items()
    if not isinstance(const, dict) or set(const) != {"const"} or not isinstance(const["const"], (str, bool)):
        raise Unsupported(f"{where}: an if other than one property's const")
    if test.get("required", [prop]) != [prop]:
        raise Unsupported(f"{where}: an if requiring another property")
    return prop, const["const"], "required" in test, part.get("then", {}), part.get("else", {})


def _conditional(base: dict[str, Any], conditions: list[_Condition], where: str) -> Check:
    """A type per value the conditions test (the base merged with the branches it selects),
    the base with every ``else`` for any other value, and the lookup jsonschema's choice is."""
    prop = conditions[0][0]
    if any(c[0] != prop for c in conditions) or base.get("type") != "object":
        raise Unsupported(f"{where}: conditions on several properties, or not of an object")

    def selected(holds: Callable[[_Condition], bool]) -> Check:
        schema: dict[str, Any] = base
        for condition in conditions:
            schema = _merged(schema, condition[3] if holds(condition) else condition[4], where)
        return to_check(schema, where)

    def when(value: Any) -> Callable[[_Condition], bool]:
        return lambda condition: type(condition[1]) is type(value) and condition[1] == value

    by_value = {(type(c[1]), c[1]): selected(when(c[1])) for c in conditions}
    other = selected(lambda d: False)
    absent = None if prop in base.get("required", []) else selected(lambda d: not d[2])

    def check(instance: Any) -> bool:
        if type(instance) is not dict:
            return False
        if prop not in instance:
            return absent is not None and absent(instance)
        value = instance[prop]
        chosen = by_value.get((type(value), value)) if type(value) in (str, bool) else None
        return (chosen or other)(instance)

    return check


def _merged(base: Mapping[str, Any], branch: Any, where: str) -> dict[str, Any]:
    """Both schemas at once (what ``allOf: [base, branch]`` means)."""
    if branch is True or branch == {}:
        return dict(base)
    if not isinstance(branch, dict):
        raise Unsupported(f"{where}: schema {branch!r} in allOf")
    out = dict(base)
    for key, value in branch.items():
        if key in _ANNOTATIONS:
            continue
        if key not in out or out[key] == value:
            out[key] = value
        elif key == "required":
            out["required"] = [*out["required"], *(r for r in value if r not in out["required"])]
        elif key == "properties":
            props = dict(out["properties"])
            for name, sub in value.items():
                props[name] = _merged_sub(props[name], sub, f"{where}/{name}") if name in props else sub
            out["properties"] = props
        elif key == "allOf":
            out["allOf"] = [*out["allOf"], *value]
        else:
            raise Unsupported(f"{where}: {key} in both the base and a branch")
    return out


def _merged_sub(first: Any, second: Any, where: str) -> Any:
    if first is True or first == {}:
        return second
    if not isinstance(first, dict):
        raise Unsupported(f"{where}: schema {first!r} in allOf")
    return _merged(first, second, where)


def to_type(schema: Any, where: str = "") -> Any:
    """The msgspec type of an inlined schema (no ``$ref`` left), or :class:`Unsupported`."""
    if schema is True or schema == {}:
        return Any
    if not isinstance(schema, dict):
        raise Unsupported(f"{where}: schema {schema!r}")
    if "allOf" in schema:
        base, conditions = _split(schema, where)
        if conditions:
            raise Unsupported(f"{where}: a conditional that is not a property")
        return to_type(base, where)
    keys = set(schema) - _ANNOTATIONS
    if "enum" in keys or "const" in keys:
        return _literal(schema, keys, where)
    if "anyOf" in keys and keys <= {"anyOf"}:
        return _union([to_type(alt, f"{where}/anyOf") for alt in schema["anyOf"]], where)
    kinds = schema.get("type")
    if kinds is None:
        raise Unsupported(f"{where}: keywords {sorted(keys)} without a type")  # a non-object would pass
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
        _only(keys, {"type", "minLength", "maxLength", "pattern"}, where)
        meta = _meta(min_length=schema.get("minLength"), max_length=schema.get("maxLength"),
                     pattern=schema.get("pattern"))
        return Annotated[str, msgspec.Meta(**meta)] if meta else str
    if kind in ("integer", "number"):
        _only(keys, {"type", "minimum", "maximum"}, where)
        low, high = schema.get("minimum"), schema.get("maximum")
        whole = Annotated[int, msgspec.Meta(**_meta(ge=None if low is None else math.ceil(low),
                                                    le=None if high is None else math.floor(high)))]
        step = 1 if kind == "integer" else None  # JSON Schema's integer: any number with no fraction
        return Union[whole, Annotated[float, msgspec.Meta(**_meta(ge=low, le=high, multiple_of=step))]]  # noqa: UP007
    if kind == "array":
        _only(keys, {"type", "items", "minItems", "maxItems"}, where)
        item = to_type(schema.get("items", True), f"{where}/items")
        meta = _meta(min_length=schema.get("minItems"), max_length=schema.get("maxItems"))
        return Annotated[list[item], msgspec.Meta(**meta)] if meta else list[item]  # type: ignore[valid-type]
    if kind == "object":
        _only(keys, _OBJECT_KEYWORDS, where)
        if keys & {"properties", "required", "anyOf", "not"} or schema.get("additionalProperties") is False:
            return _struct(schema, where)
        values = schema.get("additionalProperties", True)
        if values is not True:
            raise Unsupported(f"{where}: additionalProperties as a schema")
        meta = _meta(min_length=schema.get("minProperties"), max_length=schema.get("maxProperties"))
        return Annotated[dict[str, Any], msgspec.Meta(**meta)] if meta else dict[str, Any]
    raise Unsupported(f"{where}: type {kind!r}")


def _only(keys: set[str], allowed: set[str] | frozenset[str], where: str) -> None:
    extra = keys - allowed - {"type", "enum", "const"}
    if extra:
        raise Unsupported(f"{where}: keywords {sorted(extra)}")


def _struct(schema: Mapping[str, Any], where: str) -> Any:
    """A Struct with a field per property (renamed: wire names need not be Python names)."""
    closed = schema.get("additionalProperties") is False
    if not isinstance(schema.get("additionalProperties", True), bool):
        raise Unsupported(f"{where}: additionalProperties as a schema")
    if schema.keys() & {"minProperties", "maxProperties"} and not closed:
        raise Unsupported(f"{where}: a count of properties that may be unknown ones")
    properties: Mapping[str, Any] = schema.get("properties", {})
    required: list[str] = list(schema.get("required", []))
    forbidden = _forbidden(schema.get("not"), properties, closed, where)
    names = list(properties) + [r for r in dict.fromkeys([*required, *forbidden]) if r not in properties]
    attr = {name: f"f{i}" for i, name in enumerate(names)}
    fields: list[tuple[str, Any, Any]] = []
    rules: list[Callable[[Any], str | None]] = []  # each: what is wrong with the struct, or None
    for name in names:
        sub = properties.get(name, True)
        if isinstance(sub, dict) and set(sub) - _ANNOTATIONS == {"const"} and isinstance(sub["const"], bool):
            kind: Any = bool
            rules.append(_is(attr[name], sub["const"]))
        elif isinstance(sub, dict) and (_CONDITION & sub.keys() or "allOf" in sub) and _split(sub, where)[1]:
            kind = Any  # a conditional: its lookup runs on the value
            rules.append(_passes(attr[name], to_check(sub, f"{where}/{name}")))
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
    if groups:
        rules.append(_one_of_groups(groups))
    if forbidden:
        rules.append(_not_all([attr[n] for n in forbidden]))
    if schema.keys() & {"minProperties", "maxProperties"}:
        rules.append(_counted(list(attr.values()), schema.get("minProperties", 0), schema.get("maxProperties")))
    namespace = {"__post_init__": _post_init(rules)} if rules else {}
    return msgspec.defstruct(
        "Typed", fields, kw_only=True, gc=False, forbid_unknown_fields=closed, namespace=namespace,
    )


def _forbidden(negated: Any, properties: Mapping[str, Any], closed: bool, where: str) -> list[str]:
    """``not: {required: [...]}``: the names that may not all be present."""
    if negated is None:
        return []
    if not isinstance(negated, dict) or set(negated) != {"required"} or not negated["required"]:
        raise Unsupported(f"{where}: a not other than one list of required properties")
    names: list[str] = negated["required"]
    if closed and not set(names) <= set(properties):
        raise Unsupported(f"{where}: not required of a property additionalProperties forbids")
    return names


_UNSET = msgspec.UNSET


def _is(name: str, wanted: bool) -> Callable[[Any], str | None]:
    def rule(self: Any) -> str | None:
        value = getattr(self, name)
        return f"must be {str(wanted).lower()}" if value is not _UNSET and value is not wanted else None
    return rule


def _passes(name: str, check: Check) -> Callable[[Any], str | None]:
    def rule(self: Any) -> str | None:
        value = getattr(self, name)
        return "fails its conditional schema" if value is not _UNSET and not check(value) else None
    return rule


def _one_of_groups(groups: list[list[str]]) -> Callable[[Any], str | None]:
    def rule(self: Any) -> str | None:
        if any(all(getattr(self, n) is not _UNSET for n in group) for group in groups):
            return None
        return "none of the required alternatives"
    return rule


def _not_all(names: list[str]) -> Callable[[Any], str | None]:
    def rule(self: Any) -> str | None:
        return "holds a forbidden property" if all(getattr(self, n) is not _UNSET for n in names) else None
    return rule


def _counted(names: list[str], low: int, high: int | None) -> Callable[[Any], str | None]:
    def rule(self: Any) -> str | None:
        count = sum(getattr(self, n) is not _UNSET for n in names)
        return None if low <= count and (high is None or count <= high) else "a wrong number of properties"
    return rule


def _post_init(rules: list[Callable[[Any], str | None]]) -> Callable[[Any], None]:
    def post_init(self: Any) -> None:
        for rule in rules:
            wrong = rule(self)
            if wrong is not None:
                raise ValueError(wrong)

    return post_init
