"""Issue 18 items 9-10: ``search`` filters narrow the candidates in the store before any cut.

Before, the text lane's top ``max(limit*5, 50)`` hits of the whole scope were taken and
only then filtered, so a filtered match ranked below them was lost. Runs on every backend
the machine has (``any_mem``).
"""

from __future__ import annotations

import pytest

from attestor_arango.errors import ValidationError
from attestor_arango.memory import AgentMemory


def _crowd(mem: AgentMemory) -> str:
    for i in range(80):  # 80 short, strong "alpha" matches about X
        mem.add(f"alpha alpha report {i}", entity="X", category=f"c{i}", tags=["bulk"])
    weak = mem.add(
        "a long note about many unrelated things, the quarterly budget, the office move, "
        "parking, lunch, and only once the word alpha near the end of it",
        entity="Y",
        category="note",
        tags=["rare"],
    )
    return weak.id


def test_entity_filter_finds_a_match_below_the_whole_scope_cut(any_mem: AgentMemory) -> None:
    weak = _crowd(any_mem)
    assert weak not in {m.id for m in any_mem.search("alpha", limit=60)}  # below the cut
    assert [m.id for m in any_mem.search("alpha", entity="Y")] == [weak]


def test_category_and_tag_filters_too(any_mem: AgentMemory) -> None:
    weak = _crowd(any_mem)
    assert [m.id for m in any_mem.search("alpha", category="note")] == [weak]
    assert [m.id for m in any_mem.search("alpha", tags=["rare"])] == [weak]
    assert any_mem.search("alpha", tags=["rare"], entity="X") == []


def test_status_filter_reaches_superseded_rows_below_the_cut(any_mem: AgentMemory) -> None:
    _crowd(any_mem)
    old = any_mem.add("alpha once, in a long first version of the plan", entity="P", category="p")
    any_mem.add("the plan, second version", entity="P", category="p")
    assert [m.id for m in any_mem.search("alpha", status="superseded")] == [old.id]


def test_filtered_results_match_only_the_query_and_rank_by_bm25(any_mem: AgentMemory) -> None:
    any_mem.add("alpha beta", entity="Z", category="a")
    any_mem.add("alpha alpha alpha", entity="Z", category="b")
    any_mem.add("gamma only", entity="Z", category="c")
    found = any_mem.search("alpha", entity="Z")
    assert [m.content for m in found] == ["alpha alpha alpha", "alpha beta"]
    assert [m.content for m in any_mem.search("alpha", entity="Z", limit=1)] == [
        "alpha alpha alpha"
    ]


def test_no_query_is_a_filtered_list_and_a_blank_query_is_refused(any_mem: AgentMemory) -> None:
    _crowd(any_mem)
    assert [m.entity for m in any_mem.search(entity="Y")] == ["Y"]
    assert len(any_mem.search(tags=["bulk"], limit=100)) == 80
    with pytest.raises(ValidationError, match="omit it for a filtered search"):
        any_mem.search("   ")
