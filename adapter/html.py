"""HTML for people: one Jinja2 environment over ``adapter/templates/``, escaping on.

Every text a player controls (world ids, combatant and actor names, arguments echoed in a
refusal) reaches HTML only through these templates, so it is escaped wherever it lands.
"""

from __future__ import annotations

from functools import cache

from jinja2 import Environment, PackageLoader, StrictUndefined


@cache
def environment() -> Environment:
    return Environment(
        loader=PackageLoader("adapter", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def source(name: str) -> str:
    """A template file's text as it is (the status page's script and style)."""
    env = environment()
    assert env.loader is not None
    return env.loader.get_source(env, name)[0]
