"""The pieces of ``initiative-sidecar bench`` (see :mod:`adapter.bench` and docs/performance.md).

- :mod:`.payloads`: real ``hook`` payloads of a Foundry combat whose turn advances;
- :mod:`.echo`: the bare python-socketio echo server, the physical limit we compare with;
- :mod:`.servers`: starting either server in its own process and timing its start-up;
- :mod:`.client`: the load, real socket.io clients in client processes;
- :mod:`.figures`: latency percentiles, the table and the JSON.
"""
