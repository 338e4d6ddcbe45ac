"""HTML for people: one Jinja2 environment over ``adapter/templates/``, escaping on; every
text a player controls reaches HTML only through these templates.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jinja2 import Environment


@cache
def environment() -> Environment:
    """Built on the first page rendered (Jinja2 is not imported at start-up)."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    return Environment(
        loader=PackageLoader("adapter", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def source(name: str) -> str:
    """A template file's text as it is (the status page's script and style): read at start-up,
    so without Jinja2."""
    folder = Path(__file__).resolve().parent / "templates"  # the folder PackageLoader reads
    return (folder / name).read_text(encoding="utf-8")
