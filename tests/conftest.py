"""Shared fixtures and options (helpers live in ``tests/support/`` and ``tests/foundry.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# ---------------------------------------------------------------- hypothesis: one answer per commit
# ``make test`` and ``.ci/run`` give the same answer on the same commit: every property test
# draws the same examples on every run (``derandomize``: the seed is a hash of the test
# function), keeps no example database between runs and has no deadline (a slow machine is
# not a failing property). ``--hypothesis-profile=random`` (hypothesis's own pytest option)
# draws afresh at every run and keeps the failures it finds in ``.hypothesis/`` to replay
# them first; ``--hypothesis-seed=N`` repeats such a run. docs/testing.md says how a failure
# found that way becomes a named example.
_QUIET = [HealthCheck.too_slow]  # a health check that measures time: not a property
settings.register_profile("repeatable", derandomize=True, database=None, deadline=None,
                          print_blob=True, suppress_health_check=_QUIET)
settings.register_profile("random", derandomize=False, deadline=None, print_blob=True,
                          suppress_health_check=_QUIET)
settings.load_profile("repeatable")

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def root() -> Path:
    return ROOT


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--full", action="store_true", default=False,
        help="run the long reliability variants (50 SIGKILLs, more fuzz cases)",
    )


# ---------------------------------------------------------------- the slow tiers
# ``make test`` runs everything; ``make test-fast`` (``-m "not (slow or subprocess or
# browser or services or wheel or bench)"``) leaves out the slow tiers, each marked here
# from where a test lives and what it asks for, so that a new test in one of them is marked
# without anyone remembering to (docs/testing.md).
# The tiers are registered in pyproject.toml ([tool.pytest.ini_options] markers).
#: folders, modules or single tests (node id prefixes) of one tier
TIER_PATHS = {
    "tests/hosted/": "services",
    "tests/bench/": "bench",
    "tests/reliability/test_limits.py::test_the_default_rate_limit_is_far_above_a_table_and_the_benchmark": "bench",
    "tests/test_wheel.py": "wheel",
    "tests/test_startup.py": "subprocess",  # each test runs ``python -c`` to time an import
    "tests/server/test_status_browser.py": "browser",
    "tests/test_replay_html.py": "browser",
    # thousands of generated messages through a real server or three validators: long-running
    "tests/reliability/test_hostile_input.py": "slow",
    "tests/reliability/test_fuzz_acks.py": "slow",
    "tests/protocol/test_fast_validation.py": "slow",
}
#: fixtures that bring a tier with them
TIER_FIXTURES = {"serve_factory": "subprocess", "browser": "browser", "services": "services"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        where = Path(str(item.path)).resolve().relative_to(ROOT).as_posix() + item.nodeid[len(item.nodeid.split("::")[0]):]
        tiers = {tier for prefix, tier in TIER_PATHS.items() if where.startswith(prefix)}
        tiers |= {tier for fixture, tier in TIER_FIXTURES.items() if fixture in getattr(item, "fixturenames", ())}
        for tier in sorted(tiers):
            item.add_marker(getattr(pytest.mark, tier))


# ---------------------------------------------------------------- the real documents ran
REAL_DOCUMENTS = "tests/test_real_combat_documents.py"
_real_documents_passed = 0
_real_documents_selected = 0


def pytest_collection_finish(session: pytest.Session) -> None:
    global _real_documents_selected
    _real_documents_selected = sum(1 for item in session.items if item.nodeid.startswith(REAL_DOCUMENTS))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    global _real_documents_passed
    if report.when == "call" and report.passed and report.nodeid.startswith(REAL_DOCUMENTS):
        _real_documents_passed += 1


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line ``.ci/run`` reads: how many tests met the real Combat documents of ../shared
    (none when the run did not select them, or they were skipped: no line then)."""
    if _real_documents_selected:
        terminalreporter.write_line(f"real Combat documents of ../shared: {_real_documents_passed} tests passed "
                                    f"(of {_real_documents_selected} selected)")
