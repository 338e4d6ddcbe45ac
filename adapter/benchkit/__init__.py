"""The pieces of ``initiative-sidecar bench`` (see :mod:`adapter.bench` and docs/performance.md)."""
