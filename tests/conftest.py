"""Shared fixtures and options (helpers live in ``tests/support/`` and ``tests/foundry.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.support.examples import FAST_PROFILE, fast_examples

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
# ``make test-fast`` (``--hypothesis-profile=fast``): ``repeatable`` with fewer examples, a
# tenth of hypothesis's 100; a test naming its own count asks ``examples(N)``
# (tests/support/examples.py), which gives a tenth of it here and ``N`` under every other profile.
settings.register_profile(FAST_PROFILE, parent=settings.get_profile("repeatable"),
                          max_examples=fast_examples(settings.get_profile("repeatable").max_examples))
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
    "tests/test_fast_loop.py::test_make_test_collects_every_test_of_the_fast_loop_and_more": "subprocess",
    "tests/server/test_status_browser.py": "browser",
    "tests/test_replay_html.py": "browser",
    # thousands of generated messages through a real server: long-running
    "tests/reliability/test_hostile_input.py": "slow",
    "tests/reliability/test_fuzz_acks.py": "slow",
    # a whole fight night through a faulty proxy that drops, swaps and cuts: seconds of resends
    "tests/reliability/test_ordering.py::test_dropped_duplicated_and_reordered_messages_are_applied_once_in_order": "slow",
    # waits on the clock: a token back in the rate bucket (2 s), the database watcher's look (2 s)
    "tests/reliability/test_limits.py::test_a_connection_past_its_rate_gets_rate_limited_and_its_seq_is_not_used_up": "slow",
    "tests/reliability/test_store_files.py::test_healthz_says_so_too_once_the_database_is_deleted": "slow",
    # guesses waiting their turn, one per 0.2 s or 0.1 s, a second each (the throttle's own turns
    # are checked on a fake clock in the fast loop: test_the_throttle_gives_each_attempt_...)
    "tests/reliability/test_limits.py::test_wrong_tokens_slow_down_guesses_but_never_lock_out_the_right_token": "slow",
    "tests/reliability/test_limits.py::test_wrong_tokens_for_a_world_slow_down_guesses_for_it_from_every_address": "slow",
    # ``serve`` started as a process under chmod, chattr or a read-only mount (not ``serve_factory``)
    "tests/reliability/test_store_files.py::test_a_read_only_database_is_named_read_only_not_damaged": "subprocess",
    "tests/reliability/test_store_files.py::test_the_same_database_made_writable_again_starts": "subprocess",
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
