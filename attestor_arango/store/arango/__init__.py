"""The ArangoDB backend (ArangoDB >= 3.12.6): see docs/arangodb.md.

Importing this package needs python-arango only; nothing contacts a server until one of
the entry points below is called.
"""

from __future__ import annotations

from .connect import init_arango, open_arango_store, rebuild_vector_index
from .doctor import arango_doctor
from .store import ArangoStore

__all__ = [
    "ArangoStore",
    "arango_doctor",
    "init_arango",
    "open_arango_store",
    "rebuild_vector_index",
]
