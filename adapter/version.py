"""The one version of Initiative Sidecar: the Python package's (read by the build from this
file), the module's (stamped into the manifest the sidecar serves and ``make release``
writes) and the one the sidecar compares with the module's at connect. The wire protocol's
number is :data:`adapter.protocol.PROTOCOL_VERSION`; a test keeps the checkout's copies
(``vtt_module/module.json``, ``vtt_module/scripts/constants.js``, ``docs/protocol.md``) equal
to both."""

__version__ = "0.1.0"
