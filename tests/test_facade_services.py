"""The services AgentMemory's methods delegate to, used directly with a runtime.

Each of these functions used to be logic inside ``memory.py`` (update's merge, list_page's
cursor, the filters list/count/search share, recall's plumbing, the audit-trail calls,
the runtime's attributes). Here they run without the facade: a runtime, its auditor and
writer, and a context, so a service stays usable (and tested) on its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from attestor_arango.clock import ManualClock
from attestor_arango.context import AgentContext
from attestor_arango.core import pages, reads
from attestor_arango.core import recall as recalls
from attestor_arango.core.audit import Auditor
from attestor_arango.core.runtime import Runtime, open_runtime
from attestor_arango.core.writes import KEEP, Changes, Writer, check_changes
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ConflictError, NotFoundError, ValidationError
from attestor_arango.governance import trail
from attestor_arango.governance.access import caller
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory
from attestor_arango.models import Memory
from attestor_arango.retrieval import RetrievalConfig

ACME = AgentContext(agent_id="orchestrator-1", role="orchestrator", tenant="acme")


@pytest.fixture
def parts(tmp_path: Path) -> tuple[Runtime, Writer, ManualClock]:
    clock = ManualClock()
    rt = open_runtime(
        tmp_path / "m.db", embedder=HashingEmbedder(64), clock=clock, ids=SeededIdSource(7)
    )
    return rt, Writer(rt, Auditor(rt)), clock


def write(writer: Writer, content: str, **fields: object) -> Memory:
    base: dict[str, object] = {
        "entity": None,
        "category": None,
        "tags": (),
        "confidence": 1.0,
        "valid_from_us": None,
        "valid_until_us": None,
        "metadata": {},
        "source_episode_id": None,
    }
    return writer.write(ACME, content=content, **{**base, **fields})  # type: ignore[arg-type]


def test_update_keeps_what_changes_leave_out_and_clears_what_they_set_to_none(
    parts: tuple[Runtime, Writer, ManualClock],
) -> None:
    _, writer, clock = parts
    old = write(writer, "likes tea", entity="ann", category="drink", tags=("t",))
    clock.advance(seconds=1)
    kept = writer.update(ACME, old.id, Changes(content="likes green tea"))
    assert (kept.content, kept.entity, kept.category, kept.tags) == (
        "likes green tea",
        "ann",
        "drink",
        ("t",),
    )
    assert kept.supersedes == old.id
    clock.advance(seconds=1)
    cleared = writer.update(ACME, kept.id, Changes(entity=None, tags=()))
    assert (cleared.content, cleared.entity, cleared.category, cleared.tags) == (
        "likes green tea",
        None,
        "drink",
        (),
    )


def test_update_of_a_closed_version_names_the_current_one(
    parts: tuple[Runtime, Writer, ManualClock],
) -> None:
    _, writer, clock = parts
    old = write(writer, "lives in Oslo", entity="ann", category="home")
    clock.advance(seconds=1)
    new = writer.update(ACME, old.id, Changes(content="lives in Bergen"))
    with pytest.raises(ConflictError, match=new.id):
        writer.update(ACME, old.id, Changes(content="lives in Paris"))
    with pytest.raises(NotFoundError):
        writer.update(ACME, "0" * 36, Changes())


def test_check_changes_validates_each_given_field_and_keeps_the_rest() -> None:
    none: dict[str, object] = {
        "content": None,
        "entity": KEEP,
        "category": KEEP,
        "tags": None,
        "confidence": None,
        "valid_from": None,
        "valid_until": None,
        "metadata": None,
    }
    assert check_changes(100, **none) == Changes()  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        check_changes(100, **{**none, "confidence": 1.5})  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        check_changes(3, **{**none, "content": "four"})  # type: ignore[arg-type]
    cleared = check_changes(100, **{**none, "entity": None, "tags": ["a", "a"]})  # type: ignore[arg-type]
    assert cleared.entity is None and cleared.category is KEEP and cleared.tags == ("a",)


def test_a_listing_resolves_to_scope_filter_and_view(
    parts: tuple[Runtime, Writer, ManualClock],
) -> None:
    rt, _, _ = parts
    scope, filters, view = reads.Listing(entity="ann", status="all", namespace="n1").resolve(
        rt, ACME
    )
    assert (scope.tenant, scope.namespace) == ("acme", "n1")
    assert (filters.entity, filters.status, view.include_closed) == ("ann", None, True)
    _, filters, view = reads.Listing(status="active").resolve(rt, ACME)
    assert (filters.status, view.include_closed) == ("active", False)
    with pytest.raises(ValidationError):
        reads.Listing(status="gone").resolve(rt, ACME)
    assert set(reads.Listing().arguments("inbox")) == {
        "entity",
        "category",
        "tags",
        "namespace",
        "status",
        "time_window",
        "as_of",
    }


def test_list_page_pins_its_moment_and_refuses_a_cursor_of_other_filters(
    parts: tuple[Runtime, Writer, ManualClock],
) -> None:
    rt, writer, clock = parts
    for i in range(5):
        clock.advance(seconds=1)
        write(writer, f"fact {i}", entity=f"e{i}", category="c")
    listing = reads.Listing(category="c")
    first = pages.list_page(rt, ACME, listing, 2, None)
    assert first.total == 5 and len(first.memories) == 2 and first.next_cursor
    clock.advance(seconds=1)
    write(writer, "later fact", entity="late", category="c")
    seen = [m.id for m in first.memories]
    cursor: str | None = first.next_cursor
    while cursor is not None:
        page = pages.list_page(rt, ACME, listing, 2, cursor)
        assert page.total == 5 and page.as_of == first.as_of
        seen += [m.id for m in page.memories]
        cursor = page.next_cursor
    assert len(seen) == len(set(seen)) == 5
    with pytest.raises(ValidationError, match="other filters"):
        pages.list_page(rt, ACME, reads.Listing(category="d"), 2, first.next_cursor)


def test_current_facts_leaves_the_verbatim_rounds_out_unless_asked(
    parts: tuple[Runtime, Writer, ManualClock],
) -> None:
    rt, writer, clock = parts
    write(writer, "a fact", entity="ann", category="job")
    clock.advance(seconds=1)
    write(writer, "user: hello", category="episode", tags=("episode",))
    assert [m.content for m in reads.current_facts(rt, ACME, reads.Listing())] == ["a fact"]
    asked = reads.current_facts(rt, ACME, reads.Listing(category="episode"))
    assert [m.content for m in asked] == ["user: hello"]


def test_timeline_needs_an_entity_and_shows_closed_versions(
    parts: tuple[Runtime, Writer, ManualClock],
) -> None:
    rt, writer, clock = parts
    old = write(writer, "lives in Oslo", entity="ann", category="home")
    clock.advance(seconds=1)
    writer.update(ACME, old.id, Changes(content="lives in Bergen"))
    scope = rt.scope(ACME)
    versions = reads.timeline(rt, scope, "ann", None, None)
    assert [m.content for m in versions] == ["lives in Oslo", "lives in Bergen"]
    with pytest.raises(ValidationError, match="needs an entity"):
        reads.timeline(rt, scope, None, None, None)


def test_recall_checks_its_query_and_counts_the_tokens_it_returns(
    parts: tuple[Runtime, Writer, ManualClock],
) -> None:
    rt, writer, clock = parts
    for i in range(8):
        clock.advance(seconds=1)
        write(writer, f"the meeting number {i} is about budgets and plans")
    ctx = AgentContext(agent_id="a", tenant="acme")
    auditor = Auditor(rt)
    with pytest.raises(ValidationError, match="query is empty"):
        recalls.recall(rt, auditor, ctx, "recall", "  ", None, None, None)
    response = recalls.recall(rt, auditor, ctx, "recall", "budgets", None, None, 40)
    assert response.results and ctx.usage.tokens == response.tokens_used
    explained = recalls.explain(rt, auditor, ctx, "budgets", None, None, 40)
    assert [r.memory.id for r in explained.response.results] == [
        r.memory.id for r in response.results
    ]
    assert explained.cut  # eight matches do not fit in 40 tokens


def test_a_recorded_recall_needs_tracing_and_a_well_formed_id(
    parts: tuple[Runtime, Writer, ManualClock],
) -> None:
    rt, _, _ = parts
    with pytest.raises(ValidationError):
        recalls.recorded(rt, rt.scope(ACME), "rc_nothex")
    with pytest.raises(NotFoundError, match="traces are off"):
        recalls.recorded(rt, rt.scope(ACME), "rc_" + "0" * 24)


def test_the_trail_verifies_pages_and_lists_deletions(
    parts: tuple[Runtime, Writer, ManualClock],
) -> None:
    rt, writer, clock = parts
    first = write(writer, "a fact")
    clock.advance(seconds=1)
    writer.forget(ACME, first.id, "done")
    assert trail.verify(rt, "acme", None).ok
    page = trail.page(rt, "acme", None, 10)
    assert [e.action for e in page.entries] == ["forget", "add"]
    assert [e.action for e in trail.deletions(rt, "acme", 10)] == ["forget"]
    assert [e.action for e in trail.entries(rt, "acme", 10, 0)] == ["add", "forget"]
    assert [e.action for e in trail.entries(rt, "acme", 10, 1)] == ["forget"]
    assert trail.entries(rt, "beta", 10, 0) == []  # another tenant's chain is its own
    with pytest.raises(ValidationError):
        trail.page(rt, "acme", None, 1001)
    with pytest.raises(ValidationError):
        trail.verify(rt, "acme", (1, "not a hash"))


def test_caller_is_the_given_context_or_the_default() -> None:
    other = AgentContext(agent_id="b", tenant="beta")
    assert caller(None, ACME) is ACME and caller(other, ACME) is other
    with pytest.raises(ValidationError, match="AgentContext"):
        caller("acme", ACME)  # type: ignore[arg-type]


def test_replacing_a_runtime_part_rebuilds_the_auditor_and_writer(tmp_path: Path) -> None:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64), clock=ManualClock())
    old_runtime = mem.runtime
    config = RetrievalConfig(speaker_weight=0.0)
    mem.retrieval_config = config
    assert mem.runtime is not old_runtime and mem.runtime.retrieval_config is config
    assert mem.writer.runtime is mem.runtime and mem.auditor.runtime is mem.runtime
    assert mem.store is old_runtime.store and mem.config is mem.runtime.config
    with pytest.raises(AttributeError):
        mem.config = mem.config  # type: ignore[assignment]
    assert mem.clock is mem.runtime.clock and mem.ids is mem.runtime.ids
