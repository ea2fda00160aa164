"""A recall frees each candidate once its result is built (pipeline.py, garbage collection).

The response is built while the candidates are still alive; with no reference left to
them but the list being drained, each is freed as soon as its result exists, so fewer
objects are alive when a young collection traverses them. These tests check the drain
itself and that a recall holds no other reference to its candidates by then.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence
from typing import Any

import pytest

from attestor_arango.memory import AgentMemory
from attestor_arango.models import RecallResult
from attestor_arango.retrieval import pipeline
from attestor_arango.retrieval.candidates import Candidate, results
from tests.test_trusted_models import a_memory


def test_results_empty_the_kept_list_as_they_go_each_candidate_once_in_order() -> None:
    """``candidates.results`` drops each candidate from ``kept`` once its result is built:
    while the i-th result's tokens are read, the ones before it are gone from the list, the
    ones after it still there, in place; the results come in the list's order."""
    kept = [Candidate(memory=a_memory(id=f"m{i}")) for i in range(6)]
    before = list(kept)
    seen: list[list[Candidate | None]] = []

    class Counts(list[int]):
        def __getitem__(self, i: Any) -> Any:
            seen.append(list(kept))
            return super().__getitem__(i)

    got = results(kept, Counts(range(6)), 0)
    assert [r.memory.id for r in got] == [c.id for c in before]
    assert [r.tokens for r in got] == list(range(6))
    for i, state in enumerate(seen):
        assert state[: i + 1] == [None] * (i + 1)
        assert all(a is b for a, b in zip(state[i + 1 :], before[i + 1 :], strict=True))
    assert kept == [None] * 6 and results([], [], 0) == []


def test_results_refuse_counts_that_do_not_match_the_candidates() -> None:
    kept = [Candidate(memory=a_memory(id="m1"))]
    with pytest.raises(ValueError, match="1 candidates with 2 token counts"):
        results(kept, [1, 2], 0)
    assert kept[0] is not None  # refused before anything was dropped


def _alive() -> int:
    return sum(1 for o in gc.get_objects() if type(o) is Candidate)


def test_a_recall_frees_each_candidate_once_its_result_is_built(
    mem: AgentMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the results are built, the candidates still alive are those not handed out
    yet, plus the one whose result was just built (the builder's loop still names it).
    Fails if the recall keeps another reference to them (the fused or ranked list, the
    lanes' hits hold memories only) or builds the results from the list as it is."""
    for i in range(30):
        mem.add(f"note {i} about the garden shed and its blue door, day {i}")
    inner = pipeline.candidate_results
    alive: list[int] = []

    class Counts(list[int]):  # read once a result, after its candidate left the list
        def __getitem__(self, i: Any) -> Any:
            alive.append(_alive())
            return super().__getitem__(i)

    def watched(kept: list[Any], counts: Sequence[int], as_of: int) -> list[RecallResult]:
        return inner(kept, Counts(counts), as_of)

    monkeypatch.setattr(pipeline, "candidate_results", watched)
    gc.collect()  # no earlier test's garbage counted as freed here
    response = mem.recall("garden shed blue door", token_budget=100_000)
    n = len(response.results)
    assert n >= 20 and len(alive) == n
    # the i-th (0-based): n - i not handed out, it included, and at most the one before
    freed = [alive[0] - a for a in alive]
    assert all(freed[i] >= i - 1 for i in range(n)), freed
