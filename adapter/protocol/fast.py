"""A compiled "is it valid?" check for the hot path (fastjsonschema), jsonschema kept for errors.

fastjsonschema implements drafts 4 to 7, not 2020-12, so each schema is rewritten at load time
into a self-contained draft-07 equivalent: every ``$ref`` is inlined (our schemas have no
cycles; a cycle raises), and where a ``$ref`` has sibling keywords (which 2020-12 applies
together and draft-07 would ignore) the referenced schema goes into ``allOf`` beside them.
``$id``/``$schema`` are dropped inside, so no resolution scope is involved. Formats are not
asserted and defaults are never written into the instance, as with jsonschema.

The invariant that keeps behaviour identical: this check only ever says "valid" or "look
closer". A message it accepts, jsonschema accepts too (tests/protocol compares them); a
message it refuses goes through jsonschema, which alone decides and gives the precise path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urldefrag, urljoin

import fastjsonschema

DRAFT07 = "http://json-schema.org/draft-07/schema#"
_ANNOTATIONS = frozenset({"$ref", "description", "title", "$comment"})

Check = Callable[[Any], Any]


class Unresolvable(ValueError):
    """A ``$ref`` that points nowhere (or into a cycle): that message gets no fast check."""


def inline(
    schema: Any, base: str, documents: Mapping[str, Any], seen: tuple[str, ...] = ()
) -> Any:
    """``schema`` (found in the document at ``base``) with every ``$ref`` replaced by its target."""
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
    if schema.keys() <= _ANNOTATIONS:
        return resolved
    out["allOf"] = [resolved, *out.get("allOf", [])]
    return out


def compile_checks(
    schemas: Mapping[str, Mapping[str, Any]], base_uri: str, only: str | None = None
) -> dict[str, Check | None]:
    """A compiled check per schema name (``schemas`` as ``load_schemas`` gives them), or None
    for a schema with a ``$ref`` that does not resolve: jsonschema alone handles that one, so
    whatever it does with the broken reference stays exactly what happens."""
    documents = {base_uri + f"{name}.schema.json": s for name, s in schemas.items()}
    checks: dict[str, Check | None] = {}
    for name in schemas if only is None else [only] if only in schemas else []:
        uri = base_uri + f"{name}.schema.json"
        try:
            draft07 = {"$schema": DRAFT07, **inline(documents[uri], uri, documents)}
        except Unresolvable:
            checks[name] = None
            continue
        checks[name] = fastjsonschema.compile(draft07, use_default=False, use_formats=False)
    return checks


def is_valid(check: Check | None, instance: Any) -> bool:
    """True only if the compiled check accepts ``instance``; False means "ask jsonschema"."""
    if check is None:
        return False
    try:
        check(instance)
    except fastjsonschema.JsonSchemaException:
        return False
    return True
