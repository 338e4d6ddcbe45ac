"""Each accepted message is encoded once: the log stores those bytes, the ack goes out as the
bytes it was encoded to, replay writes them (issue 12)."""

from __future__ import annotations

import orjson

from adapter.benchkit.payloads import GM, hooks
from adapter.pipeline import Result, open_session, process
from adapter.protocol import wirejson
from adapter.replay import dumps
from adapter.rulesets import RULESETS


def run(count: int) -> list[tuple[dict[str, object], Result]]:
    world = open_session(None, {"world": "w", "ruleset": "foundry-core", "gm_users": [GM]}, rulesets=RULESETS)
    out = []
    for payload in hooks(count):
        result = process(world, "hook", payload, rulesets=RULESETS)
        world = result.world
        out.append((payload, result))
    return out


def test_an_accepted_hook_is_stored_as_the_text_it_was_encoded_to() -> None:
    for payload, result in run(12):
        stored = result.stored
        assert isinstance(stored, wirejson.Encoded)
        assert stored == payload and stored.text == orjson.dumps(payload).decode()


def test_an_accepted_hooks_ack_carries_its_text() -> None:
    for _, result in run(12):
        ack = result.ack
        assert isinstance(ack, wirejson.Encoded)
        assert orjson.loads(ack.text) == ack


def test_replay_writes_an_encoded_ack_as_it_writes_the_same_plain_ack() -> None:
    for number, (_, result) in enumerate(run(12), start=1):
        ack = result.ack
        line = {"in": number, "type": "ack", "data": ack}
        assert dumps(line) == dumps({**line, "data": dict(ack)})
