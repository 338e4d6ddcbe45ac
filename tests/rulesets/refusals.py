"""Refusals agree with themselves: message, rule id and path (issue 11, "also wrong today").

Each ruleset's ``test_*_refusals.py`` walks a table of refusals, one or more for every
``raise RuleViolation`` the ruleset can reach, and checks each with :func:`agrees`:

- every rule id the message cites (``BI-2``, ``DP-5``, ``ST-4``...) is the error's rule id;
- a ``rule_violation``'s rule id is one of its ruleset's rules (or the ruleset's own id, for
  what no numbered rule says, e.g. an intent the ruleset does not have);
- the path is a JSON pointer to a field of the refused message as the module sent it.

:func:`rule_violation_sites` lists every ``raise RuleViolation(...)`` in the given source
files, so a test can require that its table reaches all of them (:func:`raise_site`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from adapter.engine.messages import Hook, Intent
from adapter.errors import RuleViolation, SidecarError
from tests import decoded

ADAPTER = Path(__file__).resolve().parents[2] / "adapter"
RULE_IDS = {
    "balanced-d20": {f"BI-{n}" for n in range(1, 6)},
    "dice-pool": {f"DP-{n}" for n in range(1, 8)},
    "storyteller": {f"ST-{n}" for n in range(1, 6)},
}
CITED = re.compile(r"\b(?:BI|DP|ST)-\d+\b")


def wire(message: Any) -> dict[str, Any]:
    """The message as a JSON-like dict (a decoded Hook or Intent, or a wire payload)."""
    if isinstance(message, (Hook, Intent)):
        return decoded.wire(message)
    return dict(message)


def resolves(doc: Any, pointer: str) -> bool:
    """Whether the JSON pointer names a field present in ``doc`` ("" is the whole message)."""
    if pointer == "":
        return True
    node = doc
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and token in node:
            node = node[token]
        elif isinstance(node, Sequence) and not isinstance(node, str) and token.isdigit() \
                and int(token) < len(node):
            node = node[int(token)]
        else:
            return False
    return True


def agrees(error: SidecarError, message: Any, ruleset: str) -> None:
    cited = set(CITED.findall(error.message))
    assert cited <= {error.rule}, f"the message cites {sorted(cited)} but the rule is {error.rule}"
    if isinstance(error, RuleViolation):
        assert error.rule in RULE_IDS[ruleset] | {ruleset}, error.rule
    if error.path is not None:
        assert resolves(wire(message), error.path), f"{error.path} is not in the message"


def raise_site(info: pytest.ExceptionInfo[SidecarError]) -> tuple[str, int]:
    """The file and line of the ``raise`` that made the refusal."""
    entry = info.traceback[-1]
    return str(Path(entry.path).resolve()), entry.lineno + 1


def rule_violation_sites(*files: Path) -> set[tuple[str, int]]:
    sites: set[tuple[str, int]] = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
                    and isinstance(node.exc.func, ast.Name) and node.exc.func.id == "RuleViolation"):
                sites.add((str(path.resolve()), node.lineno))
    return sites


def expect(info: pytest.ExceptionInfo[SidecarError], sent: Any, ruleset: str, code: str,
           rule: str | None, path: str | None) -> None:
    """The refusal is the one the table expects, and it agrees with itself."""
    error = info.value
    assert (error.code, error.rule, error.path) == (code, rule, path), error.message
    agrees(error, sent, ruleset)


def assert_reaches(hit: set[tuple[str, int]], *files: Path) -> None:
    """Every ``raise RuleViolation`` in ``files`` was reached by the table."""
    missing = rule_violation_sites(*files) - hit
    assert not missing, sorted(missing)
