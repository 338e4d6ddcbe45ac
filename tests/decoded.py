"""The engine's typed messages and values for tests that drive the engine directly (no acks;
the rulesets' tables go through the pipeline, ``tests/support/table.py``).

Each is built as the module sends it (a wire payload) and decoded, strictly, by the pipeline
(:func:`adapter.pipeline.decode`), so a test hands the engine what it gets in service; a
payload the schema refuses raises its ``InvalidMessage`` here. ``apply``
is :func:`adapter.pipeline.apply_message` (a refusal's field becomes its wire ``path``) under
the built-in rulesets unless a test gives its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from adapter.engine.messages import Hook, Intent, Roll
from adapter.engine.model import Outcome, World
from adapter.pipeline import Rulesets, apply_message, decode
from adapter.rulesets import RULESETS

__all__ = ["apply", "as_roll", "hook", "intent"]


def apply(world: World, message: Hook | Intent, rulesets: Rulesets = RULESETS, **options: Any) -> Outcome:
    return apply_message(world, message, rulesets, **options)


def hook(seq: int, user: str, world_time: float, hook: str, combat: Mapping[str, Any],
         current: Mapping[str, Any], changed: Any = None, options: Any = None,
         roll: Mapping[str, Any] | None = None) -> Hook:
    payload: dict[str, Any] = {"seq": seq, "user": user, "world_time": world_time, "hook": hook,
                               "combat": combat, "current": current}
    for name, value in (("changed", changed), ("options", options), ("roll", roll)):
        if value is not None:
            payload[name] = value
    message = decode("hook", payload)
    assert isinstance(message, Hook)
    return message


def intent(seq: int, user: str, world_time: float, kind: str, combat_id: str | None,
           combatant_id: str | None, args: Mapping[str, Any]) -> Intent:
    payload: dict[str, Any] = {"seq": seq, "user": user, "world_time": world_time, "kind": kind,
                               "args": dict(args)}
    if combat_id is not None:
        payload["combat_id"] = combat_id
    if combatant_id is not None:
        payload["combatant_id"] = combatant_id
    message = decode("intent", payload)
    assert isinstance(message, Intent)
    return message


def as_roll(data: Mapping[str, Any]) -> Roll:
    """A ``Roll#toJSON()`` payload as the engine reads it (a total of 0 when it has none)."""
    return msgspec.convert({"total": 0, **data}, Roll)
