"""Ruleset `dice-pool` (see ../shared/rules/README.md). Being built: registered so the id is known."""

from ...engine.ruleset import Ruleset, register

RULESET = register(Ruleset(id="dice-pool"))
