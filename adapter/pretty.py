"""``replay --pretty``: a recorded session for a person, round by round, in a terminal."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def pretty(outputs: Iterable[Mapping[str, Any]], inputs: Mapping[int, Mapping[str, Any]]) -> Iterable[str]:
    names: dict[str, str] = {}
    shown_round: dict[str, int] = {}
    for item in outputs:
        number = item["in"]
        source = inputs.get(number, {})
        data = source.get("data") or {}
        for c in (data.get("combat") or {}).get("combatants") or ():
            if isinstance(c, Mapping) and c.get("_id"):
                names[c["_id"]] = c.get("name") or c["_id"]
        if item["type"] == "ack":
            yield _describe_input(number, source, names)
            ack = item["data"]
            if not ack.get("ok"):
                err = ack["error"]
                where = f" at {err['path']}" if err.get("path") else ""
                rule = f" [{err['rule']}]" if err.get("rule") else ""
                yield f"    REFUSED {err['code']}{rule}{where}: {err['message']}"
            elif ack.get("duplicate"):
                yield "    (duplicate: nothing changed)"
            for notice in ack.get("notices", ()):
                yield f"    notice {notice['kind']}: {notice['text']}"
        elif item["event"] == "plan":
            plan = item["data"]
            if shown_round.get(plan["combat_id"]) != plan["round"]:
                shown_round[plan["combat_id"]] = plan["round"]
                yield f"  == combat {plan['combat_id']}, round {plan['round']} =="
            yield f"    plan r{plan['revision']}:"
            for entry in plan["order"]:
                yield "      " + _entry(entry, plan["current"], names)
        elif item["event"] == "prompt":
            p = item["data"]
            to = p["to"] if isinstance(p["to"], str) else ", ".join(p["to"])
            who = names.get(p["combatant_id"] or "", p["combatant_id"])
            yield f"    prompt {p['kind']} ({p['rule']}) for {who} to {to}: {p['data']}"


def _describe_input(number: int, source: Mapping[str, Any], names: Mapping[str, str]) -> str:
    data = source.get("data") or {}
    if source.get("event") == "hook":
        extra = ""
        if data.get("roll"):
            roll = data["roll"]
            target = roll.get("combatant_id") or roll.get("group_id")
            extra = f" {names.get(target, target)} rolls {roll.get('roll', {}).get('total')}"
        return f"[{number}] hook {data.get('hook')} by {data.get('user')}{extra}"
    who = names.get(data.get("combatant_id") or "", data.get("combatant_id") or "")
    return f"[{number}] intent {data.get('kind')} {who} {data.get('args', {})} by {data.get('user')}"


def _entry(entry: Mapping[str, Any], current: str | None, names: Mapping[str, str]) -> str:
    marker = ">" if entry["combatant_id"] == current else " "
    value = entry["initiative"]
    shown = "  -  " if value is None else f"{value:6.2f}"
    parts = [f"{marker} {shown}  {names.get(entry['combatant_id'], entry['combatant_id']):<20} {entry['acts']}"]
    reaction = entry.get("reaction")
    if reaction is not None:
        parts.append("reaction " + ("yes" if reaction["available"] else f"no ({reaction['reason']})"))
    if entry["tags"]:
        parts.append("tags " + ",".join(entry["tags"]))
    if entry["detail"]:
        parts.append(str(entry["detail"]))
    return "  ".join(parts)
