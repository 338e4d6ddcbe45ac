"""The schemas themselves: valid Draft 2020-12, an $id each, every $ref resolves."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from adapter import protocol


def test_every_schema_is_valid_and_every_ref_resolves() -> None:
    assert protocol.check_schemas() == []


def test_every_message_of_the_protocol_has_a_schema() -> None:
    names = set(protocol.load_schemas())
    for message in ("auth", "hook", "intent", "ack", "plan", "prompt", "welcome", "superseded", "connect-error",
                    "session", "recording-line"):
        assert message in names


def test_every_intent_kind_has_an_args_schema_chosen_by_if_then() -> None:
    intent = protocol.load_schemas()["intent"]
    kinds = intent["properties"]["kind"]["enum"]
    routed = [branch["if"]["properties"]["kind"]["const"] for branch in intent["allOf"]]
    assert sorted(kinds) == sorted(routed)
    assert all(f"intents/{k}" in protocol.load_schemas() for k in kinds)


def test_a_dangling_ref_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "schemas"
    shutil.copytree(protocol.schema_dir(), folder)
    dash = folder / "intents" / "dash.schema.json"
    data = json.loads(dash.read_text())
    data["properties"]["amount"] = {"$ref": "common.schema.json#/$defs/id"}  # relative to intents/: wrong
    dash.write_text(json.dumps(data))
    monkeypatch.setattr(protocol, "schema_dir", lambda: folder)
    protocol.registry.cache_clear()
    try:
        problems = protocol.check_schemas()
    finally:
        protocol.registry.cache_clear()
    assert any("intents/dash" in p and "does not resolve" in p for p in problems)
