"""Session 22 attack battery: metadata that shares one list many times over.

``check_metadata`` walked the whole tree (``_check_tree``) and then serialised it to
measure its size. A Python caller can build a tree of a few objects that expands to
billions of values (``x = [x] * 10`` ten times), and so can a YAML import file with
aliases: the walk and ``json.dumps`` expanded every copy before the size limit refused it
(measured: 10**7 values took 6 s, 10**8 a minute, 10**9 would need ~5 GB for the text).
The walk now stops once it has seen more values than the byte limit allows (each value
takes a byte of JSON at least), so the cost is bounded by the limit, not by the expansion.
The work is counted by iterations of the shared list, never timed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from attack_support import CTX, seeded, stored

from attestor_arango.errors import ValidationError
from attestor_arango.validation import MAX_METADATA_BYTES, check_metadata


class CountedList(list[Any]):
    """A list that counts how often it is iterated."""

    walks = 0

    def __iter__(self) -> Any:
        type(self).walks += 1
        return super().__iter__()


def _shared(levels: int) -> tuple[list[Any], CountedList]:
    """A tree of 10**(levels + 1) strings held in ``levels + 1`` list objects."""
    leaf = CountedList(["x"] * 10)
    CountedList.walks = 0
    tree: list[Any] = leaf
    for _ in range(levels):
        tree = [tree] * 10
    return tree, leaf


# the walks a bounded check may make of the 10-string list: one per 11 values it visits
BOUND = MAX_METADATA_BYTES // 11 + 2


def test_a_shared_tree_is_refused_without_expanding_it() -> None:
    tree, _ = _shared(6)  # 10**7 strings, ~52 MB as JSON
    with pytest.raises(ValidationError, match="metadata"):
        check_metadata({"k": tree})
    assert CountedList.walks <= BOUND, CountedList.walks


@pytest.mark.parametrize("op", ["add", "update"])
def test_add_and_update_refuse_it_and_store_nothing(tmp_path: Path, op: str) -> None:
    mem, ours, _ = seeded(tmp_path / "m.db")
    before = stored(mem)
    tree, _ = _shared(6)
    with pytest.raises(ValidationError, match="metadata"):
        if op == "add":
            mem.add("Ann likes mint", metadata={"k": tree}, context=CTX)
        else:
            mem.update(ours, metadata={"k": tree}, context=CTX)
    assert CountedList.walks <= BOUND, CountedList.walks
    assert stored(mem) == before
    mem.close()


def test_metadata_at_the_limit_is_still_taken() -> None:
    value = "x" * (MAX_METADATA_BYTES - len('{"k": ""}'))
    assert check_metadata({"k": value}) == {"k": value}
    many = [0] * (MAX_METADATA_BYTES // 4)  # 262,144 values, under a MB as JSON
    assert check_metadata({"k": many}) == {"k": many}
