"""The settings contract (schemas/settings.schema.json): each ruleset reads exactly the settings
it lists; a connect whose settings the ruleset does not read, or with a bad value, is refused as
``invalid_message`` with the JSON path, and changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from adapter import protocol
from tests.support.sidecar import Running, auth, connect, refused

#: what the module sends per ruleset (vtt_module/scripts/settings.js `rulesetSettings`)
FULL: dict[str, dict[str, Any]] = {
    "foundry-core": {},
    "balanced-d20": {
        "auto_approve_rerolls": True,
        "stat_paths": {"dex": "system.abilities.dex.mod", "int": "system.abilities.int.mod",
                       "proficient": "system.skills"},
    },
    "dice-pool": {
        "die_faces": 10, "success_at": 8, "ones_cancel": False,
        "stat_paths": {"reaction": "system.attributes.reaction.value", "wits": "system.attributes.wits.value",
                       "size": "system.traits.size.value", "pool_modifier": "system.attributes.pool.mod"},
    },
    "storyteller": {"stat_paths": {"initiative_mod": "system.attributes.init.value"}},
}


@pytest.mark.parametrize("ruleset", sorted(FULL))
async def test_each_ruleset_accepts_exactly_the_settings_it_lists(sidecar: Running, ruleset: str) -> None:
    client = await connect(sidecar.url, auth(world=f"w{ruleset.replace('-', '')}0000001", ruleset=ruleset,
                                             settings=FULL[ruleset]))
    welcome = await client.welcome
    assert welcome["ruleset"] == ruleset
    await client.sio.disconnect()


@pytest.mark.parametrize("ruleset, settings, path", [
    ("foundry-core", {"stat_paths": {"dex": "system.abilities.dex.mod"}}, "/settings"),
    ("balanced-d20", {"die_faces": 6}, "/settings"),
    ("balanced-d20", {"auto_approve_rerolls": "yes"}, "/settings/auto_approve_rerolls"),
    ("balanced-d20", {"stat_paths": {"dex": "system abilities"}}, "/settings/stat_paths/dex"),
    ("dice-pool", {"die_faces": "6"}, "/settings/die_faces"),
    ("dice-pool", {"success_at": 1}, "/settings/success_at"),
    ("dice-pool", {"stat_paths": {"dex": "system.abilities.dex.mod"}}, "/settings/stat_paths"),
    ("storyteller", {"auto_approve_rerolls": False}, "/settings"),
])
async def test_a_setting_the_ruleset_does_not_read_or_a_bad_value_is_refused_with_its_path(
    sidecar: Running, ruleset: str, settings: dict[str, Any], path: str
) -> None:
    world = "wRefused00000001"
    error = await refused(sidecar.url, auth(world=world, ruleset=ruleset, settings=settings))
    assert error["code"] == "invalid_message"
    assert error["path"] == path
    protocol.check_outbound("connect-error", error)
    # nothing changed: the world is still unknown to the sidecar
    client = await connect(sidecar.url, auth(world=world, ruleset=ruleset, settings={}))
    welcome = await client.welcome
    assert (welcome["last_seq"], welcome["combats"]) == (0, [])
    await client.sio.disconnect()
