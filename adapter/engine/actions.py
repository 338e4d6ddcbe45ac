"""Which actions a combatant may declare now: the menu the module shows, decided here (the
module keeps no copy of the rules). Each action id names one intent (``hold.next_round`` is
``hold {next_round: true}``; docs/protocol.md, ``plan``).
"""

from __future__ import annotations

from collections.abc import Collection

from .ruleset import Entry


def actions_now(intents: Collection[str], started: bool, entry: Entry) -> tuple[list[str], list[str]]:
    """``(actions, gm_actions)`` for one plan entry."""
    actions: list[str] = []
    gm_actions: list[str] = []
    held = entry.acts == "held"
    if "dash" in intents and "dashed" not in entry.tags:
        actions.append("dash")
    if "hold" in intents:
        if not held:
            actions += ["hold", "hold.next_round"]
        else:
            gm_actions.append("hold.target_aware")
    if "act" in intents and held and started:
        actions += ["act.now", "act.after", "act.before"]
    if "reaction.use" in intents and entry.reaction is not None and entry.reaction.get("available"):
        actions.append("reaction.use")
    readied = entry.detail.get("readied_id")
    if "readied.declare" in intents and started and not readied:
        actions.append("readied.declare")
    if "readied.trigger" in intents and readied:
        actions.append("readied.trigger")
    return actions, gm_actions
