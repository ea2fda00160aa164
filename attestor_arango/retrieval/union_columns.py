"""The vector lane and lane completion over the two lanes' union as columns.

Once the text lane has run, ``lane_run`` reads the cosines of the vector and text lanes'
union in one pass; the general code (completion.py) then works over dicts: the cosines
by id, the lanes' union by id, the members the vector lane missed sorted by id and then
by the tie rule, the text lane's tail scanned against the union. At 1k rows every
candidate survives to the answer, and each of those passes over ~100 ids cost ~0.4 % of
a recall. Here the union is the vector lane's ids followed by the text lane's others,
each in its lane's order (no dict made of it), its cosines one array in that order, and
each order one numpy sort of distinct scores.

The answer is the general code's (``tests/test_union_columns.py`` compares them), and
the general code runs whenever this cannot decide alone: two scores equal or one NaN
(the tie rule then reads times and ids), a member without a stored vector, an id twice
in a lane.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import not_

import numpy as np

from attestor_arango.models import Memory
from attestor_arango.retrieval.completion import Lane, Lanes, Ranked, tie_ordered


@dataclass(frozen=True, slots=True)
class Union:
    """The vector and text lanes' union as columns: ``ids``, the vector lane's ids in its
    order, then the text lane's others in its order (``dict.fromkeys`` of both lanes' ids:
    each once, in the order the general code reads their vectors); ``lane``, how many are
    the vector lane's; ``others``, the memories of ``ids[lane:]``; ``only``, the vector
    lane's members the text lane lacks, by id (what the text lane's completion looks for
    in its tail)."""

    ids: list[str]
    lane: int
    others: list[Memory]
    only: dict[str, Memory]


def union_of(ids: Sequence[str], known: Mapping[str, Memory], text: Lane) -> Union | None:
    """The union of the vector lane (its ``ids``; ``known``, its memories by id, those ids'
    own) and the ``text`` lane; None when an id repeats in a lane (the general code keeps
    each once)."""
    if len(known) != len(ids):  # an id twice in the vector lane
        return None
    fresh = [i not in known for i in text.ids]  # the text lane's ids the vector lane lacks
    others = list(compress(text.ids, fresh))
    if len(set(others)) != len(others):
        return None
    only = dict(known)
    for i in compress(text.ids, map(not_, fresh)):  # in both lanes
        only.pop(i, None)
    return Union([*ids, *others], len(ids), list(compress(text.memories, fresh)), only)


@dataclass(frozen=True, slots=True)
class UnionCosines:
    """The cosines read for the lanes' union (``completion.cosine_column``): the ids with a
    stored vector and each one's cosine; ``union`` as read when every member has one
    (the columns this module works on), else None (the general code's turn)."""

    have: list[str]
    values: np.ndarray
    union: Union | None

    def by_id(self) -> dict[str, float]:
        """The cosines by id: what the general code reads (``completion.cosines``)."""
        return dict(zip(self.have, self.values.tolist(), strict=True))


def by_cosine(memories: Sequence[Memory], scores: np.ndarray, ids: Sequence[str]) -> Lane | None:
    """``completion.tie_ordered(memories, scores.tolist(), ids)`` when none of the scores (an
    array) is NaN: distinct scores alone decide the order, one sort of the array (the
    ascending order reversed: distinct values have one descending order); tied ones go to
    ``tie_ordered``. None with a NaN (the general code decides)."""
    order = np.argsort(scores)[::-1]
    ranked = scores[order]
    if not (ranked[:-1] > ranked[1:]).all():  # equal neighbours, or a NaN (never greater)
        if np.isnan(ranked).any():  # its place depends on the order the rows came in
            return None
        # a tie (rows of one text, at 10k): the whole rule, which orders distinct ids
        # alike whatever order they come in
        return tie_ordered(memories, scores.tolist(), ids)
    at = order.tolist()
    return Lane(
        list(map(memories.__getitem__, at)), ranked.tolist(), list(map(ids.__getitem__, at))
    )


def complete_union(
    vector: Lane, text: Lane, tail: Ranked, union: Union, values: np.ndarray
) -> Lanes | None:
    """``completion.complete_lanes`` of the lanes ``[("vector", vector), ("bm25", text)]``
    with the text lane's re-scored ``tail`` and the union's cosines (``values``, in the
    order of ``union.ids``); None when one of the vector lane's added members is NaN."""
    added = by_cosine(union.others, values[union.lane :], union.ids[union.lane :])
    if added is None:
        return None
    only = dict(union.only)  # each taken once, at its first place in the tail
    memories, scores, ids = list(text.memories), list(text.scores), list(text.ids)
    for i, score in zip(tail.ids, tail.scores, strict=True):
        memory = only.pop(i, None)
        if memory is not None:
            memories.append(memory)
            scores.append(score)
            ids.append(i)
    return [
        (
            "vector",
            Lane(
                vector.memories + added.memories,
                vector.scores + added.scores,
                vector.ids + added.ids,
            ),
        ),
        ("bm25", Lane(memories, scores, ids)),
    ]
