"""The built-in rulesets, by id: :data:`RULESETS` is their registry.

The engine knows none of them by name; the pipeline (and anyone else applying messages)
hands it this mapping. Each is also given to :func:`adapter.engine.ruleset.register`, the
engine-level table that ``apply`` falls back on when called without ``rulesets`` (the
engine's and the rulesets' own tests do).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ..engine.ruleset import Ruleset, register
from . import balanced_d20, dice_pool, foundry_core, storyteller

RULESETS: Mapping[str, Ruleset] = MappingProxyType(
    {rs.id: rs for rs in (foundry_core.RULESET, balanced_d20.RULESET, dice_pool.RULESET,
                          storyteller.RULESET)}
)

for _ruleset in RULESETS.values():
    register(_ruleset)
