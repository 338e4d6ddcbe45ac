"""Cross-process rooms (hosted mode, ``--redis redis://...``): python-socketio's own
``AsyncRedisManager``, so an emit to a world's room reaches that world's connections
whichever process holds them.

The manager emits to this process's connections first, then publishes on Redis; a publish
that fails (Redis down) is logged by python-socketio and dropped, so each world's own
connection keeps being served, and its listener reconnects by itself (docs/hosting.md).
Connecting to Redis gives up after a second, so a blackholed Redis delays an emit by at most
that, not an ack by the kernel's TCP timeout.
"""

from __future__ import annotations

import socketio


def room_manager(url: str) -> socketio.AsyncRedisManager:
    return socketio.AsyncRedisManager(url, redis_options={"socket_connect_timeout": 1.0})
