"""A recording's timeline, each combat round by round, for people: ``replay FILE --html
OUT.html`` draws it as one self-contained page (docs/operations.md, "The picture of a
recording"; every text from the recording is escaped by the templates, :mod:`adapter.html`),
``replay --pretty`` prints it for a terminal.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from . import protocol
from .html import environment
from .texts import TEXTS
from .version import __version__

OUTSIDE = "—"  # the "combat" of messages that belong to none (Ready to strike outside combat)
#: how a turn reads by the plan entry's ``acts``
TURN_CLASS = {"none": "lost", "held": "held", "defend_only": "lost", "movement_only": "limited",
              "movement_or_action": "limited"}


@dataclass
class Step:
    """One line of the timeline."""

    line: int
    kind: str  # roll, turn, round, intent, prompt, answer, refusal, notice, hook
    text: str
    who: str = ""
    rules: list[str] = field(default_factory=list)
    detail: str = ""


@dataclass
class Round:
    number: int
    steps: list[Step] = field(default_factory=list)
    plan: dict[str, Any] | None = None


@dataclass
class Timeline:
    sessions: list[dict[str, Any]] = field(default_factory=list)
    #: each combat's rounds by number (the messages outside any combat under ``OUTSIDE``)
    combats: dict[str, dict[int, Round]] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    round_of: dict[str, int] = field(default_factory=dict)
    current_of: dict[str, str | None] = field(default_factory=dict)
    prompts: dict[str, dict[str, Any]] = field(default_factory=dict)
    messages: int = 0
    refusals: int = 0

    def name(self, cid: str | None) -> str:
        return self.names.get(cid or "", cid or "")

    def round(self, combat_id: str | None, number: int | None = None) -> Round:
        """The combat's round (by default the one it is in), made on first use."""
        cid = combat_id or OUTSIDE
        number = self.round_of.get(cid, 0) if number is None else number
        return self.combats.setdefault(cid, {}).setdefault(number, Round(number))

    def add(self, combat_id: str | None, step: Step) -> None:
        self.round(combat_id).steps.append(step)

    def in_order(self) -> list[tuple[str, list[Round]]]:
        """Each combat (the messages outside any last) with its rounds, in order."""
        return [(cid, [rounds[n] for n in sorted(rounds)])
                for cid, rounds in sorted(self.combats.items(), key=lambda item: (item[0] == OUTSIDE, item[0]))]


def timeline(inputs: Mapping[int, Mapping[str, Any]], outputs: Iterable[Mapping[str, Any]]) -> Timeline:
    """The timeline of a replay: ``inputs`` by line number, ``outputs`` as replay yields them."""
    tl = Timeline()
    for number, item in sorted(inputs.items()):
        if item.get("event") == "session" and isinstance(item.get("data"), Mapping):
            tl.sessions.append({"line": number, **item["data"]})
    for number, group in groupby(outputs, key=lambda out: out["in"]):  # replay yields a line's together
        outs = list(group)
        source = inputs.get(number, {})
        data = _mapping(source.get("data"))
        combat_id = _combat_of(tl, data)
        tl.messages += 1
        ack = outs[0]["data"]
        tl.add(combat_id, _describe(tl, number, source.get("event", "?"), data))
        if not ack.get("ok"):
            tl.refusals += 1
            err = ack["error"]
            where = f" at {err['path']}" if err.get("path") else ""
            tl.add(combat_id, Step(number, "refusal", f"refused {err['code']}{where}: {err['message']}",
                                   rules=[err["rule"]] if err.get("rule") else []))
        elif ack.get("duplicate"):
            tl.add(combat_id, Step(number, "hook", "duplicate: nothing changed"))
        for notice in ack.get("notices", ()):
            tl.add(combat_id, Step(number, "notice", f"notice {notice['kind']}: {notice['text']}"))
        for out in outs[1:]:
            if out.get("event") == "plan":
                _plan(tl, number, out["data"])
            elif out.get("event") == "prompt":
                _prompt(tl, number, out["data"])
    return tl


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _combat_of(tl: Timeline, data: Mapping[str, Any]) -> str | None:
    """The combat a message belongs to (its combat's id, else its ``combat_id``); the names of
    the combat's combatants are learnt on the way."""
    combat = _mapping(data.get("combat"))
    for c in combat.get("combatants") or ():
        if isinstance(c, Mapping) and isinstance(c.get("_id"), str):
            tl.names[c["_id"]] = str(c.get("name") or c["_id"])
    cid = combat["_id"] if isinstance(combat.get("_id"), str) else data.get("combat_id")
    return cid if isinstance(cid, str) else None


def _describe(tl: Timeline, number: int, event: str, data: Mapping[str, Any]) -> Step:
    user = str(data.get("user", ""))
    if event == "hook":
        roll = data.get("roll")
        if isinstance(roll, Mapping):
            target = roll.get("combatant_id") or roll.get("group_id")
            total = (roll.get("roll") or {}).get("total") if isinstance(roll.get("roll"), Mapping) else None
            again = " (reroll)" if data.get("reroll_of") or roll.get("reroll_of") else ""
            return Step(number, "roll", f"{tl.name(target)} rolls {total}{again}", who=user)
        return Step(number, "hook", f"hook {data.get('hook')}", who=user)
    kind = str(data.get("kind", "?"))
    text = _intent_text(tl, kind, tl.name(data.get("combatant_id")), _mapping(data.get("args")))
    answer = kind in ("reroll.decide", "reroll.approve", "opposed.result")
    return Step(number, "answer" if answer else "intent", text, who=user)


def _intent_text(tl: Timeline, kind: str, who: str, args: Mapping[str, Any]) -> str:
    if kind == "dash":
        return f"{who} dashes (+{args.get('amount', '?')})"
    if kind == "hold":
        if args.get("next_round"):
            return f"{who} holds into the next round"
        return f"{who} holds" + (" (target aware)" if args.get("target_aware") else "")
    if kind == "act":
        if args.get("before"):
            return f"{who} interrupts: acts before {tl.name(args['before'])}"
        if args.get("after"):
            return f"{who} steps in after {tl.name(args['after'])}"
        return f"{who} acts now"
    if kind in ("reroll.decide", "reroll.approve"):
        yes = args.get("accept", args.get("approve"))
        verb = ("accepts" if yes else "declines") if kind == "reroll.decide" else ("approves" if yes else "denies")
        return f"{verb} {_prompt_name(tl, args.get('prompt_id'))}"
    if kind == "opposed.result":
        return f"opposed check {_prompt_name(tl, args.get('prompt_id'))}: {dict(args)}"
    if kind == "initiative.set":
        return f"{who} initiative set to {args.get('value')}"
    rest = ", ".join(f"{k}={v}" for k, v in args.items())
    return f"{kind} {who}" + (f" ({rest})" if rest else "")


def _prompt_name(tl: Timeline, prompt_id: Any) -> str:
    prompt = tl.prompts.get(str(prompt_id))
    if prompt is None:
        return f"prompt {prompt_id}"
    return f"{prompt['kind']} {prompt_id} for {tl.name(prompt['combatant_id'])}"


def _plan(tl: Timeline, number: int, plan: Mapping[str, Any]) -> None:
    cid = plan["combat_id"]
    rows = [{**e, "name": tl.name(e["combatant_id"]), "current": e["combatant_id"] == plan["current"]}
            for e in plan["order"]]
    new_round = tl.round_of.get(cid) != plan["round"]
    tl.round_of[cid] = plan["round"]
    tl.round(cid, plan["round"]).plan = {"rows": rows, "revision": plan["revision"]}
    if new_round and plan["round"] > 0:
        for row in rows:
            if row["acts"] in ("none", "defend_only"):
                lost = row["detail"].get("turns_lost")
                what = "loses this round's turn" if row["acts"] == "none" else "may only defend this round"
                why = ", ".join(row["tags"]) or row["acts"]
                tl.add(cid, Step(number, "lost", f"{row['name']} {what}"
                                 + (f" ({lost} turn(s) lost)" if lost else "") + f" [{why}]",
                                 rules=list(row["rules"])))
    if plan["current"] != tl.current_of.get(cid) or new_round:
        tl.current_of[cid] = plan["current"]
        turn = next((r for r in rows if r["current"]), None)
        if turn is not None:
            tags = f" [{', '.join(turn['tags'])}]" if turn["tags"] else ""
            tl.add(cid, Step(number, "turn", f"{turn['name']}'s turn at {_score(turn)}: {turn['acts']}{tags}",
                             rules=list(turn["rules"]), detail=TURN_CLASS.get(turn["acts"], "")))


def _score(row: Mapping[str, Any]) -> str:
    """The initiative the tracker shows, and the rule's score when the number could not be it."""
    shown = "–" if row["initiative"] is None else f"{row['initiative']:g}"
    if "score" in row["detail"]:
        return f"score {row['detail']['score']:g} (initiative {shown})"
    return f"initiative {shown}"


def _prompt(tl: Timeline, number: int, prompt: Mapping[str, Any]) -> None:
    tl.prompts[prompt["prompt_id"]] = dict(prompt)
    to = prompt["to"] if isinstance(prompt["to"], str) else ", ".join(prompt["to"])
    text = f"prompt {_prompt_name(tl, prompt['prompt_id'])} to {to}"
    tl.add(prompt.get("combat_id"), Step(number, "prompt", text, rules=[prompt["rule"]]))


def render(title: str, tl: Timeline, problems: Iterable[str] = ()) -> str:
    combats = [{"id": cid, "rounds": rounds} for cid, rounds in tl.in_order()]
    return environment().get_template("replay.html").render(
        title=title, tl=tl, combats=combats, problems=list(problems), t=TEXTS["en"],
        version=__version__, protocol=protocol.PROTOCOL_VERSION,
    )


def pretty(outputs: Iterable[Mapping[str, Any]], inputs: Mapping[int, Mapping[str, Any]]) -> Iterator[str]:
    for cid, rounds in timeline(inputs, outputs).in_order():
        where = "outside any combat" if cid == OUTSIDE else f"combat {cid}"
        for r in rounds:
            yield f"== {where}, round {r.number} =="
            for step in r.steps:
                rules = "".join(f" [{rule}]" for rule in step.rules)
                yield f"  [{step.line}] {step.text}{rules}" + (f" (by {step.who})" if step.who else "")
            if r.plan is not None:
                yield f"  plan at the round's end (revision {r.plan['revision']}):"
                for row in r.plan["rows"]:
                    yield "    " + _row(row)


def _row(row: Mapping[str, Any]) -> str:
    shown = "  -  " if row["initiative"] is None else f"{row['initiative']:6.2f}"
    parts = [f"{'>' if row['current'] else ' '} {shown}  {row['name']:<20} {row['acts']}"]
    reaction = row.get("reaction")
    if reaction is not None:
        parts.append("reaction " + ("yes" if reaction["available"] else f"no ({reaction['reason']})"))
    if row["tags"]:
        parts.append("tags " + ",".join(row["tags"]))
    if row["detail"]:
        parts.append(str(row["detail"]))
    return "  ".join(parts)
