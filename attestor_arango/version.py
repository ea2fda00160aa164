"""The package version, in one place (the package, the CLI and the servers report it)."""

__version__ = "0.1.0"
