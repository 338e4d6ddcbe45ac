"""The rulesets, each registered with the engine under its id on import."""

from . import balanced_d20, dice_pool, foundry_core, storyteller  # noqa: F401
