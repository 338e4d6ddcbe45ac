"""nginx's ``hash $arg_world consistent`` ring, computed as nginx computes it, to say where
worlds go and how evenly (``bench --hosted --tables`` compares it with what it measured).

nginx (ngx_http_upstream_hash_module, ``consistent``: ketama) gives each server
``160 x weight`` points: the CRC-32 of ``host \\0 port`` followed by the previous point's 4
bytes (little-endian), the first following 0. A key goes to the server of the first point at
or after the CRC-32 of the key, wrapping around.
"""

from __future__ import annotations

import bisect
import struct
import zlib
from collections.abc import Sequence

POINTS_PER_WEIGHT = 160


def ring(servers: Sequence[str], weight: int = 1) -> tuple[list[int], list[int]]:
    """The ring's sorted points and, for each, the index of its server (``host:port`` each)."""
    points: list[tuple[int, int]] = []
    for index, server in enumerate(servers):
        host, _, port = server.rpartition(":")
        base = zlib.crc32(port.encode(), zlib.crc32(b"\0", zlib.crc32(host.encode())))
        previous = 0
        for _ in range(POINTS_PER_WEIGHT * weight):
            value = zlib.crc32(struct.pack("<I", previous), base)
            points.append((value, index))
            previous = value
    points.sort()  # nginx sorts by hash; equal hashes keep no particular order (rare)
    return [p for p, _ in points], [s for _, s in points]


def assign(keys: Sequence[str], servers: Sequence[str], weight: int = 1) -> list[int]:
    """How many of ``keys`` each server gets."""
    hashes, owners = ring(servers, weight)
    counts = [0] * len(servers)
    for key in keys:
        at = bisect.bisect_left(hashes, zlib.crc32(key.encode()))
        counts[owners[at % len(hashes)]] += 1
    return counts
