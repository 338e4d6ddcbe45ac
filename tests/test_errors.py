"""The one error tree (adapter/errors.py): every refusal and every reason not to start is in
it, and its docstring draws each class where the code puts it."""

from __future__ import annotations

import re

import adapter.errors as errors
from adapter.config import ConfigError
from adapter.errors import StoreInUse, StoreReadOnly, StoreUnusable
from adapter.server.run import CannotListen
from adapter.store import StoreCorrupt


def test_every_reason_not_to_start_is_a_start_up_error_of_the_one_tree() -> None:
    named_elsewhere = (ConfigError, CannotListen, StoreCorrupt, StoreInUse, StoreReadOnly, StoreUnusable)
    assert all(cls.__module__ == "adapter.errors" for cls in named_elsewhere)
    assert all(issubclass(cls, errors.StartupError) for cls in named_elsewhere)
    assert not issubclass(errors.StartupError, errors.SidecarError)  # never an ack


def test_the_docstring_draws_every_class_under_its_parent() -> None:
    doc = errors.__doc__ or ""
    drawn: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for line in doc.splitlines():
        match = re.match(r"^\s{4}([│ ]*)(?:[├└]── )?([A-Z][A-Za-z]+)\b", line)
        if not match or not hasattr(errors, match.group(2)):
            continue
        depth, name = len(match.group(1)) // 4 + ("──" in line), match.group(2)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            drawn[name] = stack[-1][1]
        stack.append((depth, name))
    classes = {name: cls for name, cls in vars(errors).items()
               if isinstance(cls, type) and issubclass(cls, Exception) and cls.__module__ == "adapter.errors"}
    for name, cls in classes.items():
        if name in drawn:
            assert cls.__bases__[0].__name__ == drawn[name], f"{name} is drawn under {drawn[name]}"
    assert {"ConfigError", "StoreCorrupt", "CannotListen", "ServedElsewhere"} <= set(drawn)
