"""/healthz probes the store with a write transaction on the connection the snapshot thread
shares. Without the store's mutex, a write of that thread landing between the probe's BEGIN
and ROLLBACK was rolled back with it: reported written, silently gone."""

from __future__ import annotations

import threading
from pathlib import Path

from adapter.store import Store


def test_the_health_probe_never_rolls_back_a_write_of_another_thread(tmp_path: Path) -> None:
    store = Store(tmp_path / "probe.db")
    written = 3000
    try:
        def write() -> None:
            for n in range(written):
                store.add_session(f"world{n}", 0, {"n": n})

        writer = threading.Thread(target=write)
        writer.start()
        probes = 0
        while writer.is_alive():
            assert store.problem() is None
            probes += 1
        writer.join()
        kept = store.db.execute("SELECT count(*) FROM sessions").fetchone()[0]
        assert probes > 0
        assert kept == written
    finally:
        store.close()
