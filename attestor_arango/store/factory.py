"""Backend selection from the configuration."""

from __future__ import annotations

from attestor_arango.config import Config
from attestor_arango.store.protocol import Store


def open_store(config: Config) -> Store:
    if config.backend == "arangodb":
        from attestor_arango.store.arango import (
            open_arango_store,  # imported lazily: needs a server
        )

        return open_arango_store(config)
    from attestor_arango.store.embedded.store import SQLiteStore

    return SQLiteStore(config.db_path(), text_index=config.text_index, cache_rows=config.cache_rows)
