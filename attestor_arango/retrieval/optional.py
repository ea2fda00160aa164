"""Optional backend methods beside the Store contract, recognised once per class.

The embedded backend offers a few reads the contract does not require (its text index's
scoring terms and pool scores, its vector matrix); retrieval asks for them through
runtime protocols and falls back to the contract's reads for a backend without them.
"""

from __future__ import annotations

from typing import Any

# (class, protocol) pairs known to match: the class itself has the protocol's methods
_SPEAKS: set[tuple[type, object]] = set()


def speaks(store: object, protocol: Any, methods: tuple[str, ...]) -> bool:
    """``isinstance(store, protocol)`` for a runtime protocol whose ``methods`` are named,
    decided once per class when the class itself has them: isinstance looks every member
    up on each call (~17 us, several times a recall)."""
    kind = type(store)
    if (kind, protocol) in _SPEAKS:
        return True
    if not isinstance(store, protocol):
        return False
    if all(callable(getattr(kind, name, None)) for name in methods):
        _SPEAKS.add((kind, protocol))
    return True
