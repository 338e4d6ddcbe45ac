"""Limits that both the configuration and the pipeline need (kept apart so that the
configuration does not import the pipeline)."""

#: application size limit for one message, bytes of JSON (below socket.io's buffer limit)
DEFAULT_MAX_BYTES = 256 * 1024
