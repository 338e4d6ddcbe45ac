"""``GET /healthz`` and ``GET /metrics`` for whoever runs the sidecar, answering only to
loopback and the ``--metrics-from`` networks. ``/metrics`` is Prometheus' text format, one
registry per app; docs/operations.md lists the metrics.
"""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.process_collector import ProcessCollector

from ..config import Config
from .observe import Answered

ACK_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
COMMIT_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        ProcessCollector(registry=self.registry)
        self.messages = Counter(
            "initiative_sidecar_messages", "Messages answered, by event and result",
            ["event", "result"], registry=self.registry,
        )
        self.refusals = Counter(
            "initiative_sidecar_refusals", "Messages refused, by error code", ["code"], registry=self.registry
        )
        self.ack_seconds = Histogram(
            "initiative_sidecar_ack_seconds", "Time from a message's arrival to its ack",
            ["event"], buckets=ACK_BUCKETS, registry=self.registry,
        )
        self.commit_seconds = Histogram(
            "initiative_sidecar_store_commit_seconds", "Time to store and commit one message",
            buckets=COMMIT_BUCKETS, registry=self.registry,
        )
        self.connects = Counter(
            "initiative_sidecar_connects", "Connection attempts: accepted, or the refusal code",
            ["result"], registry=self.registry,
        )
        self.connected = Gauge(
            "initiative_sidecar_connected_worlds", "Worlds with a connected writer", registry=self.registry
        )
        self.loaded = Gauge("initiative_sidecar_loaded_worlds", "Worlds in memory", registry=self.registry)
        #: (event, result) -> its messages counter and ack histogram (events: hook, intent, other)
        self._answered: dict[tuple[str, str], tuple[Counter, Histogram]] = {}

    def observe(self, answered: Answered) -> None:
        ack = answered.ack
        if not ack.get("ok"):
            result = "refused"
            self.refusals.labels(code=str((ack.get("error") or {}).get("code", "?"))).inc()
        else:
            result = "duplicate" if ack.get("duplicate") else "ok"
        # every answered message passes here: ``labels()`` (~3 us a call) is looked up once
        key = (answered.event, result)
        children = self._answered.get(key)
        if children is None:
            children = self._answered[key] = (self.messages.labels(event=answered.event, result=result),
                                              self.ack_seconds.labels(event=answered.event))
        children[0].inc()
        children[1].observe(answered.seconds)

    def connect(self, result: str) -> None:
        self.connects.labels(result=result).inc()

    def attach(self, writers: dict[str, str], states: dict[str, Any], store: Any) -> None:
        """Read the gauges from the running sidecar; time the store's appends."""
        self.connected.set_function(lambda: len(writers))
        self.loaded.set_function(lambda: len(states))
        if hasattr(store, "append_soon"):  # PostgreSQL: every append is one of these
            store.append_soon = self.timed(store.append_soon)
        else:
            append = store.append

            def append_timed(*args: Any, **kwargs: Any) -> Any:
                with self.commit_seconds.time():
                    return append(*args, **kwargs)

            store.append = append_timed

    def timed(self, append_soon: Callable[..., Future[Any]]) -> Callable[..., Future[Any]]:
        """``append_soon``, timed until the future it returns is done."""

        def append_timed(*args: Any, **kwargs: Any) -> Future[Any]:
            started = time.perf_counter()
            done = append_soon(*args, **kwargs)
            done.add_done_callback(lambda _: self.commit_seconds.observe(time.perf_counter() - started))
            return done

        return append_timed


def operator_only(config: Config) -> Callable[[web.Request], bool]:
    """Whether a request may read /healthz and /metrics: loopback, or a ``--metrics-from`` network."""
    networks = [ipaddress.ip_network(n, strict=False) for n in config.metrics_from]

    def allowed(request: web.Request) -> bool:
        try:
            address = ipaddress.ip_address(request.remote or "")
        except ValueError:
            return False
        return address.is_loopback or any(address in network for network in networks)

    return allowed


def add_metrics_routes(app: web.Application, config: Config, metrics: Metrics,
                       health: Callable[[], tuple[bool, dict[str, Any]]]) -> None:
    allowed = operator_only(config)

    async def get_metrics(request: web.Request) -> web.Response:
        if not allowed(request):
            raise web.HTTPForbidden(text="metrics answer to loopback only (see --metrics-from)")
        return web.Response(body=generate_latest(metrics.registry), headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def get_healthz(request: web.Request) -> web.Response:
        if not allowed(request):
            raise web.HTTPForbidden(text="health answers to loopback only (see --metrics-from)")
        ok, body = health()
        return web.json_response(body, status=200 if ok else 503)

    app.router.add_get("/metrics", get_metrics)
    app.router.add_get("/healthz", get_healthz)
