"""The one version of Initiative Sidecar: the package's, the module's manifest's, and the one
compared with the module's at connect (a test keeps the checkout's copies equal to it)."""

__version__ = "0.1.0"
