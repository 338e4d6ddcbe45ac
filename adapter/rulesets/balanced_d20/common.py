"""Small helpers the rule functions share: finding the combat and combatant an intent names."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...engine.context import Ctx
from ...engine.events import Declared
from ...engine.model import Combat, Combatant, Prompt
from ...engine.order import place_by_rules
from ...errors import InvalidMessage, UnknownCombat, UnknownPrompt
from .state import stat


def sort_key(combat: Combat, combatant: Combatant) -> tuple[float, float]:
    """Ties in initiative: the higher Dex modifier first (ruling), then ``_id`` (engine)."""
    score = combatant.score if combatant.score is not None else 0.0
    return (score, float(stat(combatant, "dex")))


def replace_in_order(combat: Combat, cid: str) -> Combat:
    """Re-place one combatant among the turns still to come (a turn in progress stays)."""
    return replace(combat, order=place_by_rules(combat, cid, sort_key))


def need_combat(combat: Combat | None, event: Declared) -> Combat:
    if combat is None:
        raise InvalidMessage(f"intent {event.kind!r} needs a combat_id", path="")
    return combat


def declared_by(ctx: Ctx, combat: Combat | None, event: Declared, what: str) -> tuple[Combat, Combatant]:
    """The combat and the combatant an intent is about; its user must own it or be a GM."""
    combat = need_combat(combat, event)
    if event.combatant_id is None:
        raise InvalidMessage(f"intent {event.kind!r} needs a combatant_id", path="")
    combatant = ctx.combatant(combat, event.combatant_id)
    ctx.require_owner(combatant, what)
    return combat, combatant


def pending_prompt(ctx: Ctx, combat: Combat | None, args: Mapping[str, Any], kind: str) -> tuple[Prompt, Combat]:
    """The pending prompt of ``kind`` that ``args.prompt_id`` names, and its combat.

    An unknown or answered prompt, or one of another combat, is ``unknown_prompt``.
    """
    prompt_id = str(arg(args, "prompt_id"))
    prompt = ctx.pending(prompt_id)
    if (
        prompt is None
        or prompt.kind != kind
        or (combat is not None and prompt.combat_id != combat.id)
    ):
        raise UnknownPrompt(
            f"there is no pending {kind} prompt {prompt_id!r} (unknown or already answered)",
            path="/args/prompt_id",
        )
    if combat is None:
        combat = ctx.world.combats.get(prompt.combat_id or "")
        if combat is None:
            raise UnknownCombat(f"combat {prompt.combat_id!r} is not known", path="/combat_id")
    return prompt, combat


def arg(args: Mapping[str, Any], name: str) -> Any:
    if name not in args:
        raise InvalidMessage(f"args lacks the field {name!r}", path="/args")
    return args[name]
