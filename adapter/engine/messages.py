"""The inbound messages the engine takes: frozen, typed, one class per hook kind and per intent.

The pipeline (:func:`adapter.pipeline.decode`, the one module that knows the wire) checks a
payload against its JSON Schema and then converts it, once, into one of these classes with
``msgspec.convert``; the schemas stay the contract and the source of every refusal's message
and path, so a class here is never stricter or looser than its schema about what it keeps.
The engine and the rulesets read typed fields (``intent.amount``, ``hook.roll.roll.total``)
and dispatch on the class (:class:`adapter.engine.ruleset.Ruleset`: ``on``, ``intents``).

Hooks: :class:`Hook` and a subclass per Foundry hook (``tag`` = the wire's ``hook``);
``combat`` stays Foundry's ``Combat#toObject()`` as sent (read by :mod:`.snapshot` and
:mod:`.adopt`, which compare its raw fields to see at once that nothing changed), ``current``
and ``roll`` are typed; the roll is a :class:`Roll` whose ``terms`` are Foundry's term objects
as sent (read by :mod:`.dice`).

Intents: a subclass of :class:`Intent` per ``schemas/intents/<kind>.schema.json``, its ``args``
flattened into fields next to the envelope's (``seq``, ``user``, ``world_time``,
``combat_id``, ``combatant_id``); ``kind`` names it on the wire. Where the intent schema
requires ``combat_id``/``combatant_id``, the class types them ``str``.

A refusal names the field it is about (:class:`adapter.errors.SidecarError` ``field``: a
field of the message, or a tuple of names and indexes into it); the pipeline turns it into the
JSON pointer of the wire (an intent's argument ``amount`` is ``/args/amount``).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import msgspec

# ---------------------------------------------------------------- parts


class Roll(msgspec.Struct, frozen=True, kw_only=True):
    """Foundry's ``Roll#toJSON()``: the total as Foundry counted it and the dice terms."""

    total: int | float
    #: Foundry's term objects as sent (Die, OperatorTerm, PoolTerm...), walked by dice.py
    terms: tuple[Any, ...]
    formula: str | None = None


class RollReport(msgspec.Struct, frozen=True, kw_only=True):
    """An ``initiativeRoll``'s roll: who rolled (a combatant or a CombatantGroup) and what."""

    roll: Roll
    combatant_id: str | None = None
    group_id: str | None = None
    #: the reroll offer (BI-2) this roll answers
    reroll_of: str | None = None


class Current(msgspec.Struct, frozen=True, kw_only=True):
    """Foundry's ``Combat#current``: the engine reads only whose turn it is."""

    combatant_id: str | None = msgspec.field(name="combatantId")


# ---------------------------------------------------------------- envelopes


class Message(msgspec.Struct, frozen=True, kw_only=True):
    seq: int
    user: str
    world_time: float


class Hook(Message, frozen=True, kw_only=True, tag_field="hook"):
    """A forwarded Foundry hook; ``combat``/``current`` are the state after the change."""

    combat: dict[str, Any]
    current: Current
    changed: Any = None
    options: Any = None
    roll: RollReport | None = None


class Intent(Message, frozen=True, kw_only=True):
    """A declaration by a player or the GM (its arguments are the subclass's own fields)."""

    kind: ClassVar[str]
    combat_id: str | None = None
    combatant_id: str | None = None


# ---------------------------------------------------------------- hooks


class CombatStart(Hook, frozen=True, kw_only=True, tag="combatStart"):
    pass


class CombatRound(Hook, frozen=True, kw_only=True, tag="combatRound"):
    pass


class CombatTurn(Hook, frozen=True, kw_only=True, tag="combatTurn"):
    pass


class CombatTurnChange(Hook, frozen=True, kw_only=True, tag="combatTurnChange"):
    pass


class CreateCombat(Hook, frozen=True, kw_only=True, tag="createCombat"):
    pass


class UpdateCombat(Hook, frozen=True, kw_only=True, tag="updateCombat"):
    pass


class DeleteCombat(Hook, frozen=True, kw_only=True, tag="deleteCombat"):
    pass


class CreateCombatant(Hook, frozen=True, kw_only=True, tag="createCombatant"):
    pass


class UpdateCombatant(Hook, frozen=True, kw_only=True, tag="updateCombatant"):
    pass


class DeleteCombatant(Hook, frozen=True, kw_only=True, tag="deleteCombatant"):
    pass


class InitiativeRoll(Hook, frozen=True, kw_only=True, tag="initiativeRoll"):
    roll: RollReport


HOOKS: tuple[type[Hook], ...] = (
    CombatStart, CombatRound, CombatTurn, CombatTurnChange, CreateCombat, UpdateCombat,
    DeleteCombat, CreateCombatant, UpdateCombatant, DeleteCombatant, InitiativeRoll,
)


# ---------------------------------------------------------------- intents


class SetInitiative(Intent, frozen=True, kw_only=True):
    """GM only: a manual edit of a combatant's initiative (the engine's own, every ruleset)."""

    kind: ClassVar[str] = "initiative.set"
    combat_id: str
    combatant_id: str
    value: float


class UseReaction(Intent, frozen=True, kw_only=True):
    kind: ClassVar[str] = "reaction.use"
    combat_id: str
    combatant_id: str
    reason: str | None = None


class Dash(Intent, frozen=True, kw_only=True):
    kind: ClassVar[str] = "dash"
    combat_id: str
    combatant_id: str
    amount: int


class Hold(Intent, frozen=True, kw_only=True):
    kind: ClassVar[str] = "hold"
    combat_id: str
    combatant_id: str
    next_round: bool = False
    #: None when not given (only a GM gives it)
    target_aware: bool | None = None


class Act(Intent, frozen=True, kw_only=True):
    """Exactly one of ``after``, ``before``, ``now`` (the schema says so)."""

    kind: ClassVar[str] = "act"
    combat_id: str
    combatant_id: str
    after: str | None = None
    before: str | None = None
    now: bool = False

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
    combat_id: str
    prompt_id: str
    accept: bool


class RerollApprove(Intent, frozen=True, kw_only=True):
    kind: ClassVar[str] = "reroll.approve"
    combat_id: str
    prompt_id: str
    approve: bool


class ReadyStart(Intent, frozen=True, kw_only=True):
    kind: ClassVar[str] = "ready.start"
    actor_id: str
    token_id: str
    owners: tuple[str, ...]
    watching: tuple[str, ...]
    sees: bool
    weapon_ready: bool


class ReadyBreak(Intent, frozen=True, kw_only=True):
    kind: ClassVar[str] = "ready.break"
    actor_id: str
    reason: str


class ReadyConfirm(Intent, frozen=True, kw_only=True):
    kind: ClassVar[str] = "ready.confirm"
    actor_id: str


class ReadiedDeclare(Intent, frozen=True, kw_only=True):
    kind: ClassVar[str] = "readied.declare"
    combat_id: str
    combatant_id: str
    mode: Literal["standard", "preemptive"]
    trigger: str
    action: str
    target_id: str | None = None


class ReadiedTrigger(Intent, frozen=True, kw_only=True):
    kind: ClassVar[str] = "readied.trigger"
    combat_id: str
    combatant_id: str
    readied_id: str


class OpposedResult(Intent, frozen=True, kw_only=True):
    kind: ClassVar[str] = "opposed.result"
    combat_id: str
    prompt_id: str
    actor_total: float
    target_total: float


INTENTS: tuple[type[Intent], ...] = (
    SetInitiative, UseReaction, Dash, Hold, Act, RerollDecide, RerollApprove, ReadyStart,
    ReadyBreak, ReadyConfirm, ReadiedDeclare, ReadiedTrigger, OpposedResult,
)

#: the fields of the intent envelope; every other field of an intent is one of its ``args``
ENVELOPE = frozenset(Intent.__struct_fields__)
