"""Hostile variants of valid messages, each with the refusal it must get.

A :class:`Case` is a message (hook or intent) made from a valid one by one mutation, with the
``code`` and ``path`` of the ack it must get, and whether its ``seq`` is used up. Mutations
draw through a :class:`Draw` so that hypothesis (which shrinks) and a seeded
``random.Random`` (for the run through the real server) make the same kinds of cases.

Base worlds come from the seeded sessions of :mod:`tests.reliability.table`, taken at a
moment with live combats, pending prompts (balanced-d20) and holders (storyteller).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any, Protocol

from adapter.engine import World
from adapter.protocol import MAX_DEPTH, pointer
from tests.reliability.table import build
from tests.support.table import GM

INTENT_KINDS = ("initiative.set", "reaction.use", "dash", "hold", "act", "reroll.decide",
                "reroll.approve", "ready.start", "ready.break", "ready.confirm", "readied.declare",
                "readied.trigger", "opposed.result")
HOOKS = ("combatStart", "combatRound", "combatTurn", "combatTurnChange", "createCombat",
         "updateCombat", "deleteCombat", "createCombatant", "updateCombatant", "deleteCombatant",
         "initiativeRoll")
CATEGORIES = ("drop_required", "wrong_type", "out_of_range", "not_finite", "deep_nesting",
              "long_string", "too_large", "unknown_name", "extra_arg", "other_ids", "bad_seq")


class Draw(Protocol):
    def choice(self, items: Sequence[Any]) -> Any: ...
    def integer(self, lo: int, hi: int) -> int: ...


class RandomDraw:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choice(self, items: Sequence[Any]) -> Any:
        return items[self.rng.randrange(len(items))]

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)


@dataclass(frozen=True)
class Case:
    category: str
    event: str
    payload: Any
    code: str
    path: str | None
    #: the field a "missing field" message must name (any one of these)
    names: tuple[str, ...] = ()
    #: a refusal for content uses the seq up; a seq problem does not
    recorded: bool = True
    #: the world the case is sent to
    world: World | None = None


# ---------------------------------------------------------------- base worlds and templates


@dataclass(frozen=True)
class Base:
    world: World
    templates: tuple[tuple[str, dict[str, Any]], ...]  # valid messages for seq last_seq + 1
    #: the messages that made ``world`` (to bring a real server to it)
    history: tuple[tuple[str, dict[str, Any]], ...] = ()


@cache
def bases() -> tuple[Base, ...]:
    made = []
    for ruleset, seed in (("balanced-d20", 41), ("storyteller", 42), ("dice-pool", 43), ("foundry-core", 44)):
        ref = build(f"fuzz-{ruleset}", ruleset, seed, fights=2, rounds=2, keep=2)
        at = _interesting_moment(ref)
        world = ref.worlds[at]
        made.append(Base(world, tuple(_templates(world, ref.messages)), tuple(ref.messages[:at])))
    return tuple(made)


def _interesting_moment(ref: Any) -> int:
    """The last seq with a pending prompt or a holder, else the end."""
    for seq in range(len(ref.worlds) - 1, 0, -1):
        w = ref.worlds[seq]
        holders = any(c.hold is not None for cb in w.combats.values() for c in cb.combatants.values())
        if w.combats and (w.prompts or holders):
            return seq
    return len(ref.worlds) - 1


def _templates(world: World, messages: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    nxt = world.last_seq + 1
    combat = next(iter(world.combats.values()))
    cid = combat.id
    who = next(iter(combat.combatants))
    prompt = next(iter(world.prompts), "prompt-1.1")
    found: dict[str, dict[str, Any]] = {}
    for event, data in messages:
        if event == "hook" and data["combat"]["_id"] in world.combats:
            found.setdefault(data["hook"], data)
    roll = next((d for e, d in messages if e == "hook" and d["hook"] == "initiativeRoll"), None)
    hooks = []
    base_hook = found.get("updateCombat") or next(iter(found.values()))
    for name in HOOKS:
        data = copy.deepcopy(found.get(name, base_hook))
        data["hook"] = name
        if name == "initiativeRoll" and "roll" not in data and roll is not None:
            data["roll"] = copy.deepcopy(roll["roll"])
        data.update(seq=nxt, changed=data.get("changed") or {"turn": 0}, options=data.get("options") or {"direction": 1})
        hooks.append(("hook", data))
    args = {
        "initiative.set": {"value": 12}, "reaction.use": {"reason": "opportunity attack"},
        "dash": {"amount": 2}, "hold": {}, "act": {"now": True},
        "reroll.decide": {"prompt_id": prompt, "accept": True},
        "reroll.approve": {"prompt_id": prompt, "approve": True},
        "ready.start": {"actor_id": "actorWatching001", "token_id": "tokenWatching001",
                        "owners": ["player0000000001"], "watching": ["actorTarget00001"],
                        "sees": True, "weapon_ready": True},
        "ready.break": {"actor_id": "actorWatching001", "reason": "moved"},
        "ready.confirm": {"actor_id": "actorWatching001"},
        "readied.declare": {"mode": "standard", "trigger": "the door opens", "action": "shoot"},
        "readied.trigger": {"readied_id": "readied-1.1"},
        "opposed.result": {"prompt_id": prompt, "actor_total": 14, "target_total": 12},
    }
    intents = []
    for kind in INTENT_KINDS:
        data = {"seq": nxt, "user": GM, "world_time": 6, "kind": kind, "args": args[kind]}
        if kind not in ("ready.start", "ready.break", "ready.confirm"):
            data["combat_id"] = cid
        if kind not in ("reroll.decide", "reroll.approve", "opposed.result", "ready.start",
                        "ready.break", "ready.confirm"):
            data["combatant_id"] = who
        intents.append(("intent", data))
    return hooks + intents


# ---------------------------------------------------------------- paths in a payload


def get(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def has(doc: Any, path: tuple[Any, ...]) -> bool:
    try:
        get(doc, path)
        return True
    except (KeyError, IndexError, TypeError):
        return False


def put(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    get(doc, path[:-1])[path[-1]] = value


C0 = ("combat", "combatants", 0)
R = ("roll", "roll")
T0 = ("roll", "roll", "terms", 0)
#: typed leaves: path -> JSON types the schema allows there
TYPED: dict[tuple[Any, ...], frozenset[str]] = {
    ("user",): frozenset({"string"}), ("world_time",): frozenset({"number"}),
    ("combat",): frozenset({"object"}), ("current",): frozenset({"object"}),
    ("combat", "_id"): frozenset({"string"}), ("combat", "round"): frozenset({"integer"}),
    ("combat", "turn"): frozenset({"integer", "null"}), ("combat", "combatants"): frozenset({"array"}),
    ("combat", "groups"): frozenset({"array"}), ("combat", "active"): frozenset({"boolean"}),
    C0: frozenset({"object"}), C0 + ("_id",): frozenset({"string"}),
    C0 + ("name",): frozenset({"string", "null"}), C0 + ("owners",): frozenset({"array"}),
    C0 + ("is_npc",): frozenset({"boolean"}), C0 + ("is_defeated",): frozenset({"boolean"}),
    C0 + ("hidden",): frozenset({"boolean"}), C0 + ("defeated",): frozenset({"boolean"}),
    C0 + ("group",): frozenset({"string", "null"}), C0 + ("initiative",): frozenset({"number", "null"}),
    C0 + ("stats",): frozenset({"object"}), C0 + ("actorId",): frozenset({"string", "null"}),
    ("current", "round"): frozenset({"integer", "null"}),
    ("current", "combatantId"): frozenset({"string", "null"}),
    ("current", "turn"): frozenset({"integer", "null"}),
    ("changed",): frozenset({"object", "null"}), ("options",): frozenset({"object", "null"}),
    ("roll",): frozenset({"object"}), R: frozenset({"object"}), R + ("total",): frozenset({"number"}),
    R + ("terms",): frozenset({"array"}), R + ("formula",): frozenset({"string"}),
    T0: frozenset({"object"}), T0 + ("faces",): frozenset({"integer", "null"}),
    T0 + ("results",): frozenset({"array"}), T0 + ("results", 0, "result"): frozenset({"number"}),
    ("roll", "combatant_id"): frozenset({"string"}),
    ("kind",): frozenset({"string"}), ("combat_id",): frozenset({"string"}),
    ("combatant_id",): frozenset({"string"}), ("args",): frozenset({"object"}),
    ("args", "value"): frozenset({"number"}), ("args", "amount"): frozenset({"integer"}),
    ("args", "prompt_id"): frozenset({"string"}), ("args", "accept"): frozenset({"boolean"}),
    ("args", "approve"): frozenset({"boolean"}), ("args", "reason"): frozenset({"string"}),
    ("args", "now"): frozenset({"boolean"}), ("args", "actor_id"): frozenset({"string"}),
    ("args", "owners"): frozenset({"array"}), ("args", "sees"): frozenset({"boolean"}),
    ("args", "mode"): frozenset({"string"}), ("args", "trigger"): frozenset({"string"}),
    ("args", "readied_id"): frozenset({"string"}), ("args", "actor_total"): frozenset({"number"}),
}
#: where a missing field is reported (the object that lacks it)
REQUIRED: dict[tuple[Any, ...], tuple[Any, ...]] = {
    ("user",): (), ("world_time",): (), ("hook",): (), ("combat",): (), ("current",): (),
    ("kind",): (), ("args",): (),
    ("combat", "_id"): ("combat",), ("combat", "round"): ("combat",),
    ("combat", "combatants"): ("combat",), C0 + ("_id",): C0,
    ("current", "round"): ("current",), ("current", "combatantId"): ("current",),
    R: ("roll",), R + ("terms",): R, R + ("total",): R, T0 + ("results", 0, "result"): T0 + ("results", 0),
    ("args", "value"): ("args",), ("args", "amount"): ("args",), ("args", "prompt_id"): ("args",),
    ("args", "accept"): ("args",), ("args", "approve"): ("args",), ("args", "actor_id"): ("args",),
    ("args", "mode"): ("args",), ("args", "readied_id"): ("args",),
}
#: numeric leaves with bounds: path -> (lowest allowed, highest allowed or None)
BOUNDED: dict[tuple[Any, ...], tuple[float, float | None]] = {
    ("world_time",): (-1e15, 1e15), ("combat", "round"): (0, 1_000_000), ("current", "round"): (0, None),
    ("args", "value"): (-10_000, 10_000), ("args", "amount"): (-1000, 1000),
    ("args", "actor_total"): (-1000, 1000),
}
#: string leaves with a length limit
LIMITED: dict[tuple[Any, ...], int] = {
    ("user",): 128, ("combat", "_id"): 128, C0 + ("_id",): 128, C0 + ("name",): 512,
    C0 + ("actorId",): 128, ("combat_id",): 128, ("combatant_id",): 128, ("args", "prompt_id"): 128,
    ("args", "reason"): 200, R + ("formula",): 1000, ("args", "trigger"): 2000, ("args", "readied_id"): 128,
    ("current", "combatantId"): 128, ("roll", "combatant_id"): 128,
}
#: free-form objects, where Foundry puts what it likes (only depth and JSON itself are checked)
FREE: tuple[tuple[Any, ...], ...] = (("combat", "flags"), ("combat", "_stats"), C0 + ("flags",),
                                     C0 + ("system",), ("options",), ("changed",), R + ("options",))

SAMPLES: dict[str, list[Any]] = {
    "string": ["x", "", "1", "null"], "integer": [0, 7, -3], "number": [1.5, -0.25],
    "boolean": [True, False], "null": [None], "array": [[], [1, "a"]], "object": [{}, {"k": 1}],
}


def _wrong(allowed: frozenset[str]) -> list[Any]:
    ok = set(allowed) | ({"integer"} if "number" in allowed else set())
    return [v for kind, values in SAMPLES.items() if kind not in ok for v in values]


# ---------------------------------------------------------------- one case


def make_case(draw: Draw, category: str, bases_: Sequence[Base] | None = None) -> Case:
    base = draw.choice(list(bases_ or bases()))
    event, template = draw.choice(list(base.templates))
    payload = copy.deepcopy(template)
    seq = payload["seq"]
    case: Case = globals()[f"_{category}"](draw, base, event, payload, seq)
    return replace(case, world=base.world)


def _present(payload: Any, table: dict[tuple[Any, ...], Any]) -> list[tuple[Any, ...]]:
    return [p for p in table if has(payload, p)]


def _drop_required(draw: Draw, base: Base, event: str, payload: Any, seq: int) -> Case:
    path = draw.choice(_present(payload, REQUIRED))
    del get(payload, path[:-1])[path[-1]]
    return Case("drop_required", event, payload, "invalid_message", pointer(REQUIRED[path]), names=(str(path[-1]),))


def _wrong_type(draw: Draw, base: Base, event: str, payload: Any, seq: int) -> Case:
    path = draw.choice(_present(payload, TYPED))
    put(payload, path, draw.choice(_wrong(TYPED[path])))
    return Case("wrong_type", event, payload, "invalid_message", pointer(path))


def _out_of_range(draw: Draw, base: Base, event: str, payload: Any, seq: int) -> Case:
    path = draw.choice(_present(payload, BOUNDED))
    lo, hi = BOUNDED[path]
    below = [lo - 1, -(10**30), -1e300]
    above = [] if hi is None else [hi + 1, hi * 10 + 7, 10**30, 1e300]
    put(payload, path, draw.choice(below + above))
    return Case("out_of_range", event, payload, "invalid_message", pointer(path))


def _not_finite(draw: Draw, base: Base, event: str, payload: Any, seq: int) -> Case:
    value = draw.choice([float("nan"), float("inf"), float("-inf")])
    numeric = [p for p in _present(payload, TYPED) if TYPED[p] & {"number", "integer"}]
    where = draw.choice(numeric + [p + ("x",) for p in _spots(payload)])
    put(payload, where, value)
    return Case("not_finite", event, payload, "invalid_message", pointer(where))


def _spots(payload: Any) -> list[tuple[Any, ...]]:
    """Objects a key can be added to before the schema is judged (depth, size, NaN come first)."""
    spots = [p for p in FREE if has(payload, p) and isinstance(get(payload, p), dict)]
    return spots + [("args",)] if "args" in payload else spots


def _deep_nesting(draw: Draw, base: Base, event: str, payload: Any, seq: int) -> Case:
    spots = _spots(payload)
    spot = draw.choice(spots)
    extra = draw.integer(MAX_DEPTH + 1 - len(spot), MAX_DEPTH + 400)
    keys: list[Any] = []
    inner: Any = 0
    for _ in range(extra - 1):  # the chain goes extra levels below spot
        if draw.integer(0, 1):
            inner = [inner]
            keys.append(0)
        else:
            inner = {"d": inner}
            keys.append("d")
    get(payload, spot)["deep"] = inner
    full = spot + ("deep",) + tuple(reversed(keys))
    return Case("deep_nesting", event, payload, "invalid_message", pointer(full[: MAX_DEPTH + 1]))


def _long_string(draw: Draw, base: Base, event: str, payload: Any, seq: int) -> Case:
    path = draw.choice(_present(payload, LIMITED))
    put(payload, path, "é" * (LIMITED[path] + draw.integer(1, 20_000)))
    return Case("long_string", event, payload, "invalid_message", pointer(path))


def _too_large(draw: Draw, base: Base, event: str, payload: Any, seq: int) -> Case:
    spots = _spots(payload)
    get(payload, draw.choice(spots))["padding"] = "x" * draw.integer(256 * 1024, 600 * 1024)
    return Case("too_large", event, payload, "too_large", None)


def _unknown_name(draw: Draw, base: Base, event: str, payload: Any, seq: int) -> Case:
    field = "hook" if event == "hook" else "kind"
    known = HOOKS if event == "hook" else INTENT_KINDS
    name = draw.choice(["combatExplode", "teleport", "", "initiative.SET", "__proto__", "hold ", "x" * 5000])
    assert name not in known
    payload[field] = name
    return Case("unknown_name", event, payload, "invalid_message", "/" + field)


def _extra_arg(draw: Draw, base: Base, event: str, payload: Any, seq: int) -> Case:
    if event == "hook":
        return _unknown_name(draw, base, event, payload, seq)
    payload["args"][draw.choice(["admin", "value2", "__proto__", "amount "])] = 1
    return Case("extra_arg", event, payload, "invalid_message", "/args")


def _other_ids(draw: Draw, base: Base, event: str, payload: Any, seq: int) -> Case:
    """Ids of combats, combatants and prompts this world does not have (another world's)."""
    world = base.world
    foreign = draw.choice(["combatOfAnother", "cmbtOtherWorld01", "x" * 128, "prompt-99999.1"])
    cid = next(iter(world.combats))
    combat = world.combats[cid]
    who = next(iter(combat.combatants))
    choice = draw.integer(0, 3)
    if choice == 0:
        data = {"seq": seq, "user": GM, "world_time": 6, "kind": draw.choice(["initiative.set", "hold", "dash"]),
                "combat_id": foreign, "combatant_id": who, "args": {}}
        data["args"] = {"initiative.set": {"value": 3}, "hold": {}, "dash": {"amount": 1}}[data["kind"]]
        return Case("other_ids", "intent", data, "unknown_combat", "/combat_id")
    if choice == 1:
        data = {"seq": seq, "user": GM, "world_time": 6, "kind": "initiative.set",
                "combat_id": cid, "combatant_id": foreign, "args": {"value": 3}}
        return Case("other_ids", "intent", data, "unknown_combatant", "/combatant_id")
    if choice == 2 and world.ruleset == "balanced-d20":
        kind = draw.choice(["reroll.decide", "reroll.approve"])
        answer = "accept" if kind == "reroll.decide" else "approve"
        data = {"seq": seq, "user": GM, "world_time": 6, "kind": kind, "combat_id": cid,
                "args": {"prompt_id": foreign, answer: True}}
        return Case("other_ids", "intent", data, "unknown_prompt", "/args/prompt_id")
    hooks = [t for e, t in base.templates if e == "hook" and t["hook"] == "initiativeRoll"]
    data = copy.deepcopy(hooks[0])
    data["roll"]["combatant_id"] = foreign
    assert foreign not in combat.combatants and who in combat.combatants
    return Case("other_ids", "hook", data, "unknown_combatant", "/roll/combatant_id")


def _bad_seq(draw: Draw, base: Base, event: str, payload: Any, seq: int) -> Case:
    choice = draw.integer(0, 2)
    if choice == 0:
        payload["seq"] = draw.choice([0, -1, -(10**30), 2**53, 10**30, 1.5, "7", None, True, [seq]])
        return Case("bad_seq", event, payload, "invalid_message", "/seq", recorded=False)
    if choice == 1:
        del payload["seq"]
        return Case("bad_seq", event, payload, "invalid_message", "/seq", recorded=False)
    payload["seq"] = seq + draw.choice([1, 2, 1000, 2**53 - 1 - seq])
    return Case("bad_seq", event, payload, "out_of_order", "/seq", recorded=False)

