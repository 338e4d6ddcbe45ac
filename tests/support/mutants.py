"""Instances drawn from a JSON Schema and mutants of them: the property tests holding the
message structs to their schemas (tests/protocol/test_inbound_structs.py,
test_outbound_structs.py) share these."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

from hypothesis import strategies as st
from hypothesis.internal.conjecture import utils as conjecture_utils

_END = object()


def _more(self: Any) -> bool:
    """``many.more()`` as hypothesis-jsonschema 0.23 calls it (hypothesis 6.16x dropped it)."""
    if self._depth is None:
        self.__enter__()
        self._elements = iter(self)
    return next(self._elements, _END) is not _END


if not hasattr(conjecture_utils.many, "more"):
    conjecture_utils.many.more = _more  # type: ignore[attr-defined]

from hypothesis_jsonschema import from_schema  # noqa: E402  (after the shim it needs)

__all__ = ["from_schema", "mutated", "paths", "replaced"]


def paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place in a JSON value, the whole first."""
    yield path
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        yield from paths(item, (*path, key))


def replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    """``value`` with ``new`` at ``path``, the original untouched."""
    if not path:
        return new
    copied = copy.copy(value)
    copied[path[0]] = replaced(value[path[0]], path[1:], new)
    return copied


def mutated(valid: st.SearchStrategy[Any], changes: Callable[[Any], list[Any]]) -> st.SearchStrategy[Any]:
    """A valid instance with one of ``changes`` made at one of its places."""
    @st.composite
    def build(draw: Callable[..., Any]) -> Any:
        instance = draw(valid)
        path = draw(st.sampled_from(list(paths(instance))))
        at = instance
        for part in path:
            at = at[part]
        return replaced(instance, path, draw(st.sampled_from(changes(at))))
    return build()
