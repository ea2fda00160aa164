"""A lane's candidate as the store hands it over (``Hit``).

Kept apart from the Store protocol (store/protocol.py, which re-exports it) so that the
protocol stays one reading long. Recall reads lanes as columns (retrieval/completion.py,
``Lane``); a ``Hit`` is what ``vector_candidates`` answers with.
"""

from __future__ import annotations

from dataclasses import dataclass

from attestor_arango.models import Memory


@dataclass(frozen=True, slots=True)
class Hit:
    """A lane candidate: the memory and the lane's raw score (higher is better)."""

    memory: Memory
    score: float
