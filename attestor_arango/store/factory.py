"""Backend selection from the configuration."""

from __future__ import annotations

from ..config import Config
from .protocol import Store


def open_store(config: Config) -> Store:
    if config.backend == "arangodb":
        from .arango import open_arango_store  # imported lazily: needs a server

        return open_arango_store(config)
    from .embedded import SQLiteStore

    return SQLiteStore(config.db_path(), text_index=config.text_index, cache_rows=config.cache_rows)
