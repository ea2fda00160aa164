"""Deterministic entity recognition: which known entities does the query name?

The matching rules and the name index are text/entity_names.py's; recall asks the
store for a scope's entities together with their index (``Store.known_entities``),
so the index is built once per change of the entities, not once per recall.
"""

from __future__ import annotations

from collections.abc import Iterable

from attestor_arango.models import Entity
from attestor_arango.store.protocol import KnownEntities
from attestor_arango.text.entity_names import name_words

words = name_words  # the query's words as names are matched (speakers.py reads them too)


def recognize(query: str, entities: Iterable[Entity]) -> list[str]:
    """Keys of the entities whose name, alias or key occurs in ``query`` as whole words
    (sorted, de-duplicated; longer names first: text/entity_names.py)."""
    return KnownEntities.of(entities).names.find(query)
