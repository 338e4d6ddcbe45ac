"""One inbound message, from raw payload to ack: the path shared by the server and replay.

Read ``seq`` (duplicate? gap?), check the size, decode the message once (its strict struct,
:func:`.protocol.decode`), apply it to the engine, build the ack. No I/O: the server stores
and emits what :func:`process` returns, replay prints it. Once a ``seq`` is taken, every way
out is an ack: a refusal for the content, ``internal_error`` (the state as it was) for a
failure of the sidecar itself; a refusal is stored as :func:`.protocol.storable` copies it.
A duplicate, a gap or an unreadable ``seq`` is not stored and changes nothing.

What a message costs (docs/performance.md, "A turn change by combat size"): a hook whose
``combat.combatants`` have the very text the last accepted hook of that combat brought
(:data:`.seen.Seen`, kept by the caller) is decoded without them and the engine does not read
them again; the world's :class:`~.engine.plan.PlanMemo` rebuilds, encodes and checks only
the plan entries whose inputs changed.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

import orjson
from msgspec.structs import replace

from . import protocol
from .config import DEFAULT_MAX_BYTES
from .engine import Session, World, apply, plan_of
from .engine.messages import ENVELOPE, Hook, Intent
from .engine.model import Outcome
from .engine.plan import PlanMemo
from .engine.ruleset import SKIPPED_ACTS, Ruleset
from .errors import (
    Field,
    InternalError,
    InvalidMessage,
    OutOfOrder,
    SidecarError,
    TooLarge,
    TooManyCombatants,
    TooManyCombats,
)
from .protocol import wirejson
from .seen import Seen, seen_after

log = logging.getLogger("initiative_sidecar.pipeline")

#: the rulesets a world or a combat may name, by id, handed in by the one composition root
#: (the server's ``create_app``, the command line, the bench)
Rulesets = Mapping[str, Ruleset]

#: combats one world keeps (a hook creating one more is refused ``too_many_combats``)
MAX_COMBATS = 100
#: combatants in one combat (a hook with more is refused ``too_many_combatants``)
MAX_COMBATANTS = 200

@dataclass(frozen=True)
class Result:
    """What one message did: the world after it, its ack, what to broadcast and to store."""

    world: World
    ack: dict[str, Any]
    #: broadcasts, in order: ("plan", plan)... then ("prompt", prompt)...
    emits: tuple[tuple[str, dict[str, Any]], ...] = ()
    #: the message used up its seq and must be stored (with ``error`` if refused)
    record: bool = False
    error: dict[str, Any] | None = None
    #: the message as it is stored (for a refusal, a copy the store can always write)
    stored: Any = None
    #: what to keep as the world's :data:`.seen.Seen` from now on (None: as it was)
    seen: Seen | None = None


def encode(payload: Any) -> bytes | None:
    """The message as JSON, encoded once (for its size, its shape check and the log), or None
    for what orjson will not write."""
    try:
        return orjson.dumps(payload)
    except (TypeError, orjson.JSONEncodeError):
        return None


def encode_parts(
    payload: Any, seen: Seen | None = None,
) -> tuple[bytes | None, str | None, bytes | None, bool | None]:
    """A hook's text as :func:`encode` gives it, its combat's id, the text of its
    ``combat.combatants`` (encoded first, put in the whole as an ``orjson.Fragment``) and
    :func:`.protocol.shallow` of the text (ids and texts None where absent or unwritable).
    A list :data:`.seen.Seen` holds as read is not encoded again, nor its depth read again."""
    combat = payload.get("combat") if type(payload) is dict else None
    if type(combat) is not dict:
        return encode(payload), None, None, None
    people, combat_id = combat.get("combatants"), combat.get("_id")
    if type(people) is not list or type(combat_id) is not str:
        return encode(payload), None, None, None
    known = seen.get(combat_id) if seen is not None else None
    kept = known.text if known is not None and known.people is people else None
    try:
        body = kept if kept is not None else orjson.dumps(people)
        text = orjson.dumps({**payload, "combat": {**combat, "combatants": orjson.Fragment(body)}})
        if kept is not None:  # the kept list's depth was read: read the rest's
            rest = orjson.dumps({**payload, "combat": {**combat, "combatants": []}})
            return text, combat_id, body, protocol.shallow(rest)
    except (TypeError, orjson.JSONEncodeError):
        return encode(payload), None, None, None
    if not protocol.shallow(text):  # perhaps too deep for orjson in one piece: encode it so
        whole = encode(payload)
        return (whole, combat_id, body, False) if whole is not None else (None, None, None, None)
    return text, combat_id, body, True


def size_of(payload: Any, text: bytes | None = None) -> int:
    """Bytes of the message as JSON: exact from orjson's ``text``; for what orjson will not
    write, counted without recursion. A non-finite number read from the wire
    (:class:`~.protocol.wirejson.NonFinite`) counts as orjson counted a NaN float, as
    ``null``, so such a message past the limit is still refused ``too_large`` first."""
    if text is None:
        with suppress(TypeError, orjson.JSONEncodeError):  # a value JSON has no type for: walked below
            text = orjson.dumps(payload, default=_nonfinite_as_null)
    if text is not None:
        return len(text)
    size = 0
    stack = [payload]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            size += 1 + sum(len(str(k)) + 4 for k in item)
            stack.extend(item.values())
        elif isinstance(item, list):
            size += 1 + len(item)
            stack.extend(item)
        elif isinstance(item, (str, bytes)):
            size += len(item) + 2
        else:
            size += len(repr(item)) if isinstance(item, (int, float)) and not isinstance(item, bool) else 5
    return size


def _nonfinite_as_null(value: Any) -> None:
    if type(value) is wirejson.NonFinite:
        return None
    raise TypeError(type(value).__name__)


#: the largest seq (JavaScript's largest exact integer, the schema's maximum)
MAX_SEQ = 2**53 - 1


def read_seq(payload: Any) -> int | None:
    seq = payload.get("seq") if isinstance(payload, Mapping) else None
    if isinstance(seq, int) and not isinstance(seq, bool) and 1 <= seq <= MAX_SEQ:
        return seq
    return None


def refusal(seq: int | None, error: SidecarError) -> dict[str, Any]:
    return {"ok": False, "seq": seq, "error": error.to_wire()}


def process(
    world: World,
    event: str,
    payload: Any,
    *,
    rulesets: Rulesets,
    max_bytes: int = DEFAULT_MAX_BYTES,
    check_outbound: bool = True,
    from_wire: bool = False,
    seen: Seen | None = None,
    plans: PlanMemo | None = None,
    keep_read: bool | int = False,
) -> Result:
    """Apply one ``hook``/``intent`` payload to the world; return the ack and broadcasts.
    ``from_wire``: the payload is what :func:`.protocol.wirejson.loads` or replay read (see
    :func:`.protocol.check_shape`). ``seen``, ``plans``: the world's memos, kept by the
    caller (keep ``Result.seen``); the same acks without them. ``keep_read``: keep the lists
    read by :func:`.seen.loads_frame` in ``seen`` (a number: only texts of that many bytes)."""
    seq = read_seq(payload)
    if seq is None:
        error = InvalidMessage(f"seq must be an integer from 1 to {MAX_SEQ}", path="/seq")
        return Result(world=world, ack=refusal(None, error))
    if seq <= world.last_seq:
        return Result(world=world, ack=duplicate_ack(world, seq, payload))
    if seq > world.last_seq + 1:
        gap = OutOfOrder(f"expected seq {world.last_seq + 1}, got {seq}: resend from there", path="/seq")
        return Result(world=world, ack=refusal(seq, gap))
    try:
        text, combat_id, people, shallow = (
            encode_parts(payload, seen) if event == "hook" else (encode(payload), None, None, None))
        size = size_of(payload, text)
        if size > max_bytes:
            raise TooLarge(f"the message has {size} bytes; the limit is {max_bytes}")
        last = seen.get(str(combat_id)) if people is not None and seen is not None else None
        known = last is not None and last.text == people
        message = decode(event, payload, encoded=text, from_wire=from_wire, combatants_known=known,
                         shallow_text=shallow)
        check_limits(world, event, payload)
        plans = plans if plans is not None else PlanMemo()  # a plan's text is its memo's
        outcome = apply_message(world, message, rulesets, combatants_as_last=known and combat_id in world.combats,
                                memo=plans)
        prompts = [p.to_wire() for p in outcome.prompts]
        ack: dict[str, Any] = {
            "ok": True,
            "seq": seq,
            "plans": list(outcome.plans),
            "prompts": prompts,
            "notices": [n.to_wire() for n in outcome.notices],
        }
        ack = sent_ack(ack, plans, check_outbound)
    except SidecarError as error:
        return refused(world, seq, payload, error)
    except Exception as bug:  # a bug must not wedge the world: refuse, keep the state, go on
        log.exception("the sidecar failed on %s seq %d", event, seq)
        failure = InternalError(f"the sidecar failed on this message ({type(bug).__name__}); it was refused")
        return refused(world, seq, payload, failure)
    plans.keep_only(outcome.world.combats.keys())
    emits = tuple(("plan", p) for p in ack["plans"]) + tuple(("prompt", p) for p in prompts)
    # accepted: plain JSON with finite numbers (the shape check), stored as encoded above
    stored = wirejson.Encoded.of(payload, text) if text is not None and type(payload) is dict else payload
    return Result(world=outcome.world, ack=ack, emits=emits, record=True, stored=stored,
                  seen=seen_after(seen, message, combat_id, people, payload, keep_read))


def sent_ack(ack: dict[str, Any], plans: PlanMemo, check: bool) -> dict[str, Any]:
    """The ack as sent (these bytes: adapter/server/packet.py), after the outbound check if
    ``check``, which skips its plans' entries that passed it once, unchanged since
    (:meth:`~.engine.plan.PlanMemo.checked_view`). It is :func:`.protocol.wirejson.encoded`
    of the ack; a plan whose text the memo holds is put in as that text (``orjson.Fragment``,
    the same bytes) and goes out as it (broadcast too)."""
    if check:
        views = [plans.checked_view(p) for p in ack["plans"]]
        shown = [v if v is not None else p for v, p in zip(views, ack["plans"])]
        protocol.check_outbound("ack", {**ack, "plans": shown})
        for plan in ack["plans"]:
            plans.passed(plan)
    known = [plans.wire_text(p) for p in ack["plans"]]
    texts = [t for t in known if t is not None]
    if not texts or len(texts) < len(known):
        return wirejson.encoded(ack)
    rest = {k: v for k, v in ack.items() if k != "plans"}
    if wirejson.encoded(rest) is rest:  # a prompt or notice orjson will not write as it is
        return wirejson.encoded(ack)
    sent = [wirejson.Encoded.of(p, t) for p, t in zip(ack["plans"], texts)]
    text = orjson.dumps({**ack, "plans": [orjson.Fragment(t) for t in texts]})
    return wirejson.Encoded.of({**ack, "plans": sent}, text)


def refused(world: World, seq: int, payload: Any, error: SidecarError) -> Result:
    """A refusal that uses up ``seq``: stored with its error, nothing else changes."""
    ack = refusal(seq, error)
    return Result(world=replace(world, last_seq=seq), ack=ack, record=True, error=ack["error"],
                  stored=protocol.storable(payload))


def duplicate_ack(world: World, seq: int, payload: Any = None) -> dict[str, Any]:
    """A seq already seen: changes nothing. It carries the current plan of the combat the
    resent message names (a hook's ``combat._id``, an intent's ``combat_id`` or the combat of
    the prompt it answers) and that combat's pending prompts (and any not tied to a combat):
    what the lost ack was about, bounded by one combat whatever the world holds."""
    combat_id = touched_combat(world, payload)
    combat = world.combats.get(combat_id) if combat_id is not None else None
    return {
        "ok": True,
        "seq": seq,
        "duplicate": True,
        "plans": [plan_of(combat)] if combat is not None and combat.last_plan is not None else [],
        "prompts": [p.to_wire() for p in world.prompts.values() if p.combat_id in (combat_id, None)],
        "notices": [],
    }


def touched_combat(world: World, payload: Any) -> str | None:
    """The combat a message is about, read defensively (a duplicate is not validated again)."""
    if not isinstance(payload, Mapping):
        return None
    combat = payload.get("combat")
    if isinstance(combat, Mapping) and isinstance(combat.get("_id"), str):
        return str(combat["_id"])
    if isinstance(payload.get("combat_id"), str):
        return str(payload["combat_id"])
    args = payload.get("args")
    prompt_id = args.get("prompt_id") if isinstance(args, Mapping) else None
    prompt = world.prompts.get(prompt_id) if isinstance(prompt_id, str) else None
    return prompt.combat_id if prompt is not None else None


def check_limits(world: World, event: str, payload: Mapping[str, Any]) -> None:
    """The caps on a world's size (after the schema): combats per world, combatants per combat."""
    if event != "hook":
        return
    combat = payload["combat"]
    count = len(combat["combatants"])
    if count > MAX_COMBATANTS:
        raise TooManyCombatants(
            f"the combat has {count} combatants; the sidecar takes at most {MAX_COMBATANTS} per combat",
            path="/combat/combatants",
        )
    if payload["hook"] != "deleteCombat" and combat["_id"] not in world.combats and len(world.combats) >= MAX_COMBATS:
        raise TooManyCombats(
            f"the world already has {len(world.combats)} combats, the most the sidecar keeps; "
            "delete a finished combat in Foundry first",
            path="/combat/_id",
        )


def decode(event: str, payload: Any, **options: Any) -> Hook | Intent:
    """The engine's message of a payload, converted once (:func:`.protocol.decode`, which
    takes the ``options``), or :class:`InvalidMessage` phrased by jsonschema."""
    if event not in ("hook", "intent"):
        raise InvalidMessage(f"unknown event {event!r}: expected hook or intent", path="")
    message: Hook | Intent = protocol.decode(event, payload, **options)
    return message


def field_pointer(message: Hook | Intent, field: Field) -> str:
    """The JSON pointer of a field the engine names: an intent's argument is under ``/args``."""
    parts = (field,) if isinstance(field, str) else field
    if isinstance(message, Intent) and parts and parts[0] not in ENVELOPE and parts[0] != "kind":
        parts = ("args", *parts)
    return protocol.pointer(parts)


def apply_message(
    world: World, message: Hook | Intent, rulesets: Rulesets,
    *, combatants_as_last: bool = False, memo: PlanMemo | None = None,
) -> Outcome:
    """``apply``, a refusal's ``field`` turned into the JSON ``path`` of the wire."""
    try:
        return apply(world, message, rulesets, combatants_as_last=combatants_as_last, memo=memo)
    except SidecarError as error:
        if error.field is not None and error.path is None:
            error.path = field_pointer(message, error.field)
        raise


def open_session(world: World | None, data: Mapping[str, Any], *, rulesets: Rulesets) -> World:
    """A connection (or a recording's session line): the world with its GMs and settings."""
    session = Session(
        world=str(data["world"]),
        ruleset=str(data["ruleset"]),
        settings=dict(data.get("settings") or {}),
        gm_users=frozenset(data.get("gm_users") or ()),
    )
    base = world if world is not None else World(world=session.world)
    return apply(base, session, rulesets).world


def welcome(world: World, *, rulesets: Rulesets) -> dict[str, Any]:
    """Where to resume, and what the module needs to know of the ruleset (it keeps no copy):
    the intent kinds it accepts and the ``acts`` whose turns are skipped."""
    rs = rulesets[world.ruleset]
    return {
        "world": world.world,
        "ruleset": world.ruleset,
        "last_seq": world.last_seq,
        "combats": [{"combat_id": c.id, "revision": c.revision} for c in world.combats.values()],
        "intents": sorted(rs.intent_kinds),
        "skipped_acts": sorted(SKIPPED_ACTS),
    }
