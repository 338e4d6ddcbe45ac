"""socket.io packets for the server: python-socketio's, with a quicker binary test and
pre-encoded JSON written as it is."""

from __future__ import annotations

from typing import Any

import orjson
import socketio.packet

from ..protocol.wirejson import Encoded


class Packet(socketio.packet.Packet):  # type: ignore[misc]
    """python-socketio's packet with a quicker test for binary attachments: data orjson can
    serialize holds no bytes (answered at C speed); otherwise the stock walk decides."""

    def encode(self) -> Any:
        """An ack whose one argument was encoded once (:class:`Encoded`) is written with that
        text as it is, the packet around it as python-socketio writes it."""
        data = self.data
        if type(data) is list and len(data) == 1 and type(data[0]) is Encoded and self.packet_type == socketio.packet.ACK:
            head = str(self.packet_type)
            if self.namespace is not None and self.namespace != "/":
                head += self.namespace + ","
            if self.id is not None:
                head += str(self.id)
            return f"{head}[{data[0].text}]"
        return super().encode()

    @classmethod
    def data_is_binary(cls, data: Any) -> bool:
        if type(data) is list and len(data) == 1 and type(data[0]) is Encoded:
            return False
        try:
            orjson.dumps(data)
        except TypeError:
            return bool(super().data_is_binary(data))
        return False
