"""The pure rule engine: no I/O, no clock, no randomness.

``apply(world, message, rulesets) -> Outcome`` is the one entry point; the caller gives it
the rulesets by id (the built-in ones are :data:`adapter.rulesets.RULESETS`). The engine
imports nothing of the project outside itself but :mod:`adapter.errors`.
"""

from .apply import apply, plan_of
from .model import Combat, Combatant, Hook, Intent, Notice, Outcome, Prompt, Session, World
from .ruleset import Entry, Ruleset, get_ruleset, known_rulesets, register

__all__ = [
    "Combat", "Combatant", "Entry", "Hook", "Intent", "Notice", "Outcome", "Prompt", "Ruleset",
    "Session", "World", "apply", "get_ruleset", "known_rulesets", "plan_of", "register",
]
