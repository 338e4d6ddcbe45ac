"""``replay --pretty``: a recorded session for a person in a terminal: the timeline the HTML
page draws (:func:`adapter.replay_html.timeline`), each combat round by round."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .replay_html import OUTSIDE, timeline


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
