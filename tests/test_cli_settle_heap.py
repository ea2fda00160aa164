"""The servers the CLI starts freeze what start-up left on the heap (interfaces/cli/server.py)."""

from __future__ import annotations

import gc

from attestor_arango.interfaces.cli.server import settle_heap


def test_settle_heap_puts_the_start_up_objects_out_of_the_collectors_sight() -> None:
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    kept = [[i] for i in range(5_000)]  # long-lived containers, as imports leave them
    try:
        settle_heap()
        assert gc.get_freeze_count() >= len(kept)
        oldest = {id(o) for o in gc.get_objects(generation=2)}
        assert not any(id(x) in oldest for x in kept)  # frozen, so in no generation
    finally:
        gc.unfreeze()
    assert gc.get_freeze_count() == 0
