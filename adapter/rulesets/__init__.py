"""The built-in rulesets, by id: :data:`RULESETS`, which the pipeline (and the tests) hand
the engine; the engine knows none of them by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ..engine.ruleset import Ruleset
from . import balanced_d20, dice_pool, foundry_core, storyteller

RULESETS: Mapping[str, Ruleset] = MappingProxyType(
    {rs.id: rs for rs in (foundry_core.RULESET, balanced_d20.RULESET, dice_pool.RULESET,
                          storyteller.RULESET)}
)
