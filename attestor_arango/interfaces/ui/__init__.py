"""The Evidence Board: a read-only web UI over the REST service's keys and contexts."""

from attestor_arango.interfaces.ui.app import mount_ui

__all__ = ["mount_ui"]
