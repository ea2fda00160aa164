"""Steps with no signal for the candidates are not run, and the answer is the same.

The neighbour steps read conversation turns' links (``metadata["turn"]``); over plain
adds no candidate has one, so the pipeline skips both. The asking step reads a turn's
words or a plain memory's content, so it runs either way.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from retrieval_fakes import FakeStore, mem, view_at

from attestor_arango.models import Memory
from attestor_arango.retrieval import RetrievalConfig, pipeline, recall
from attestor_arango.scope import Scope

SCOPE = Scope("t", "ns")


class _Fixed:
    """Every text embeds to (1, 0)."""

    name = "fixed"
    dimension = 2

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.tile(np.array([1.0, 0.0], dtype=np.float32), (len(texts), 1))


def _store(turns: bool) -> FakeStore:
    s = FakeStore()
    for i in range(12):
        m = mem(f"m{i:02d}", f"Alice talked about the garden {i}?", day=i)
        if turns and i:
            link = {"replies_to": f"m{i - 1:02d}", "text": m.content}
            m = Memory(**{**m.model_dump(), "metadata": {"turn": link}})
        s.add(m, [float(i % 3), 1.0])
    return s


@pytest.mark.parametrize("turns", [False, True])
def test_the_turn_steps_run_only_when_a_candidate_is_a_turn(
    turns: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[str] = []
    for name in ("add_neighbours", "apply_neighbours", "apply_asking"):
        inner = getattr(pipeline, name)

        def counted(*args: object, _inner: object = inner, _name: str = name) -> object:
            ran.append(_name)
            return _inner(*args)  # type: ignore[operator]

        monkeypatch.setattr(pipeline, name, counted)
    cfg = RetrievalConfig()
    resp = recall(_store(turns), _Fixed(), SCOPE, "garden talk", view_at(20), 10_000, cfg)  # type: ignore[arg-type]
    assert len(resp.results) == 12
    assert ran == (
        ["add_neighbours", "apply_neighbours", "apply_asking"] if turns else ["apply_asking"]
    )
    # the steps did change something: memories that ask yield (turns or not), neighbours support
    assert any(r.breakdown.session != 0.0 for r in resp.results)
