"""One inbound message, from raw payload to ack: the path shared by the server and replay.

A straight line: read ``seq`` (duplicate? gap?), check the size, validate against the
schema, apply to the engine, build the ack. Nothing here does I/O: the server stores and
emits what :func:`process` returns, replay prints it. A message refused for its content is
still acked, its ``seq`` used up, and stored with its error (``Result.record``); a
duplicate, a gap or an unreadable ``seq`` is not stored and changes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import orjson

from . import protocol
from .engine import Hook, Intent, Session, World, apply, plan_of
from .engine.ruleset import SKIPPED_ACTS, get_ruleset
from .errors import InternalError, InvalidMessage, OutOfOrder, SidecarError, TooLarge

log = logging.getLogger("initiative_sidecar.pipeline")

#: application size limit for one message, bytes of JSON (below socket.io's buffer limit)
DEFAULT_MAX_BYTES = 256 * 1024


@dataclass(frozen=True)
class Result:
    world: World
    ack: dict[str, Any]
    #: broadcasts, in order: ("plan", plan)... then ("prompt", prompt)...
    emits: tuple[tuple[str, dict[str, Any]], ...] = ()
    #: the message used up its seq and must be stored (with ``error`` if refused)
    record: bool = False
    error: dict[str, Any] | None = None


def size_of(payload: Any) -> int:
    try:
        return len(orjson.dumps(payload))
    except (TypeError, orjson.JSONEncodeError):
        return len(repr(payload))


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
    max_bytes: int = DEFAULT_MAX_BYTES,
    check_outbound: bool = True,
) -> Result:
    """Apply one ``hook``/``intent`` payload to the world; return the ack and broadcasts."""
    seq = read_seq(payload)
    if seq is None:
        error = InvalidMessage(f"seq must be an integer from 1 to {MAX_SEQ}", path="/seq")
        return Result(world=world, ack=refusal(None, error))
    if seq <= world.last_seq:
        return Result(world=world, ack=duplicate_ack(world, seq))
    if seq > world.last_seq + 1:
        gap = OutOfOrder(f"expected seq {world.last_seq + 1}, got {seq}: resend from there", path="/seq")
        return Result(world=world, ack=refusal(seq, gap))
    try:
        size = size_of(payload)
        if size > max_bytes:
            raise TooLarge(f"the message has {size} bytes; the limit is {max_bytes}")
        protocol.validate(event, payload)
        outcome = apply(world, to_message(event, payload))
    except SidecarError as error:
        ack = refusal(seq, error)
        return Result(world=replace(world, last_seq=seq), ack=ack, record=True, error=ack["error"])
    except Exception as bug:  # a bug must not wedge the world: refuse, keep the state, go on
        log.exception("the engine failed on %s seq %d", event, seq)
        failure = InternalError(f"the sidecar failed on this message ({type(bug).__name__}); it was refused")
        ack = refusal(seq, failure)
        return Result(world=replace(world, last_seq=seq), ack=ack, record=True, error=ack["error"])
    prompts = [p.to_wire() for p in outcome.prompts]
    ack = {
        "ok": True,
        "seq": seq,
        "plans": list(outcome.plans),
        "prompts": prompts,
        "notices": [n.to_wire() for n in outcome.notices],
    }
    emits = tuple(("plan", p) for p in outcome.plans) + tuple(("prompt", p) for p in prompts)
    if check_outbound:
        protocol.check_outbound("ack", ack)
    return Result(world=outcome.world, ack=ack, emits=emits, record=True)


def duplicate_ack(world: World, seq: int) -> dict[str, Any]:
    """A seq already seen: changes nothing; carries every current plan and pending prompt."""
    return {
        "ok": True,
        "seq": seq,
        "duplicate": True,
        "plans": [plan_of(c) for c in world.combats.values() if c.last_plan is not None],
        "prompts": [p.to_wire() for p in world.prompts.values()],
        "notices": [],
    }


def to_message(event: str, payload: Mapping[str, Any]) -> Hook | Intent:
    if event == "hook":
        return Hook(
            seq=payload["seq"],
            user=payload["user"],
            world_time=float(payload["world_time"]),
            hook=payload["hook"],
            combat=payload["combat"],
            current=payload["current"],
            changed=payload.get("changed"),
            options=payload.get("options"),
            roll=payload.get("roll"),
        )
    if event == "intent":
        return Intent(
            seq=payload["seq"],
            user=payload["user"],
            world_time=float(payload["world_time"]),
            kind=payload["kind"],
            combat_id=payload.get("combat_id"),
            combatant_id=payload.get("combatant_id"),
            args=payload.get("args") or {},
        )
    raise InvalidMessage(f"unknown event {event!r}: expected hook or intent", path="")


def open_session(world: World | None, data: Mapping[str, Any]) -> World:
    """A connection (or a recording's session line): the world with its GMs and settings."""
    session = Session(
        world=str(data["world"]),
        ruleset=str(data["ruleset"]),
        settings=dict(data.get("settings") or {}),
        gm_users=frozenset(data.get("gm_users") or ()),
    )
    base = world if world is not None else World(world=session.world)
    return apply(base, session).world


def welcome(world: World) -> dict[str, Any]:
    """Where to resume, and what the module needs to know of the ruleset (it keeps no copy):
    the intent kinds it accepts and the ``acts`` whose turns are skipped."""
    rs = get_ruleset(world.ruleset)
    return {
        "world": world.world,
        "ruleset": world.ruleset,
        "last_seq": world.last_seq,
        "combats": [{"combat_id": c.id, "revision": c.revision} for c in world.combats.values()],
        "intents": sorted(rs.intents),
        "skipped_acts": sorted(SKIPPED_ACTS),
    }
