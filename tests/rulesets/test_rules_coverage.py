"""docs/rules-coverage.md stays true: every test and recording it names exists, and every
sentence of the three original texts has its row, quoted as the original has it.

``originals/`` is a copy of the shared rules folder's ``original/`` texts, so that the
repository's tests alone check the doc against them."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "rules-coverage.md"
ORIGINALS = Path(__file__).resolve().parent / "originals"
TEXTS = {"balanced-d20": "balanced-d20.ru.txt", "dice-pool": "dice-pool.ru.txt",
         "storyteller": "storyteller-delay.ru.txt"}


def sections() -> dict[str, str]:
    """The doc's text under each ruleset's heading."""
    parts = re.split(r"^## (\S+) \(", DOC.read_text(encoding="utf-8"), flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def test_every_test_the_doc_names_exists() -> None:
    named = set(re.findall(r"`([\w/.-]+\.py)::(\w+)", DOC.read_text(encoding="utf-8")))
    assert len(named) > 100
    defined: dict[str, set[str]] = {}
    for path in {p for p, _ in named}:
        file = ROOT / path if path.startswith("tests/") else ROOT / "tests" / "rulesets" / path
        tree = ast.parse(file.read_text(encoding="utf-8")) if file.exists() else ast.Module([], [])
        defined[path] = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    assert sorted(f"{p}::{n}" for p, n in named if n not in defined[p]) == []


def test_every_recording_the_doc_names_exists() -> None:
    for ruleset, text in sections().items():
        for name in re.findall(r"\[recording ([\w-]+)\]", text):
            assert (ROOT / "tests" / "recordings" / ruleset / f"{name}.jsonl").exists(), name


ABBREVIATIONS = r"(^\d|стр|см|макс|т\.е)\.$"


def original_sentences(path: Path) -> list[str]:
    """The text's sentences: split after . ! ? followed by a space (not inside quotes or
    brackets, not after an abbreviation) and at line ends."""
    sentences = []
    for line in path.read_text(encoding="utf-8").splitlines():
        depth, start = 0, 0
        for i, ch in enumerate(line):
            depth += {"«": 1, "»": -1, "(": 1, ")": -1}.get(ch, 0)
            if ch in ".!?" and depth == 0 and (i + 1 == len(line) or line[i + 1] == " ") \
                    and not re.search(ABBREVIATIONS, line[start:i + 1]):
                sentences.append(line[start:i + 1].strip())
                start = i + 1
        if line[start:].strip():
            sentences.append(line[start:].strip())
    return sentences


@pytest.mark.parametrize("ruleset", sorted(TEXTS))
def test_every_sentence_of_the_original_has_its_row_in_order(ruleset: str) -> None:
    quoted = re.findall(r"^\| \d+ \| «(.*?)» \|", sections()[ruleset], flags=re.M)
    assert quoted == original_sentences(ORIGINALS / TEXTS[ruleset])
