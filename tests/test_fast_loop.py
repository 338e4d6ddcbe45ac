"""The fast loop stays a part of ``make test`` (docs/testing.md, "The slow tiers").

``make test-fast`` leaves out the slow tiers (markers set in tests/conftest.py) and draws fewer
hypothesis examples (the ``fast`` profile, tests/support/examples.py); ``make test`` runs every
test with every example. These tests keep the two in step: every tier is registered and left
out by the fast loop's expression, every place a tier names still exists, the fast profile
changes nothing but the number of examples, and ``make test`` collects every test of the fast
loop and more.
"""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
import tomllib

from hypothesis import settings

from tests.conftest import ROOT, TIER_FIXTURES, TIER_PATHS
from tests.support.examples import FAST_FLOOR, FAST_PROFILE, examples

MAKEFILE = (ROOT / "Makefile").read_text()
PYTEST_OPTIONS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]


def registered_markers() -> set[str]:
    return {line.split(":", 1)[0] for line in PYTEST_OPTIONS["markers"]}


def fast_expression() -> str:
    found = re.search(r"^FAST := (.+)$", MAKEFILE, re.MULTILINE)
    assert found is not None, "the Makefile defines no FAST expression"
    return found.group(1).strip()


def recipe(target: str) -> str:
    """The commands of one Makefile target, joined."""
    found = re.search(rf"^{re.escape(target)}:[^\n]*\n((?:\t[^\n]*\n)+)", MAKEFILE, re.MULTILINE)
    assert found is not None, f"no target {target} in the Makefile"
    return found.group(1)


def test_every_tier_is_registered_and_left_out_by_the_fast_loop() -> None:
    tiers = set(TIER_PATHS.values()) | set(TIER_FIXTURES.values())
    assert tiers <= registered_markers()
    left_out = re.fullmatch(r"not \(([\w ]+)\)", fast_expression())
    assert left_out is not None, fast_expression()
    assert set(left_out.group(1).split(" or ")) == registered_markers()


def test_every_place_a_tier_names_still_exists() -> None:
    """A renamed file or test would fall silently into the fast loop."""
    for where in TIER_PATHS:
        path, _, test = where.partition("::")
        assert (ROOT / path).exists(), where
        if test:
            assert re.search(rf"^(async )?def {re.escape(test)}\(", (ROOT / path).read_text(), re.MULTILINE), where


def test_make_test_fast_selects_by_the_tiers_and_the_fast_profile_and_make_test_by_nothing() -> None:
    assert '-m "$(FAST)"' in recipe("test-fast") and f"--hypothesis-profile={FAST_PROFILE}" in recipe("test-fast")
    selecting = re.compile(r"(^|\s)(-m|-k|--deselect|--ignore\S*|--hypothesis-profile\S*)(\s|=|$)")
    options = recipe("test-python").partition("-m pytest")[2]
    assert options and not selecting.search(options), recipe("test-python")
    assert not selecting.search(PYTEST_OPTIONS["addopts"]), PYTEST_OPTIONS["addopts"]


def test_the_fast_profile_differs_from_repeatable_only_by_fewer_examples() -> None:
    fast, repeatable = settings.get_profile(FAST_PROFILE), settings.get_profile("repeatable")
    names = [n for n in inspect.signature(settings.__init__).parameters if n not in ("self", "parent")]
    assert "max_examples" in names and "derandomize" in names
    differing = {n for n in names if getattr(fast, n) != getattr(repeatable, n)}
    assert differing == {"max_examples"}
    assert 0 < fast.max_examples < repeatable.max_examples


def test_a_count_is_kept_under_every_profile_but_fast_which_lowers_it() -> None:
    for n in range(1, 1001):
        assert examples(n, "repeatable") == n and examples(n, "random") == n
        fewer = examples(n, FAST_PROFILE)
        assert 1 <= fewer <= n
        assert fewer < n if n > FAST_FLOOR else fewer == n
    assert examples(300) == examples(300, settings.get_current_profile_name())


def collected(*options: str) -> set[str]:
    run = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *options],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return {line for line in run.stdout.splitlines() if "::" in line}


def test_make_test_collects_every_test_of_the_fast_loop_and_more() -> None:
    everything = collected()
    fast = collected("-m", fast_expression(), f"--hypothesis-profile={FAST_PROFILE}")
    assert fast and fast < everything
