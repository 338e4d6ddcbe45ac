"""The recordings under ``tests/recordings/`` are what their builder scripts write: each
builder, run into an empty folder, writes every recording of its folder byte for byte (so a
change to a builder or to the payload builders it shares shows up here, not as a silently
stale recording)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

RECORDINGS = Path(__file__).resolve().parent / "recordings"
BUILDERS = sorted(RECORDINGS.glob("*/build_*.py"))


def load(script: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"builder_{script.stem}", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_ruleset_folder_has_a_builder() -> None:
    assert {s.parent.name for s in BUILDERS} == {"balanced-d20", "dice-pool", "foundry-core", "storyteller"}


@pytest.mark.parametrize("script", BUILDERS, ids=lambda s: s.parent.name)
def test_a_builder_writes_its_recordings_byte_for_byte(script: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = load(script)
    monkeypatch.setattr(module, "HERE", tmp_path)
    module.main()
    written = {p.name: p.read_bytes() for p in tmp_path.glob("*.jsonl")}
    committed = {p.name: p.read_bytes() for p in script.parent.glob("*.jsonl") if not p.name.endswith(".golden.jsonl")}
    assert written.keys() == committed.keys()
    for name, data in written.items():
        assert data == committed[name], f"{script.parent.name}/{name} is not what its builder writes"
