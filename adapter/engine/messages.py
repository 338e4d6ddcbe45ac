"""The inbound messages the engine takes: frozen structs, one class per hook kind and per intent.

Each class is also the strict check of its JSON Schema: :mod:`adapter.protocol.inbound`
converts a payload once (``msgspec.convert``, strict) and what it returns is what the engine
reads; jsonschema runs only to phrase a refusal. tests/protocol/test_inbound_structs.py proves
each accepts exactly what its schema accepts (with :data:`Whole` and :data:`Omittable`).

``Hook.combat`` stays Foundry's ``Combat#toObject()`` as sent (:mod:`.snapshot` and
:mod:`.adopt` compare its raw fields), checked by :class:`CombatDoc`; a roll's ``terms`` stay
Foundry's term objects (read by :mod:`.dice`), checked by :class:`RollTerm`. An intent's
``args`` are fields of its class beside the envelope's; ``kind`` names it on the wire.
A refusal names a field (:class:`adapter.errors.SidecarError` ``field``); the pipeline turns it
into the wire's JSON pointer (an intent's ``amount`` is ``/args/amount``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, cast

import msgspec
from msgspec import Meta, field
from msgspec.structs import force_setattr

if TYPE_CHECKING:
    from typing import Annotated as Whole
    from typing import Optional as Omittable
else:

    class Whole:
        """``Whole[int, Meta(...)]``: JSON Schema's integer, an int or a float with no
        fraction (never a bool), within the bounds; a class that reads it as ``int`` makes a
        float one with :func:`_as_int`."""

        def __class_getitem__(cls, params: tuple[Any, Meta]) -> Any:
            meta = params[1]
            return Annotated[int, meta] | Annotated[float, Meta(ge=meta.ge, le=meta.le, multiple_of=1)]

    class Omittable:
        """``Omittable[T] = None``: a field the schema lets out (None then) but types ``T``, so
        an explicit null is refused as the schema refuses it."""

        def __class_getitem__(cls, kind: Any) -> Any:
            return kind


Id = Annotated[str, Meta(min_length=1, max_length=128)]
Ids = Annotated[tuple[Id, ...], Meta(max_length=500)]
Text = Annotated[str, Meta(max_length=2000)]
Name = Annotated[str, Meta(max_length=512)]
Short = Annotated[str, Meta(max_length=64)]
Key = Annotated[str, Meta(max_length=128)]
Number = int | float
Integer = Whole[int, Meta()]
Count = Whole[int, Meta(ge=0)]
Seq = Whole[int, Meta(ge=1, le=2**53 - 1)]
Object = dict[str, Any]


def _as_int(struct: msgspec.Struct, *names: str) -> None:
    """A :data:`Whole` field read as ``int``: ``2.0`` becomes ``2``."""
    for name in names:
        value = getattr(struct, name)
        if type(value) is float:
            force_setattr(struct, name, int(value))


class Open(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """An object the schema constrains whose unknown fields pass, as the schema lets them."""


class Closed(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, gc=False):
    """An object with ``additionalProperties: false`` (itself: the empty object)."""


# ---------------------------------------------------------------- what is checked, kept raw


class CombatantDoc(Open, frozen=True, kw_only=True):
    """A combatant of ``Combat#toObject()``, extended by the module."""

    _id: Id
    name: Name | None = None
    owners: Omittable[Ids] = None
    is_npc: Omittable[bool] = None
    is_defeated: Omittable[bool] = None
    hidden: Omittable[bool] = None
    defeated: Omittable[bool] = None
    group: Id | None = None
    initiative: Number | None = None
    actorId: Key | None = None  # noqa: N815
    tokenId: Key | None = None  # noqa: N815
    stats: Omittable[Annotated[Object, Meta(max_length=100)]] = None
    roundJoined: Whole[int, Meta(ge=0, le=1_000_000)] | None = None  # noqa: N815


class GroupDoc(Open, frozen=True, kw_only=True):
    _id: Id
    name: Name | None = None
    initiative: Number | None = None


class CombatDoc(Open, frozen=True, kw_only=True):
    """``Combat#toObject()`` as the schema constrains it."""

    _id: Id
    round: Whole[int, Meta(ge=0, le=1_000_000)]
    turn: Integer | None = None
    combatants: Annotated[tuple[CombatantDoc, ...], Meta(max_length=500)]
    groups: Omittable[Annotated[tuple[GroupDoc, ...], Meta(max_length=500)]] = None
    active: Omittable[bool] = None
    skip_defeated: Omittable[bool] = None
    turn_order: Omittable[Ids] = None


def check_combat(combat: Object) -> None:
    """Raise ``msgspec.ValidationError`` where ``combat`` is not what the schema allows."""
    msgspec.convert(combat, CombatDoc)


class DieResult(Open, frozen=True, kw_only=True):
    result: Number
    active: Omittable[bool] = None
    count: Omittable[Number] = None
    success: Omittable[bool] = None
    failure: Omittable[bool] = None
    discarded: Omittable[bool] = None
    rerolled: Omittable[bool] = None
    exploded: Omittable[bool] = None


class RollTerm(Open, frozen=True, kw_only=True):
    """One of Foundry's roll terms (Die, OperatorTerm, PoolTerm...)."""

    cls: Omittable[Short] = field(name="class", default=None)
    number: Number | None = None
    faces: Integer | None = None
    modifiers: Omittable[Annotated[tuple[Short, ...], Meta(max_length=50)]] = None
    results: Omittable[Annotated[tuple[DieResult, ...], Meta(max_length=1000)]] = None


_TERMS = tuple[RollTerm, ...]


# ---------------------------------------------------------------- parts


class Roll(Open, frozen=True, kw_only=True):
    """Foundry's ``Roll#toJSON()``: the total as Foundry counted it and the dice terms."""

    total: Number
    #: Foundry's term objects as sent, walked by dice.py
    terms: Annotated[tuple[Any, ...], Meta(max_length=200)]
    formula: Omittable[Annotated[str, Meta(max_length=1000)]] = None
    cls: Omittable[Short] = field(name="class", default=None)
    evaluated: Omittable[bool] = None
    options: Omittable[Object] = None

    def __post_init__(self) -> None:
        msgspec.convert(self.terms, _TERMS)


class RollReport(Open, frozen=True, kw_only=True):
    """An ``initiativeRoll``'s roll: who rolled (a combatant or a CombatantGroup) and what."""

    roll: Roll
    combatant_id: Omittable[Id] = None
    group_id: Omittable[Id] = None
    #: the reroll offer (BI-2) this roll answers
    reroll_of: Omittable[Id] = None

    def __post_init__(self) -> None:
        if self.combatant_id is None and self.group_id is None:
            raise ValueError("a roll names its combatant_id or its group_id")


class Current(Open, frozen=True, kw_only=True):
    """Foundry's ``Combat#current``: the engine reads only whose turn it is."""

    round: Count | None
    turn: Integer | None = None
    combatant_id: Id | None = field(name="combatantId")
    token_id: Key | None = field(name="tokenId", default=None)


# ---------------------------------------------------------------- envelopes


class Message(msgspec.Struct, frozen=True, kw_only=True):
    seq: Seq
    user: Id
    world_time: Annotated[float, Meta(ge=-1e15, le=1e15)]

    def __post_init__(self) -> None:
        _as_int(self, "seq")


class Hook(Message, frozen=True, kw_only=True, tag_field="hook"):
    """A forwarded Foundry hook; ``combat``/``current`` are the state after the change."""

    combat: Object
    current: Current
    changed: Object | None = None
    options: Object | None = None
    roll: Omittable[RollReport] = None

    def __post_init__(self) -> None:
        super().__post_init__()
        check_combat(self.combat)


class Intent(Message, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A declaration by a player or the GM (its arguments are the subclass's own fields)."""

    kind: ClassVar[str]
    combat_id: Omittable[Id] = None
    combatant_id: Omittable[Id] = None


class CombatantIntent(Intent, frozen=True, kw_only=True):
    """An intent about one combatant of one combat: the envelope names both."""

    combat_id: Id
    combatant_id: Id


# ---------------------------------------------------------------- hooks


def _hook(name: str) -> type[Hook]:
    """A hook that carries only the envelope; its tag is its name in camelCase."""
    tag = name[0].lower() + name[1:]
    hook = msgspec.defstruct(name, (), bases=(Hook,), tag=tag, frozen=True, kw_only=True)
    return cast("type[Hook]", hook)


CombatStart = _hook("CombatStart")
CombatRound = _hook("CombatRound")
CombatTurn = _hook("CombatTurn")
CombatTurnChange = _hook("CombatTurnChange")
CreateCombat = _hook("CreateCombat")
UpdateCombat = _hook("UpdateCombat")
DeleteCombat = _hook("DeleteCombat")
CreateCombatant = _hook("CreateCombatant")
UpdateCombatant = _hook("UpdateCombatant")
DeleteCombatant = _hook("DeleteCombatant")


class InitiativeRoll(Hook, frozen=True, kw_only=True, tag="initiativeRoll"):
    roll: RollReport


HOOKS: tuple[type[Hook], ...] = (
    CombatStart, CombatRound, CombatTurn, CombatTurnChange, CreateCombat, UpdateCombat,
    DeleteCombat, CreateCombatant, UpdateCombatant, DeleteCombatant, InitiativeRoll,
)


# ---------------------------------------------------------------- intents


class SetInitiative(CombatantIntent, frozen=True, kw_only=True):
    """GM only: a manual edit of a combatant's initiative (the engine's own, every ruleset)."""

    kind: ClassVar[str] = "initiative.set"
    value: Annotated[float, Meta(ge=-10000, le=10000)]


class UseReaction(CombatantIntent, frozen=True, kw_only=True):
    kind: ClassVar[str] = "reaction.use"
    reason: Omittable[Annotated[str, Meta(max_length=200)]] = None


class Dash(CombatantIntent, frozen=True, kw_only=True):
    kind: ClassVar[str] = "dash"
    amount: Whole[int, Meta(ge=-1000, le=1000)]

    def __post_init__(self) -> None:
        _as_int(self, "seq", "amount")


class Hold(CombatantIntent, frozen=True, kw_only=True):
    kind: ClassVar[str] = "hold"
    next_round: bool = False
    #: None when not given (only a GM gives it)
    target_aware: Omittable[bool] = None


class Act(CombatantIntent, frozen=True, kw_only=True):
    """Exactly one of ``after``, ``before``, ``now`` (true)."""

    kind: ClassVar[str] = "act"
    after: Omittable[Id] = None
    before: Omittable[Id] = None
    #: True, or None when not given
    now: Omittable[Literal[True]] = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if (self.after is not None) + (self.before is not None) + (self.now is not None) != 1:
            raise ValueError("exactly one of after, before, now")

    @property
    def point(self) -> tuple[Literal["after", "before"], str] | None:
        """Where the holder steps in: ("after" | "before", the anchor), or None for now."""
        if self.after is not None:
            return "after", self.after
        if self.before is not None:
            return "before", self.before
        return None


class RerollDecide(Intent, frozen=True, kw_only=True):
    kind: ClassVar[str] = "reroll.decide"
    combat_id: Id
    prompt_id: Id
    accept: bool


class RerollApprove(Intent, frozen=True, kw_only=True):
    kind: ClassVar[str] = "reroll.approve"
    combat_id: Id
    prompt_id: Id
    approve: bool


class ReadyStart(Intent, frozen=True, kw_only=True):
    kind: ClassVar[str] = "ready.start"
    actor_id: Id
    token_id: Id
    owners: Ids
    watching: Ids
    sees: bool
    weapon_ready: bool


class ReadyBreak(Intent, frozen=True, kw_only=True):
    kind: ClassVar[str] = "ready.break"
    actor_id: Id
    reason: Annotated[str, Meta(max_length=200)]


class ReadyConfirm(Intent, frozen=True, kw_only=True):
    kind: ClassVar[str] = "ready.confirm"
    actor_id: Id


class ReadiedDeclare(CombatantIntent, frozen=True, kw_only=True):
    kind: ClassVar[str] = "readied.declare"
    mode: Literal["standard", "preemptive"]
    trigger: Text
    action: Text
    target_id: Omittable[Id] = None


class ReadiedTrigger(CombatantIntent, frozen=True, kw_only=True):
    kind: ClassVar[str] = "readied.trigger"
    readied_id: Id


class OpposedResult(Intent, frozen=True, kw_only=True):
    kind: ClassVar[str] = "opposed.result"
    combat_id: Id
    prompt_id: Id
    actor_total: Annotated[float, Meta(ge=-1000, le=1000)]
    target_total: Annotated[float, Meta(ge=-1000, le=1000)]


INTENTS: tuple[type[Intent], ...] = (
    SetInitiative, UseReaction, Dash, Hold, Act, RerollDecide, RerollApprove, ReadyStart,
    ReadyBreak, ReadyConfirm, ReadiedDeclare, ReadiedTrigger, OpposedResult,
)

#: the fields of the intent envelope; every other field of an intent is one of its ``args``
ENVELOPE = frozenset(Intent.__struct_fields__)
