"""The pure rule engine: no I/O, no clock, no randomness. ``apply(world, message, rulesets)``
is its one entry point; its design: README ("Developing") and docs/engine.md.
"""

from .apply import apply, plan_of
from .messages import Hook, Intent
from .model import Combat, Combatant, Notice, Outcome, Prompt, Session, World
from .ruleset import Entry, Ruleset

__all__ = [
    "Combat", "Combatant", "Entry", "Hook", "Intent", "Notice", "Outcome", "Prompt", "Ruleset",
    "Session", "World", "apply", "plan_of",
]
