"""The shape check of a message read from the wire: its depth read from orjson's text, its
non-finite numbers read as :class:`wirejson.NonFinite` (which orjson will not write), so it
refuses exactly what the walk refuses, with the same text and path."""

from __future__ import annotations

import json
import math
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapter.benchkit.payloads import GM, hooks
from adapter.config import DEFAULT_MAX_BYTES
from adapter.errors import InvalidMessage
from adapter.pipeline import open_session, process
from adapter.protocol import MAX_DEPTH, check_shape, shallow, wirejson
from adapter.replay import Replay
from adapter.rulesets import RULESETS
from tests.support.examples import examples

#: text whose characters are the ones the depth reading must not be fooled by
TRICKY = st.text(alphabet='[]{}"\\/:,ab \u00e9\u2603\U0001f600\n', max_size=8)
SCALARS = st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False) | TRICKY


def nested(depth: int) -> st.SearchStrategy[Any]:
    return st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TRICKY, inner, max_size=3),
                        max_leaves=depth * 3)


def refusal(value: Any, **kwargs: Any) -> tuple[str, str | None] | None:
    try:
        check_shape(value, **kwargs)
    except InvalidMessage as error:
        return error.message, error.path
    return None


def deepest_path(value: Any) -> int:
    """The longest path to any value (what MAX_DEPTH bounds)."""
    if isinstance(value, dict) and value:
        return 1 + max(deepest_path(v) for v in value.values())
    if isinstance(value, list) and value:
        return 1 + max(deepest_path(v) for v in value)
    return 0


@settings(max_examples=examples(400), deadline=None)
@given(nested(12), st.integers(0, 8))
def test_the_depth_read_from_the_text_never_accepts_what_the_walk_refuses(value: Any, limit: int) -> None:
    text = orjson.dumps(value)
    assert wirejson.loads(text) == value
    if shallow(text, limit):
        assert deepest_path(value) <= limit
        assert refusal(value, max_depth=limit) is None
    # the walk and the wire check agree on every message, whichever path decides
    assert refusal(value, max_depth=limit, encoded=text, from_wire=True) == refusal(value, max_depth=limit)


def test_the_depth_read_from_the_text_decides_the_usual_message_alone() -> None:
    hook = list(hooks(2))[1]
    text = orjson.dumps(hook)
    assert b"\\" not in text and b"[" in text  # brackets inside strings are tested above
    assert shallow(text, MAX_DEPTH)
    assert not shallow(text, deepest_path(hook) - 1)


@pytest.mark.parametrize("limit", [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1])
def test_a_chain_around_the_limit_is_refused_at_the_same_path(limit: int) -> None:
    chain: Any = 1
    for i in range(limit):
        chain = [chain] if i % 2 else {"k": chain}
    text = orjson.dumps(chain)
    assert (refusal(chain, encoded=text, from_wire=True) is None) == (limit <= MAX_DEPTH)
    assert refusal(chain, encoded=text, from_wire=True) == refusal(chain)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e400", "-1e400"])
def test_a_number_json_cannot_hold_is_read_as_nonfinite_and_refused_as_before(literal: str) -> None:
    text = '{"seq": 1, "deep": {"x": [0, LITERAL]}}'.replace("LITERAL", literal)
    value = wirejson.loads(text)
    number = value["deep"]["x"][1]
    assert type(number) is wirejson.NonFinite and not math.isfinite(number)
    assert str(number) == str(json.loads(text)["deep"]["x"][1])  # the refusal's text is the float's
    with pytest.raises(TypeError):
        orjson.dumps(value)  # so a message holding one never has orjson's text
    as_float = json.loads(text)
    assert refusal(value, encoded=None, from_wire=True) == refusal(as_float)
    assert refusal(value, encoded=None, from_wire=True) == (f"{number} is not a JSON number", "/deep/x/1")


SESSION = {"world": "w", "ruleset": "foundry-core", "settings": {}, "gm_users": [GM], "protocol": 1,
           "module_version": "t", "foundry_version": "13.350", "system": "dnd5e"}


def _session() -> Any:
    return open_session(None, SESSION, rulesets=RULESETS)


@pytest.mark.parametrize("literal", ["NaN", "-Infinity", "1e999"])
def test_a_hook_with_a_nan_read_from_the_wire_gets_the_same_refusal_as_one_built_in_python(literal: str) -> None:
    hook = list(hooks(1))[0]
    text = orjson.dumps(hook).decode().replace('"world_time":', f'"world_time":{literal},"was":', 1)
    from_wire = process(_session(), "hook", wirejson.loads(text), from_wire=True, rulesets=RULESETS)
    built = process(_session(), "hook", json.loads(text), rulesets=RULESETS)
    assert from_wire.ack == built.ack
    assert from_wire.ack["ok"] is False and from_wire.ack["error"]["path"] == "/world_time"


def test_replay_reads_a_nan_line_as_the_server_does() -> None:
    hook = list(hooks(1))[0]
    line = orjson.dumps({"event": "hook", "data": hook}).decode().replace('"world_time":', '"world_time":NaN,"was":', 1)
    replay = Replay(rulesets=RULESETS)
    list(replay.feed(1, json.dumps({"event": "session", "data": SESSION})))
    (ack,) = list(replay.feed(2, line))
    assert ack["data"] == {"ok": False, "seq": 1, "error": {
        "code": "invalid_message", "message": "nan is not a JSON number", "path": "/world_time"}}


def test_a_nan_message_past_the_size_limit_is_refused_too_large_as_before() -> None:
    """orjson wrote a NaN float as ``null``, so the size of such a message was exact and a
    message past the limit was refused ``too_large`` before its NaN was looked at; a
    NonFinite (which orjson refuses) is counted the same way, whichever reader read it."""
    pad = "\u00e9" * (DEFAULT_MAX_BYTES // 2)  # two bytes each: past the limit in bytes only
    text = '{"seq":1,"user":"g","world_time":0,"hook":"updateCombat","pad":"' + pad + '","x":NaN}'
    from_wire = process(_session(), "hook", wirejson.loads(text), from_wire=True, rulesets=RULESETS)
    built = process(_session(), "hook", json.loads(text), rulesets=RULESETS)
    assert from_wire.ack == built.ack
    assert from_wire.ack["error"]["code"] == "too_large"
    assert f"the message has {len(text.encode()) + 1} bytes" in from_wire.ack["error"]["message"]  # NaN -> null: one byte more


def test_replay_reads_a_line_as_the_server_reads_a_frame() -> None:
    """An integer too long for Python to read is refused with its path, as the server refuses
    it (replay used to skip the line as "not JSON", so every later seq differed), and JSON
    nested too deep for any reader is a problem reported, not a crash."""
    hook = list(hooks(1))[0]
    line = orjson.dumps({"event": "hook", "data": hook}).decode().replace('"world_time":', '"world_time":' + "9" * 5000 + ',"was":', 1)
    replay = Replay(rulesets=RULESETS)
    list(replay.feed(1, json.dumps({"event": "session", "data": SESSION})))
    (ack,) = list(replay.feed(2, line))
    assert ack["data"] == {"ok": False, "seq": 1, "error": {
        "code": "invalid_message", "message": "an integer of 5000 digits is not a value a message may hold",
        "path": "/world_time"}}
    assert list(replay.feed(3, "[" * 100_000 + "]" * 100_000)) == []
    assert replay.problems[-1].startswith("line 3: not JSON")
