"""What the sidecar sends, as frozen msgspec structs: one per outbound schema in ``schemas/``.

Each accepts exactly what its schema accepts (tests/protocol/test_outbound_structs.py proves
it on generated instances, mutants and the goldens): ``additionalProperties: false`` is
``forbid_unknown_fields``, an optional property is ``UNSET`` by default, an ``integer`` is any
number with no fraction (``2.0`` is one to JSON Schema, ``true`` is not). :data:`CHECKS`
maps a schema's name to its check; the ``ok`` of an ack or an export answer picks the struct
as the schema's ``if``/``then``/``else`` picks its branch.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from ..engine.messages import Closed, Count, Id, Integer, Number, Object, Seq

Acts = Literal["full", "movement_or_action", "movement_only", "defend_only", "none", "held"]
Positive = Annotated[int, Meta(ge=1)] | Annotated[float, Meta(ge=1, multiple_of=1)]


class Reaction(Closed, frozen=True):
    available: bool
    reason: str | None


class NextEntry(Closed, frozen=True):
    combatant_id: Id
    initiative: Number | None
    acts: Acts


class PlanEntry(NextEntry, frozen=True):  # a next round's entry, and what this round shows
    reaction: Reaction | None
    tags: list[str]
    detail: Object
    rules: list[str]
    actions: list[str] | UnsetType = UNSET
    gm_actions: list[str] | UnsetType = UNSET
    formula: Annotated[str, Meta(max_length=200)] | UnsetType = UNSET


class NextRound(Closed, frozen=True):
    round: Integer
    current: Id | None
    order: list[NextEntry]


class Plan(Closed, frozen=True):
    combat_id: Id
    revision: Positive
    round: Count
    turn: Count | None
    current: Id | None
    next_round: NextRound | None
    order: list[PlanEntry]


class Prompt(Closed, frozen=True):
    prompt_id: Id
    kind: Annotated[str, Meta(min_length=1)]
    combat_id: Id | None
    combatant_id: Id | None
    to: Literal["gm"] | Annotated[list[Id], Meta(max_length=500)]
    rule: str
    data: Object


class Notice(Struct, frozen=True, gc=False):
    """Open: a notice carries its data beside ``kind`` and ``text``."""

    kind: str
    text: str


ErrorCode = Literal[
    "invalid_message", "too_large", "unknown_combat", "unknown_combatant", "not_permitted",
    "rule_violation", "unknown_prompt", "out_of_order", "rate_limited", "superseded",
    "too_many_combats", "too_many_combatants", "store_unavailable", "served_elsewhere", "internal_error",
]


class Error(Closed, frozen=True):
    code: ErrorCode
    message: str
    path: str | UnsetType = UNSET
    rule: str | UnsetType = UNSET


class Ack(Closed, frozen=True, kw_only=True):
    ok: bool
    seq: Seq
    duplicate: Literal[True] | UnsetType = UNSET
    plans: list[Plan]
    prompts: list[Prompt]
    notices: list[Notice]


class Refusal(Closed, frozen=True):
    ok: bool
    seq: Seq | None
    error: Error


class WelcomeCombat(Closed, frozen=True):
    combat_id: Id
    revision: Count


class WelcomeWarning(Closed, frozen=True):
    code: Literal["version_mismatch"]
    message: str
    data: Object | UnsetType = UNSET


class Welcome(Closed, frozen=True):
    world: Id
    ruleset: str
    last_seq: Count
    combats: list[WelcomeCombat]
    warnings: list[WelcomeWarning] | UnsetType = UNSET
    intents: list[str] | UnsetType = UNSET
    skipped_acts: list[Acts] | UnsetType = UNSET


class Superseded(Closed, frozen=True):
    world: Id
    message: str


class ConnectError(Closed, frozen=True):
    code: Literal["auth_failed", "origin_refused", "unknown_ruleset", "protocol_mismatch", "invalid_auth",
                  "throttled", "invalid_message", "served_elsewhere", "store_unavailable"]
    message: str
    path: str | UnsetType = UNSET


class Exported(Closed, frozen=True):
    ok: bool
    world: Id
    lines: Count
    recording: str


class NotExported(Closed, frozen=True, kw_only=True):
    ok: bool
    seq: None | UnsetType = UNSET
    error: Error


def _by_ok(accepted: type[Struct], refused: type[Struct]) -> Callable[[Any], Any]:
    """The schema's ``if ok is true then ... else ...``, which makes the ``ok`` of ``accepted``
    true and that of ``refused`` false: a message without ``ok`` takes the ``then`` branch
    (an ``if`` on an absent property holds), and fails its ``required``."""
    def check(instance: Any) -> Any:
        if type(instance) is dict and instance.get("ok", True) is not True:
            return msgspec.convert(instance, refused)
        return msgspec.convert(instance, accepted)
    return check


#: each outbound schema's check: the struct of the instance, or ``msgspec.ValidationError``
CHECKS: dict[str, Callable[[Any], Any]] = {
    "ack": _by_ok(Ack, Refusal),
    "plan": partial(msgspec.convert, type=Plan),
    "prompt": partial(msgspec.convert, type=Prompt),
    "welcome": partial(msgspec.convert, type=Welcome),
    "superseded": partial(msgspec.convert, type=Superseded),
    "connect-error": partial(msgspec.convert, type=ConnectError),
    "export-answer": _by_ok(Exported, NotExported),
}
