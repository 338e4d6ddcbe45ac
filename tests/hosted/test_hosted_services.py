"""The services the hosted tests run are here and start: PostgreSQL, Redis, nginx with the
sample routing. Without them this module is skipped in one line naming what is missing, and
the other hosted modules are not collected (tests/hosted/conftest.py)."""

from __future__ import annotations

import socket

import pytest

from tests.hosted import services

# the hosted extra (pip install -e ".[hosted]"): without it these tests are skipped, not broken
pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[hosted]'")
import psycopg  # noqa: E402

services.require(*services.NEEDS)


def test_postgres_answers_on_its_loopback_port(cluster: services.Postgres) -> None:
    with psycopg.connect(cluster.url()) as db:
        assert db.execute("SELECT current_user").fetchone() == ("sidecar",)


def test_nginx_with_the_sample_routing_refuses_what_is_not_a_websocket_for_a_world() -> None:
    with services.nginx([services.free_port(), services.free_port()]) as port:
        for path in ("/socket.io/?EIO=4&transport=websocket&world=w1", "/socket.io/?EIO=4&transport=polling",
                     "/status"):
            with socket.create_connection(("127.0.0.1", port), 5) as conn:
                conn.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
                status = conn.recv(200).split(b"\r\n", 1)[0]
            assert status.split()[1] in (b"400", b"404"), (path, status)
