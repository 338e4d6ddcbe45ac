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
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

import pytest

from adapter.errors import RuleViolation, SidecarError
from tests.support.table import RAISED_AT

ADAPTER = Path(__file__).resolve().parents[2] / "adapter"
RULE_IDS = {
    "balanced-d20": {f"BI-{n}" for n in range(1, 6)},
    "dice-pool": {f"DP-{n}" for n in range(1, 8)},
    "storyteller": {f"ST-{n}" for n in range(1, 6)},
}
CITED = re.compile(r"\b(?:BI|DP|ST)-\d+\b")


def wire(message: Any) -> dict[str, Any]:
    """The message as a JSON-like dict (a Hook or Intent dataclass, or a wire payload)."""
    if is_dataclass(message) and not isinstance(message, type):
        return {f.name: getattr(message, f.name) for f in fields(message)}
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
    """The file and line of the ``raise`` that made the refusal (the table traces it inside the
    pipeline: ``Table.trace_raises``)."""
    file, line = RAISED_AT[info.value]
    return str(Path(file).resolve()), line


def rule_violation_sites(*files: Path, unless: Sequence[str] = ()) -> set[tuple[str, int]]:
    """Every ``raise RuleViolation(...)`` in ``files``, but those whose source holds one of
    ``unless`` (at most one site each)."""
    sites: set[tuple[str, int]] = set()
    for path in files:
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            if (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
                    and isinstance(node.exc.func, ast.Name) and node.exc.func.id == "RuleViolation"):
                source = ast.get_source_segment(text, node) or ""
                if not any(phrase in source for phrase in unless):
                    sites.add((str(path.resolve()), node.lineno))
    return sites


def expect(info: pytest.ExceptionInfo[SidecarError], sent: Any, ruleset: str, code: str,
           rule: str | None, path: str | None) -> None:
    """The refusal is the one the table expects, and it agrees with itself."""
    error = info.value
    assert (error.code, error.rule, error.path) == (code, rule, path), error.message
    agrees(error, sent, ruleset)


def assert_reaches(hit: set[tuple[str, int]], *files: Path, schema_guarded: Sequence[str] = ()) -> None:
    """Every ``raise RuleViolation`` in ``files`` was reached by the table (which sends wire
    messages through the pipeline), but the checks of what the message's schema already
    refuses: a raise whose source holds one of ``schema_guarded`` cannot be reached from the
    wire (issue 12 lists these double checks); each phrase names at most one site."""
    for phrase in schema_guarded:
        named = len(rule_violation_sites(*files)) - len(rule_violation_sites(*files, unless=(phrase,)))
        assert named <= 1, f"{phrase!r} names {named} raises"
    missing = rule_violation_sites(*files, unless=schema_guarded) - hit
    assert not missing, sorted(missing)
