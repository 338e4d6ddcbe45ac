"""socket.io's JSON: orjson where it agrees with the standard library, the library elsewhere."""

from __future__ import annotations

import json
import math

from adapter.engine.plan import finite
from adapter.protocol import wirejson
from adapter.server.packet import Packet


def test_plain_values_come_out_compact_and_read_back_the_same() -> None:
    value = {"ok": True, "seq": 3, "plans": [{"initiative": 12.0, "current": None, "name": "Жмых"}]}
    text = wirejson.dumps(value)
    assert " " not in text and "Жмых" in text
    assert json.loads(text) == value


def test_a_nan_anywhere_is_written_as_the_standard_library_does_not_as_null() -> None:
    value = {"a": [1, {"b": float("nan")}], "c": None}
    assert wirejson.dumps(value) == json.dumps(value)


def test_integers_beyond_64_bits_and_nan_literals_still_pass() -> None:
    big = {"seq": 2**70}
    assert json.loads(wirejson.dumps(big)) == big
    assert math.isnan(wirejson.loads('{"x": NaN}')["x"])


def test_nonfinite_search_sees_nested_and_subclassed_floats() -> None:
    class Score(float):
        pass

    assert not finite([{"x": (1.0, Score("inf"))}])
    assert finite({"a": [1.5, None, "x", (2.0,)], "b": {"c": -0.0}})


def test_the_packet_still_finds_binary_attachments_anywhere() -> None:
    assert Packet.data_is_binary(["hook", {"a": [1, {"b": b"\x00"}]}])
    assert Packet.data_is_binary([bytearray(b"x")])
    assert not Packet.data_is_binary(["hook", {"a": [1, {"b": "text", "n": None}]}])
    assert not Packet.data_is_binary([{"seq": 2**70}])  # orjson refuses it; no bytes either


def stock_text(packet_type: int, data: list[object], id: int | None = None, namespace: str | None = None) -> str:
    """What python-socketio's packet writes with this module as its JSON."""
    packet = Packet(packet_type, data=data, id=id, namespace=namespace)
    packet.json = wirejson
    return str(Packet.__mro__[1].encode(packet))


def test_an_ack_encoded_once_is_sent_as_the_same_text_python_socketio_would_write() -> None:
    ack = {"ok": True, "seq": 7, "plans": [{"initiative": 12.5, "current": None, "name": "Жмых"}],
           "prompts": [], "notices": []}
    once = wirejson.encoded(ack)
    assert type(once) is wirejson.Encoded and once == ack
    for id_, namespace in ((12, None), (None, None), (3, "/other")):
        sent = Packet(3, data=[once], id=id_, namespace=namespace).encode()
        assert sent == stock_text(3, [dict(ack)], id_, namespace)
    assert not Packet.data_is_binary([once])


def test_a_nonfinite_number_keeps_the_old_path_so_its_text_does_not_change() -> None:
    ack = {"ok": True, "seq": 1, "detail": {"x": float("inf")}, "current": None}
    once = wirejson.encoded(ack)
    assert type(once) is dict
    assert Packet(3, data=[once], id=4).encode() == "34" + json.dumps([ack], separators=(",", ":"))


def test_what_orjson_refuses_is_not_encoded_once() -> None:
    assert type(wirejson.encoded({"seq": 2**70})) is dict
