"""The ArangoDB backend (ArangoDB >= 3.12.6): see docs/arangodb.md.

Importing this package needs python-arango only; nothing contacts a server until one of
the entry points below is called.
"""

from __future__ import annotations

from attestor_arango.store.arango.connect import (
    init_arango,
    open_arango_store,
    rebuild_vector_index,
)
from attestor_arango.store.arango.doctor import arango_doctor
from attestor_arango.store.arango.store import ArangoStore

__all__ = [
    "ArangoStore",
    "arango_doctor",
    "init_arango",
    "open_arango_store",
    "rebuild_vector_index",
]
