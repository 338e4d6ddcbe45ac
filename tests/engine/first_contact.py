"""Sending a combat as the first message the sidecar sees of it, through the real pipeline."""

from __future__ import annotations

from typing import Any

from adapter.engine import World
from adapter.engine.apply import plan_of
from adapter.pipeline import Result, open_session, process
from adapter.rulesets import RULESETS

GM = "gmUser0000000001"


class Contact:
    """A fresh world under one ruleset; ``meet`` sends a combat it has never seen."""

    def __init__(self, ruleset: str, settings: dict[str, Any] | None = None) -> None:
        self.world: World = open_session(None, {
            "world": "contactWorld0001", "ruleset": ruleset, "settings": settings or {},
            "gm_users": [GM]}, rulesets=RULESETS)
        self.seq = 0
        self.last: tuple[str, dict[str, Any]] | None = None

    def send(self, event: str, payload: dict[str, Any]) -> Result:
        self.seq += 1
        self.last = (event, {"seq": self.seq, "user": GM, "world_time": 0, **payload})
        result = process(self.world, *self.last, rulesets=RULESETS)
        self.world = result.world
        return result

    def send_again(self) -> Result:
        """The last message resent with its seq (as the module's outbox does after a lost ack)."""
        assert self.last is not None
        return process(self.world, *self.last, rulesets=RULESETS)

    def meet(self, combat: dict[str, Any], current: str | None, hook: str = "updateCombat",
             **extra: Any) -> Result:
        return self.hook(combat, current, hook, **extra)

    def hook(self, combat: dict[str, Any], current: str | None, hook: str = "updateCombat",
             **extra: Any) -> Result:
        pointer = {"round": combat.get("round"), "turn": None, "combatantId": current, "tokenId": None}
        return self.send("hook", {"hook": hook, "combat": combat, "current": pointer, **extra})

    def plan(self, combat_id: str) -> dict[str, Any]:
        plan = plan_of(self.world.combats[combat_id])
        del plan["combat_id"]
        return plan


def entries(plan: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["combatant_id"]: e for e in plan["order"]}
