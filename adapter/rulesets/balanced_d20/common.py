"""Small helpers the rule functions share: the combatant and the prompt an intent names."""

from __future__ import annotations

from msgspec.structs import replace

from ...engine.context import Ctx
from ...engine.model import Combat, Combatant, Prompt
from ...engine.order import by_id, place_by_rules
from ...errors import UnknownPrompt
from .state import stat


def sort_key(combat: Combat, combatant: Combatant) -> tuple[float, ...]:
    """Section 1's tie ruling: "the higher Dex modifier first, then Foundry's own order
    (`_id`)"."""
    score = combatant.score if combatant.score is not None else 0.0
    return (score, float(stat(combatant, "dex")), *by_id(combatant.id))


def replace_in_order(combat: Combat, cid: str) -> Combat:
    """Re-place one combatant among the turns still to come (a turn in progress stays)."""
    return replace(combat, order=place_by_rules(combat, cid, sort_key))


def declared_by(ctx: Ctx, combat: Combat, combatant_id: str, what: str) -> Combatant:
    """The combatant an intent is about; its user must own it or be a GM."""
    combatant = ctx.combatant(combat, combatant_id)
    ctx.require_owner(combatant, what)
    return combatant


def pending_prompt(ctx: Ctx, combat: Combat, prompt_id: str, kind: str) -> Prompt:
    """The pending prompt of ``kind`` that the intent's ``prompt_id`` names.

    An unknown or answered prompt, or one of another combat, is ``unknown_prompt``.
    """
    prompt = ctx.pending(prompt_id)
    if prompt is None or prompt.kind != kind or prompt.combat_id != combat.id:
        raise UnknownPrompt(
            f"there is no pending {kind} prompt {prompt_id!r} (unknown or already answered)",
            field="prompt_id",
        )
    return prompt
