"""A recall frees each candidate once its result is built (pipeline.py, garbage collection).

The response is built while the candidates are still alive; with no reference left to
them but the list being drained, each is freed as soon as its result exists, so fewer
objects are alive when a young collection traverses them. These tests check the drain
itself and that a recall holds no other reference to its candidates by then.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from attestor_arango.memory import AgentMemory
from attestor_arango.models import RecallResult
from attestor_arango.retrieval import pipeline
from attestor_arango.retrieval.candidates import Candidate


def test_draining_hands_out_every_item_once_in_order_and_empties_the_list_as_it_goes() -> None:
    items: list[Any] = [object() for _ in range(6)]
    before = list(items)
    drain = pipeline._draining(items)
    got = []
    for i, item in enumerate(drain):
        got.append(item)
        # what was handed out is gone from the list; what was not is still there, in place
        assert items[: i + 1] == [None] * (i + 1)
        assert items[i + 1 :] == before[i + 1 :]
    assert got == before
    assert all(a is b for a, b in zip(got, before, strict=True))
    assert items == [None] * len(before)
    assert list(pipeline._draining([])) == []


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

    def watched(kept: Iterable[tuple[Candidate, int]], as_of: int) -> list[RecallResult]:
        def each() -> Iterator[tuple[Candidate, int]]:
            for pair in kept:
                alive.append(_alive())
                yield pair

        return inner(each(), as_of)

    monkeypatch.setattr(pipeline, "candidate_results", watched)
    gc.collect()  # no earlier test's garbage counted as freed here
    response = mem.recall("garden shed blue door", token_budget=100_000)
    n = len(response.results)
    assert n >= 20 and len(alive) == n
    # the i-th (0-based): n - i not handed out, it included, and at most the one before
    freed = [alive[0] - a for a in alive]
    assert all(freed[i] >= i - 1 for i in range(n)), freed
