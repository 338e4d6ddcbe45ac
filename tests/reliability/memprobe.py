"""``python -m tests.reliability.memprobe serve ...``: the sidecar's own ``serve`` with a probe,
for the memory test (``test_memory.py``).

On SIGUSR1 the process writes what it holds to the file named by ``INITIATIVE_TEST_PROBE``
(written aside and renamed, so a reader never sees half of it), each report numbered:

- ``by_type``: how many objects of each type the garbage collector tracks after a full
  collection, that is the objects something still reaches (a closed connection's reference
  cycles that merely wait for a collection are not a leak: they are counted apart, as
  ``garbage``, the number of objects that collection freed);
- ``traced``: the bytes Python has allocated and not freed (``tracemalloc``, started before
  the sidecar is imported);
- ``rss_kb``: the resident set size, a figure only (glibc keeps freed pages as it likes).

With ``INITIATIVE_TEST_PLANT_LEAK=1`` every aiohttp websocket the sidecar opens is kept in a
list, a leak planted to show that the memory test catches one.

A signal handler runs in the main thread between two bytecodes, so the report is taken
while the event loop waits, never halfway through a message the test has not sent.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import sys
import tracemalloc
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

_reports = 0


def rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def held() -> dict[str, object]:
    tracked = len(gc.get_objects())
    gc.collect()
    objects = gc.get_objects()
    by_type = Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in objects)
    return {"by_type": dict(by_type), "garbage": tracked - len(objects),
            "traced": tracemalloc.get_traced_memory()[0], "rss_kb": rss_kb()}


def report(signum: int, frame: FrameType | None) -> None:
    global _reports
    _reports += 1
    path = Path(os.environ["INITIATIVE_TEST_PROBE"])
    aside = path.with_suffix(".part")
    aside.write_text(json.dumps({"report": _reports, **held()}), encoding="utf-8")
    os.replace(aside, path)


PLANTED: list[object] = []


def plant_leak() -> None:
    from aiohttp import web_ws

    opened = web_ws.WebSocketResponse.__init__

    def keep(self: web_ws.WebSocketResponse, *args: Any, **kwargs: Any) -> None:
        opened(self, *args, **kwargs)
        PLANTED.append(self)

    setattr(web_ws.WebSocketResponse, "__init__", keep)  # noqa: B010 (a planted leak, on purpose)


def main() -> None:
    tracemalloc.start()
    signal.signal(signal.SIGUSR1, report)
    if os.environ.get("INITIATIVE_TEST_PLANT_LEAK") == "1":
        plant_leak()
    from adapter.cli import main as cli

    cli(sys.argv[1:])


if __name__ == "__main__":
    main()
