"""The pure rule engine: no I/O, no clock, no randomness.

``apply(world, message, rulesets) -> Outcome`` is the one entry point; the caller gives it
a typed message (:mod:`.messages`, decoded from the wire by :func:`adapter.pipeline.decode`)
and the rulesets by id (the built-in ones are :data:`adapter.rulesets.RULESETS`). The engine
imports nothing of the project outside itself but :mod:`adapter.errors`, and nothing outside
the standard library but ``msgspec`` (the message classes, :mod:`.messages`).

The design in short:

- **messages** (:mod:`.messages`): frozen ``msgspec.Struct`` classes, one per hook kind and
  one per intent schema, decoded once after the JSON Schema check; rules read typed fields.
- **dispatch** (:mod:`.ruleset`): a ruleset lists its rules by the class they take,
  ``on = {Rolled: (initiative_roll, clever_reroll_on_roll), ...}`` for the events of
  :mod:`.events` (in that order) and ``intents = {Dash: initiative_dash, ...}``; every rule is
  typed to its class and does not test what it was given. A rule handling several classes has
  one function per class, named after the rule (``clever_reroll_on_roll``,
  ``clever_reroll_decide``).
- **refusals** name a field of the message (``field="amount"``, ``field=("roll", "roll")``);
  :func:`adapter.pipeline.field_pointer` turns it into the wire's JSON pointer (``/args/amount``).
- **shared mechanics** (hold/act, :func:`.holding.hold_mechanics`) are built per ruleset from
  its rule ids; the ruleset a message is applied under is looked up once and travels in the
  context alone (``ctx.ruleset``; no function takes it beside the context).
- **turns** (:mod:`.turns`): Foundry's report is classified as a move (start, advance,
  new_round, back, reset, none) and ``(phase, move)`` looked up in ``TURN_TABLE`` for the
  handler and the phase it ends in; a pair the table lacks is refused ``internal_error``.
- **preview** (:mod:`.preview`): the plan's ``next_round`` is computed once per round and
  reused while the round goes the way it played it (checked state by state).
"""

from .apply import apply, plan_of
from .messages import Hook, Intent
from .model import Combat, Combatant, Notice, Outcome, Prompt, Session, World
from .ruleset import Entry, Ruleset

__all__ = [
    "Combat", "Combatant", "Entry", "Hook", "Intent", "Notice", "Outcome", "Prompt", "Ruleset",
    "Session", "World", "apply", "plan_of",
]
