"""The strict structs of the inbound messages, and the one conversion of each.

A hook or an intent becomes the class the engine reads (:mod:`adapter.engine.messages`); the
connect ``auth``, its ``settings``, a recording's ``session`` line, an ``export`` request and
a ``recording-line`` have their structs here. Each accepts exactly what its schema accepts
(tests/protocol/test_inbound_structs.py); :func:`adapter.protocol.decode` asks jsonschema
only to phrase a refusal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec
from msgspec import Meta
from msgspec.structs import force_setattr

from ..engine.messages import (
    ENVELOPE,
    HOOKS,
    INTENTS,
    Closed,
    Hook,
    Id,
    Ids,
    Integer,
    Intent,
    Key,
    Object,
    Open,
    Short,
)

if TYPE_CHECKING:
    from typing import Annotated as Whole
    from typing import Optional as Omittable
else:
    from ..engine.messages import Omittable, Whole

HOOK_CLASSES: Mapping[str, type[Hook]] = {str(cls.__struct_config__.tag): cls for cls in HOOKS}
INTENT_CLASSES: Mapping[str, type[Intent]] = {cls.kind: cls for cls in INTENTS}
Ruleset = Annotated[str, Meta(min_length=1, max_length=64)]


def hook(payload: Any, combatants_known: bool = False) -> Hook:
    """``combatants_known``: ``combat.combatants`` are, byte for byte, a list that passed
    before (the schema constrains it item by item and by a length it held): the rest is
    checked, and the message holds the list as sent."""
    kind = payload.get("hook") if type(payload) is dict else None
    cls = HOOK_CLASSES.get(kind) if type(kind) is str else None
    if cls is None:
        raise ValueError("not a hook")
    if not combatants_known:
        return msgspec.convert(payload, cls)
    message = msgspec.convert({**payload, "combat": {**payload["combat"], "combatants": []}}, cls)
    force_setattr(message, "combat", payload["combat"])
    return message


def intent(payload: Any, combatants_known: bool = False) -> Intent:
    """The envelope's own fields and the ``args`` as fields of the kind's class (a key the
    envelope lets through at the top never becomes an argument)."""
    kind = payload.get("kind") if type(payload) is dict else None
    cls = INTENT_CLASSES.get(kind) if type(kind) is str else None
    args = payload.get("args") if cls is not None else None
    if cls is None or type(args) is not dict or not ENVELOPE.isdisjoint(args):
        raise ValueError("not an intent")
    fields = {k: v for k, v in payload.items() if k in ENVELOPE}
    fields.update(args)
    return msgspec.convert(fields, cls)


# ---------------------------------------------------------------- settings, by ruleset

#: a path in a ruleset's ``stat_paths``, a dict keyed by the stats it reads (a closed object)
StatPath = Annotated[str, Meta(min_length=1, max_length=256, pattern=r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$")]
Faces = Whole[int, Meta(ge=2, le=100)]


class D20Settings(Closed, frozen=True, kw_only=True):
    auto_approve_rerolls: Omittable[bool] = None
    stat_paths: Omittable[dict[Literal["dex", "int", "proficient"], StatPath]] = None


class PoolSettings(Closed, frozen=True, kw_only=True):
    die_faces: Omittable[Faces] = None
    success_at: Omittable[Faces] = None
    ones_cancel: Omittable[bool] = None
    stat_paths: Omittable[dict[Literal["reaction", "wits", "size", "pool_modifier"], StatPath]] = None


class StorytellerSettings(Closed, frozen=True, kw_only=True):
    stat_paths: Omittable[dict[Literal["initiative_mod"], StatPath]] = None


#: the settings each ruleset reads (any other ruleset's are an object of anything)
RULESET_SETTINGS: Mapping[str, type[msgspec.Struct]] = {
    "foundry-core": Closed, "balanced-d20": D20Settings, "dice-pool": PoolSettings,
    "storyteller": StorytellerSettings,
}


class Settings(Open, frozen=True, kw_only=True):
    ruleset: str
    settings: Object

    def __post_init__(self) -> None:
        kind = RULESET_SETTINGS.get(self.ruleset)
        if kind is not None:
            msgspec.convert(self.settings, kind)


# ---------------------------------------------------------------- connecting, recordings


class Auth(Open, frozen=True, kw_only=True):
    token: Annotated[str, Meta(min_length=1, max_length=512)]
    world: Id
    ruleset: Ruleset
    protocol: Integer
    gm_users: Ids
    settings: Omittable[Annotated[Object, Meta(max_length=100)]] = None
    module_version: Omittable[Short] = None
    foundry_version: Omittable[Short] = None
    system: Omittable[Key] = None


class Session(Open, frozen=True, kw_only=True):
    """A recording's session line: an auth without its token."""

    world: Id
    ruleset: Ruleset
    gm_users: Ids
    settings: Omittable[Object] = None
    protocol: Omittable[Integer] = None
    module_version: Omittable[str] = None
    foundry_version: Omittable[str] = None
    system: Omittable[str] = None
    #: a session holds no token: any value is refused
    token: msgspec.UnsetType = msgspec.UNSET


class RecordingLine(Open, frozen=True, kw_only=True):
    event: Literal["session", "hook", "intent"]
    data: Object
    t: Any = None

    def __post_init__(self) -> None:
        CONVERT[self.event](self.data, False)


def _struct(kind: type[msgspec.Struct]) -> Callable[[Any, bool], Any]:
    def convert(payload: Any, known: bool = False) -> Any:
        return msgspec.convert(payload, kind)
    return convert


#: the one conversion of each inbound message, by its schema's name (``known``: a hook's
#: ``combatants_known``)
CONVERT: Mapping[str, Callable[[Any, bool], Any]] = {
    "hook": hook, "intent": intent, "auth": _struct(Auth), "settings": _struct(Settings),
    "session": _struct(Session), "export": _struct(Closed), "recording-line": _struct(RecordingLine),
}
