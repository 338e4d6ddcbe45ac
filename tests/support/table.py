"""The one test table: Foundry and the module at a table, talking to the sidecar's pipeline.

Every message is a wire dict (the shapes of ``tests/foundry.py``) sent through
:func:`adapter.pipeline.process`, as the server sends it: schema in, engine, ack, schema
out. The world is threaded from one message to the next; nothing here builds an engine
message, so the engine's own types can change under the tests.

The table plays Foundry and the module (``vtt_module/scripts``):

- Foundry keeps each combat's roster, groups, round and pointer (the current combatant; its
  ``turn`` is that combatant's index in Foundry's own sort, :func:`foundry_order`);
- the module applies every plan it gets back (``applier.js`` ``PlanApplier``, ``plan.js``
  ``planUpdate``): it writes the plan's initiative numbers (never ``null`` over a number) and,
  once the combat has started, moves the pointer to the plan's ``current`` when it names one;
- the GM's "next turn" and "start" are steered as the module steers them (``turns.js``
  ``landing``, registered by ``turns.js`` ``registerSteering``): a
  forward step skips the turns whose ``acts`` the sidecar's ``welcome`` lists in
  ``skipped_acts``; past the last turn the new round starts on ``next_round.current`` (or the
  first of the next round who is not skipped), with the next round's initiatives written in
  the same update. The step reaches the sidecar as the module forwards it: an
  ``updateCombat`` hook with the ``changed`` round and turn.

A refused message must change nothing but ``last_seq`` and never be an ``internal_error``;
the table checks both, then raises the refusal as the :mod:`adapter.errors` class of its code
(so ``pytest.raises(RuleViolation)`` reads as before), unless the caller asked for the ack
(``send(..., refusal="ack")``). With ``trace_raises`` set, :data:`RAISED_AT` also keeps the file
and line of the ``raise`` inside the sidecar that made the refusal (for the tables that must
reach every ``raise RuleViolation`` of a ruleset).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cmp_to_key, partial
from types import FrameType
from typing import Any, Literal
from weakref import WeakKeyDictionary

import orjson
from msgspec.structs import replace

from adapter import errors
from adapter.engine import World
from adapter.errors import SidecarError
from adapter.pipeline import Result, open_session, process, welcome
from adapter.rulesets import RULESETS
from tests.foundry import combat, current, group

GM = "gmUser0000000001"
WORLD = "tableWorld000001"
COMBAT = "tableCombat00001"


def session_data(world: str, ruleset: str, settings: Mapping[str, Any] | None = None, *,
                 gm: str = GM, system: str = "dnd5e") -> dict[str, Any]:
    """The module's ``session`` (the connection's auth as a recording line stores it)."""
    return {"world": world, "ruleset": ruleset, "settings": dict(settings or {}), "gm_users": [gm],
            "protocol": 1, "module_version": "0.1.0", "foundry_version": "13.350", "system": system}


def foundry_order(roster: list[dict[str, Any]], written: Mapping[str, float] | None = None) -> list[str]:
    """Foundry v13 ``Combat#_sortCombatants`` (research notes, section 3; the module's
    ``plan.js`` ``foundrySort``): initiative descending, a missing or non-numeric one as
    -Infinity, ties by ``_id``. ``written`` overrides some initiatives (the module's
    ``sortAfter``: the order once those are written)."""
    def value(c: dict[str, Any]) -> float:
        v = (written or {}).get(c["_id"], c.get("initiative"))
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else float("-inf")

    def compare(a: dict[str, Any], b: dict[str, Any]) -> int:
        ia, ib = value(a), value(b)
        if ia != ib:
            return -1 if ib < ia else 1
        return 1 if a["_id"] > b["_id"] else -1 if a["_id"] < b["_id"] else 0

    return [c["_id"] for c in sorted(roster, key=cmp_to_key(compare))]


def error_class(code: str) -> type[SidecarError]:
    """The :mod:`adapter.errors` class whose ``code`` is ``code``."""
    classes: list[type[SidecarError]] = [SidecarError]
    while classes:
        cls = classes.pop()
        if cls.code == code:
            return cls
        classes.extend(cls.__subclasses__())
    raise AssertionError(f"no error class has the code {code!r}")


#: where the sidecar raised each refusal the table raised again (with ``trace_raises``)
RAISED_AT: WeakKeyDictionary[SidecarError, tuple[str, int]] = WeakKeyDictionary()


def refusal_of(ack: Mapping[str, Any], site: tuple[str, int] | None = None) -> SidecarError:
    """The refusal an ack carries, as its error class (``site``: where the sidecar raised it,
    kept in :data:`RAISED_AT`)."""
    wire = ack["error"]
    error = error_class(wire["code"])(wire["message"], path=wire.get("path"), rule=wire.get("rule"))
    if site is not None:
        RAISED_AT[error] = site
    return error


@dataclass(frozen=True)
class Message:
    """A message not sent yet: the event and the payload without ``seq``/``world_time``."""

    event: Literal["hook", "intent"]
    body: dict[str, Any]


@dataclass
class Fight:
    """One Foundry combat as the module sees it: roster, groups, round, pointer, last plan."""

    id: str
    round: int = 0
    pointer: str | None = None
    roster: list[dict[str, Any]] = field(default_factory=list)
    groups: list[dict[str, Any]] = field(default_factory=list)
    #: the last plan the module applied (its combat flag)
    plan: dict[str, Any] | None = None

    def ids(self) -> list[str]:
        return [c["_id"] for c in self.roster]

    def person(self, cid: str) -> dict[str, Any]:
        return next(c for c in self.roster if c["_id"] == cid)

    def turns(self) -> list[str]:
        return foundry_order(self.roster)

    def turn(self) -> int | None:
        turns = self.turns()
        return turns.index(self.pointer) if self.pointer in turns else None

    def snapshot(self) -> dict[str, Any]:
        snapshot = combat(self.id, self.roster, self.round, self.turn())
        snapshot["groups"] = self.groups
        return snapshot

    def current(self) -> dict[str, Any]:
        token = self.person(self.pointer)["tokenId"] if self.pointer in self.ids() else None
        return current(self.round, self.pointer, self.turn()) | {"tokenId": token}

    def remove(self, cid: str) -> None:
        """A combatant leaves; Foundry moves the turn off a deleted current combatant to the
        next surviving one, or, when it was the last, to the one before it (research notes:
        ``Combatant._preDeleteOperation``, ``combatTurn``: ``nextSurvivor || prevSurvivor``).
        A started combat's pointer never becomes ``None`` while anyone is left."""
        if self.pointer == cid:
            turns = self.turns()
            at = turns.index(cid)
            survivors = turns[at + 1:] + turns[:at][::-1]
            self.pointer = survivors[0] if survivors else None
        self.roster[:] = [c for c in self.roster if c["_id"] != cid]

    def acts(self, cid: str) -> str | None:
        """The ``acts`` of a combatant's plan state (the flag ``planUpdate`` writes)."""
        for e in (self.plan or {}).get("order", ()):
            if e["combatant_id"] == cid:
                return str(e["acts"])
        return None

    def apply(self, plan: dict[str, Any]) -> None:
        """``planUpdate``: the plan's numbers (never null over a number), then the pointer."""
        self.plan = plan
        for e in plan["order"]:
            value = e["initiative"]
            if isinstance(value, (int, float)) and not isinstance(value, bool) and e["combatant_id"] in self.ids():
                self.person(e["combatant_id"])["initiative"] = value
        if self.round > 0 and plan["current"] is not None and plan["current"] in self.ids():
            self.pointer = plan["current"]

    def first_acting(self, round_: int, skipped: frozenset[str]) -> str | None:
        """``plan.js`` ``firstActing``: who starts ``round_``, from the plan's ``next_round``;
        the next round's initiatives are written on the way (the GM's client writes them)."""
        upcoming = (self.plan or {}).get("next_round")
        written: dict[str, float] = {}
        acts: dict[str, str] = {}
        if upcoming and upcoming["round"] == round_:
            for e in upcoming["order"]:
                cid = e["combatant_id"]
                if cid not in self.ids():
                    continue
                value = e["initiative"]
                if isinstance(value, (int, float)) and value != self.person(cid)["initiative"]:
                    written[cid] = value
                if e.get("acts"):
                    acts[cid] = e["acts"]
        order = foundry_order(self.roster, written)
        for cid, value in written.items():
            self.person(cid)["initiative"] = value
        wanted = upcoming["current"] if upcoming and upcoming["round"] == round_ else None
        if wanted in order:
            return str(wanted)
        for cid in order:
            if (acts.get(cid) or self.acts(cid)) not in skipped:
                return cid
        return order[0] if order else None

    def step(self, skipped: frozenset[str]) -> bool:
        """The GM's "next turn" (Foundry's ``Combat#nextTurn``, steered by ``landing``):
        moves the pointer; returns whether a new round began."""
        turns = self.turns()
        turn = self.turn()
        proposed = 0 if turn is None else turn + 1
        if proposed >= len(turns):  # Foundry's nextRound
            self.round += 1
            self.pointer = self.first_acting(self.round, skipped)
            return True
        if proposed <= (turn or 0):  # no turn yet: "backwards", not steered
            self.pointer = turns[proposed]
            return False
        for cid in turns[proposed:]:
            if self.acts(cid) not in skipped:
                self.pointer = cid
                return False
        self.round += 1
        self.pointer = self.first_acting(self.round, skipped)
        return True


class Table:
    """One world at one table, every message through :func:`adapter.pipeline.process`."""

    def __init__(self, ruleset: str, settings: Mapping[str, Any] | None = None, *,
                 world: str = WORLD, gm: str = GM, combat_id: str = COMBAT, system: str = "dnd5e",
                 rulesets: Mapping[str, Any] | None = None,
                 through: Callable[[World, str, Any], Result] | None = None) -> None:
        self.gm = gm
        #: the built-in rulesets, and beside them a test's own (``hold-test``), handed to the
        #: pipeline as the server hands it its own
        self.rulesets = {**RULESETS, **(rulesets or {})}
        self.session = session_data(world, ruleset, settings, gm=gm, system=system)
        self.world: World = open_session(None, self.session, rulesets=self.rulesets)
        self.skipped = frozenset(welcome(self.world, rulesets=self.rulesets)["skipped_acts"])
        self.seq = 0
        self.time = 0.0
        self.fights: dict[str, Fight] = {combat_id: Fight(combat_id)}
        self.at = self.fights[combat_id]
        #: every line sent, as a recording stores it (the session first)
        self.sent: list[dict[str, Any]] = [{"event": "session", "data": self.session}]
        self.ack: dict[str, Any] = {}
        self.emits: tuple[tuple[str, dict[str, Any]], ...] = ()
        self.trace_raises = False
        #: what a refusal does by default: raise it, or return its ack
        self.refusals: Literal["raise", "ack"] = "raise"
        #: the pipeline, or a path through it (``Worlds.handle``, to store what is sent)
        self.through = through or partial(process, rulesets=self.rulesets)

    # ------------------------------------------------------------ sending

    def send(self, message: Message, *, refusal: Literal["raise", "ack"] | None = None) -> dict[str, Any]:
        """One message through the pipeline; the module applies the plans of its ack."""
        self.seq += 1
        payload = orjson.loads(orjson.dumps({"seq": self.seq, "world_time": self.time, **message.body}))
        self.sent.append({"event": message.event, "data": payload})
        before = self.world
        site: list[tuple[str, int]] = []
        with self._raises(site):
            result = self.through(self.world, message.event, payload)
        self.world, self.ack, self.emits = result.world, result.ack, result.emits
        assert result.record, result.ack  # the table numbers its messages: never a duplicate or a gap
        if not result.ack["ok"]:
            assert result.ack["error"]["code"] != "internal_error", result.ack["error"]
            assert result.world == replace(before, last_seq=self.seq), result.ack["error"]
            assert not result.emits
            if (refusal or self.refusals) == "raise":
                raise refusal_of(result.ack, site[-1] if site else None)
            return result.ack
        for plan in result.ack["plans"]:
            if plan["combat_id"] in self.fights:
                self.fights[plan["combat_id"]].apply(plan)
        return result.ack

    def hook_message(self, name: str, roll: dict[str, Any] | None = None, *, user: str | None = None,
                 **extra: Any) -> Message:
        """A forwarded hook with the combat as Foundry holds it now."""
        body: dict[str, Any] = {"user": user or self.gm, "hook": name, "combat": self.at.snapshot(),
                                "current": self.at.current(), **extra}
        if roll is not None:
            body["roll"] = roll
        return Message("hook", body)

    def hook(self, name: str, roll: dict[str, Any] | None = None, *, user: str | None = None,
             **extra: Any) -> dict[str, Any]:
        return self.send(self.hook_message(name, roll, user=user, **extra))

    def intent_message(self, kind: str, cid: str | None = None, args: Mapping[str, Any] | None = None, *,
                   user: str | None = None, in_combat: bool = True) -> Message:
        body: dict[str, Any] = {"user": user or self.gm, "kind": kind, "args": dict(args or {})}
        if in_combat:
            body["combat_id"] = self.at.id
        if cid is not None:
            body["combatant_id"] = cid
        return Message("intent", body)

    def ask(self, kind: str, cid: str | None = None, args: Mapping[str, Any] | None = None, *,
            user: str | None = None, in_combat: bool = True) -> dict[str, Any]:
        """An intent (a player's or the GM's request)."""
        return self.send(self.intent_message(kind, cid, args, user=user, in_combat=in_combat))

    # ------------------------------------------------------------ Foundry's part

    def switch(self, combat_id: str) -> None:
        """Work on another combat of the same world (created on first use)."""
        self.at = self.fights.setdefault(combat_id, Fight(combat_id))

    def join(self, person: dict[str, Any], *, hook: str | None = None) -> dict[str, Any]:
        """A combatant joins (``createCombat`` for the combat's first message)."""
        self.at.roster.append(person)
        return self.hook(hook or ("createCombatant" if self.at.id in self.world.combats else "createCombat"))

    def leave(self, cid: str) -> dict[str, Any]:
        """A combatant is deleted from the combat."""
        self.at.remove(cid)
        return self.hook("deleteCombatant", changed={"_id": cid})

    def add_group(self, gid: str, name: str | None = None) -> None:
        self.at.groups.append(group(gid, name or gid))

    def roll_message(self, roll: dict[str, Any], *, cid: str | None = None, group_id: str | None = None,
                 reroll_of: str | None = None, user: str | None = None) -> Message:
        """Foundry's initiative roll for a combatant or a group (the module's ``roll``)."""
        data: dict[str, Any] = {"group_id": group_id} if group_id is not None else {"combatant_id": cid}
        data["roll"] = roll
        if reroll_of is not None:
            data["reroll_of"] = reroll_of
        return self.hook_message("initiativeRoll", data, user=user)

    def start(self) -> dict[str, Any]:
        """``Combat#startCombat`` steered by ``landing`` (round 0 to 1: the first who acts)."""
        self.at.round = 1
        self.at.pointer = self.at.first_acting(1, self.skipped)
        return self.hook("combatStart", options={"direction": 1})

    def next_turn(self) -> dict[str, Any]:
        """The GM's "next turn", as the module steers it and forwards it (``updateCombat``)."""
        assert self.at.round > 0, "the combat has not started"
        new_round = self.at.step(self.skipped)
        options: dict[str, Any] = {"direction": 1}
        if new_round:
            self.time += 6
            options["worldTime"] = {"delta": 6}
        return self.hook("updateCombat", changed={"round": self.at.round, "turn": self.at.turn()},
                         options=options)

    def next_round(self) -> dict[str, Any]:
        """The GM's "next round" (Foundry's ``Combat#nextRound``, steered to ``firstActing``)."""
        assert self.at.round > 0, "the combat has not started"
        self.at.round += 1
        self.at.pointer = self.at.first_acting(self.at.round, self.skipped)
        self.time += 6
        return self.hook("updateCombat", changed={"round": self.at.round, "turn": self.at.turn()},
                         options={"direction": 1, "worldTime": {"delta": 6}})

    def turn_to(self, cid: str) -> None:
        """"Next turn" until ``cid`` is current (at most two rounds)."""
        for _ in range(2 * len(self.at.roster) + 2):
            if self.plan["current"] == cid:
                return
            self.next_turn()
        raise AssertionError(f"{cid} never became current")

    # ------------------------------------------------------------ reading (the plan as the module got it)

    @property
    def plan(self) -> dict[str, Any]:
        assert self.at.plan is not None, "no plan yet"
        return self.at.plan

    def order(self) -> list[str]:
        return [e["combatant_id"] for e in self.plan["order"]]

    def entry(self, cid: str) -> dict[str, Any]:
        return next(e for e in self.plan["order"] if e["combatant_id"] == cid)

    def initiatives(self) -> dict[str, float | None]:
        return {e["combatant_id"]: e["initiative"] for e in self.plan["order"]}

    def prompts(self, kind: str | None = None) -> list[dict[str, Any]]:
        """The prompts of the last ack (of one kind)."""
        return [p for p in self.ack.get("prompts", []) if kind in (None, p["kind"])]

    def notices(self) -> list[dict[str, Any]]:
        return list(self.ack.get("notices", []))

    def jsonl(self) -> str:
        """What was sent, as a recording (``tests/recordings/<ruleset>/*.jsonl``)."""
        return "".join(orjson.dumps(line).decode() + "\n" for line in self.sent)

    # ------------------------------------------------------------ plumbing

    @contextmanager
    def _raises(self, sites: list[tuple[str, int]]) -> Iterator[None]:
        """With ``trace_raises``: where each refusal raised inside the sidecar was raised."""
        if not self.trace_raises:
            yield
            return
        seen: set[int] = set()

        def local(frame: FrameType, event: str, arg: Any) -> Any:
            if event == "exception" and isinstance(arg[1], errors.SidecarError) and id(arg[1]) not in seen:
                seen.add(id(arg[1]))
                sites.append((frame.f_code.co_filename, frame.f_lineno))
            return local

        def calls(frame: FrameType, event: str, arg: Any) -> Any:
            return local

        previous = sys.gettrace()
        sys.settrace(calls)
        try:
            yield
        finally:
            sys.settrace(previous)
