"""The read path's unvalidated models are the validated ones, field for field.

``models.trusted`` builds memories (store/codec.py), score breakdowns
(retrieval/candidates.py) and recall results (retrieval/pipeline.py) without
running pydantic's validation. These tests build each of them both ways and
compare everything a caller can observe: equality, the JSON bytes, repr (field
order) and the set of fields given.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict
from pydantic import ValidationError as PydanticValidationError

from attestor_arango import AgentContext
from attestor_arango.clock import ManualClock, from_us
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory
from attestor_arango.models import (
    Memory,
    MemoryStatus,
    Provenance,
    RecallResponse,
    RecallResult,
    ScoreBreakdown,
    content_hash,
    trusted,
    trusted_parts,
)
from attestor_arango.retrieval.candidates import Candidate
from attestor_arango.retrieval.completion import Lane
from attestor_arango.retrieval.fusion import fuse
from attestor_arango.store.codec import memory_from_doc, memory_to_doc
from attestor_arango.store.protocol import Hit

T0 = 1_767_225_600_000_000


def same(a: BaseModel, b: BaseModel) -> None:
    assert type(a) is type(b)
    assert a == b
    assert a.model_dump_json() == b.model_dump_json()
    assert repr(a) == repr(b)
    assert a.model_fields_set == b.model_fields_set
    # read without a default (``==`` on models reads the private slot with one): unset fails
    assert a.__pydantic_extra__ == b.__pydantic_extra__
    assert a.__pydantic_private__ == b.__pydantic_private__
    assert list(a.__dict__) == list(b.__dict__)
    assert [type(v) for v in a.__dict__.values()] == [type(v) for v in b.__dict__.values()]


def a_memory(**extra: Any) -> Memory:
    fields: dict[str, Any] = {
        "id": "m1",
        "tenant": "t",
        "namespace": "n",
        "content": "I moved to Berlin",
        "valid_from": from_us(T0),
        "t_created": from_us(T0 + 5),
        "provenance": Provenance(agent_id="a", role="writer"),
        "content_hash": content_hash("I moved to Berlin"),
        **extra,
    }
    return Memory(**fields)


def test_a_decoded_memory_is_the_validated_one() -> None:
    full = a_memory(
        entity="Berlin",
        category="home",
        tags=("verbatim", "x"),
        confidence=1,  # an int: validation makes it 1.0, and so must decoding
        valid_until=from_us(T0 + 10),
        t_expired=from_us(T0 + 20),
        superseded_by="m2",
        supersedes="m0",
        status=MemoryStatus.SUPERSEDED,
        provenance=Provenance(
            agent_id="a",
            role="writer",
            session_id="s",
            source_episode_id="e",
            agent_trail=("p", "a"),
            parent_agent_id="p",
        ),
        signature="sig",
        metadata={"turn": {"replies_to": "m0"}, "k": [1, 2]},
    )
    for memory in (a_memory(), full):
        doc = memory_to_doc(memory)
        doc["tags"] = list(doc["tags"])  # as a store hands them back: lists, not tuples
        doc["confidence"] = int(doc["confidence"])  # JSON may hand back 1 for 1.0
        # every field given, as the codec always did before it stopped validating
        validated = Memory(**{**dict(memory), "provenance": Provenance(**dict(memory.provenance))})
        same(memory_from_doc(doc), validated)
        same(memory_from_doc(doc).provenance, validated.provenance)


def test_a_breakdown_is_the_validated_one_with_int_inputs() -> None:
    c = Candidate(memory=a_memory())
    c.lane_ranks = {"vector": 2, "bm25": 1, "mq_1": 3}
    c.vector_score, c.bm25_score = 0.5, 3  # an int score: validation gives 3.0
    c.rrf, c.rrf_norm, c.graph_hops, c.graph_bonus = 1 / 61 + 1 / 62, 0.75, 1, 0
    c.decay, c.boost, c.freshness = 0.95, 0.01, -0.15
    c.compute_relevance()
    got = c.breakdown()
    want = ScoreBreakdown(**got.model_dump())
    same(got, want)
    assert got.model_dump_json().count('"graph_bonus":0.0') == 1
    assert got.bm25_score == 3.0 and isinstance(got.bm25_score, float)


def test_a_breakdown_sets_every_field_in_field_order() -> None:
    """``breakdown`` sets every field one by one (``models.trusted_fieldwise``): every field
    off its default (a negative zero, an int, a synthetic row), the validated model's
    values, types and order; a field left out or set out of order fails."""
    c = Candidate(memory=a_memory(), synthetic=True, graph_hops=2)
    c.lane_ranks, c.vector_score = {"vector": 3}, -0.0
    c.rrf, c.rrf_norm, c.graph_bonus = 1 / 63, -0.0, 1
    c.decay, c.boost, c.freshness, c.session = 0.5, 0.25, -0.15, -0.0
    c.coverage, c.time_cue = 0.125, 0.2
    c.compute_relevance()
    got = c.breakdown()
    want = ScoreBreakdown(**got.model_dump())
    same(got, want)
    assert None not in (got.rrf, got.session, got.coverage, got.time_cue, got.final)
    assert got.model_dump_json().count(":-0.0") == 3  # vector_score, rrf_norm, session
    assert got.synthetic is True and got.graph_hops == 2 and got.graph_bonus == 1.0


def test_recall_results_are_the_validated_ones(tmp_path: Any) -> None:
    clock = ManualClock(T0)
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(), clock=clock)
    ctx = AgentContext(agent_id="a", tenant="t", namespace="n")
    for i, text in enumerate(["Jon went to the fair", "the fair was in June", "Jon likes tea"]):
        clock.set(T0 + i * 1_000_000)
        mem.add(text, context=ctx, entity="Jon" if i != 1 else None)
    response = mem.recall("When did Jon go to the fair?", context=ctx)
    assert len(response.results) == 3
    for r in response.results:
        validated = RecallResult(
            memory=Memory(**dict(r.memory)),
            score=r.score,
            tokens=r.tokens,
            breakdown=ScoreBreakdown(**r.breakdown.model_dump()),
        )
        same(r, validated)
        same(r.memory, validated.memory)
    mem.close()


def test_a_copy_with_changes_leaves_the_shared_field_set_of_the_others_alone() -> None:
    # trusted frozen models of a class share one set of given fields (models.trusted);
    # replaying a closed row (Memory.at) copies with changes, which must not reach it
    doc = memory_to_doc(a_memory(t_expired=from_us(T0 + 20), superseded_by="m2"))
    closed, other = memory_from_doc(doc), memory_from_doc(memory_to_doc(a_memory()))
    before = set(other.model_fields_set)
    replayed = closed.at(T0 + 10)  # before the close: a copy, active, with no successor
    assert replayed.t_expired is None and replayed.superseded_by is None
    assert other.model_fields_set == before == closed.model_fields_set
    copied = other.model_copy(update={"signature": "s"})
    assert other.model_fields_set == before and copied.signature == "s"
    plain = a_memory()
    validated = Memory(**{**dict(plain), "provenance": Provenance(**dict(plain.provenance))})
    same(memory_from_doc(memory_to_doc(plain)), validated)


def test_a_breakdown_takes_a_default_as_it_is_only_for_the_very_default_object() -> None:
    """``results`` takes graph bonus and freshness as they are (session, coverage and time
    cue always: ``ROUNDED``) when the candidate holds the very default object
    (``candidates.ZERO``, which every 0.0 default of the module is, and fusion's); any
    other value, a -0.0, another 0.0 object, an int, is set and converted as validation
    would."""
    from attestor_arango.retrieval import candidates

    names = ("graph_bonus", "freshness", "session", "coverage", "time_cue")
    made = fuse([("vector", Lane.of([Hit(a_memory(), 0.5)]))], 60)[0]
    for c in (made, Candidate(memory=a_memory())):
        assert all(getattr(c, name) is candidates.ZERO for name in names)
    zero_again = float("0.0")
    assert zero_again is not candidates.ZERO
    cases = ((-0.0, -0.0), (zero_again, 0), (0.25, 1), (candidates.ZERO, candidates.ZERO))
    for (value, config_value), hops in zip(cases, (None, 0, 2, None), strict=True):
        # graph bonus and freshness may come from the configuration: ints there
        c = Candidate(memory=a_memory(), graph_hops=hops, synthetic=value == 0.25)
        for name in names:
            setattr(c, name, value)
        c.graph_bonus = c.freshness = config_value
        c.compute_relevance()
        got = c.breakdown()
        want = ScoreBreakdown(
            **ScoreBreakdown().model_dump()  # every field given, as results gives them
            | {name: getattr(c, name) for name in names}
            | {"graph_hops": c.graph_hops, "synthetic": c.synthetic, "final": c.relevance}
            | {"relevance": c.relevance}
        )
        same(got, want)
        signs = [str(getattr(got, name)) for name in ("session", "coverage", "time_cue")]
        assert signs == [str(value)] * 3  # "-0.0" kept


def test_a_model_that_is_not_frozen_gets_its_own_field_set() -> None:
    class Open(BaseModel):
        a: int = 0
        b: int = 1

    first, second = trusted(Open, {"a": 1, "b": 2}), trusted(Open, {"a": 3, "b": 4})
    first.a = 5  # assignment on an open model adds to its own set only
    assert first.model_fields_set is not second.model_fields_set
    assert second.model_fields_set == {"a", "b"} and second.a == 3


def test_a_trusted_model_is_an_instance_of_its_class_with_its_slots_set() -> None:
    """Trusted models are made as a blank model and then given their class
    (models._Blank): what comes out must be the class's own instance, behaving as the
    class does (frozen, its hash), with every slot the four setters set before."""
    plain = a_memory(tags=("x",))
    values = {"memory": plain, "score": 0.5, "tokens": 3, "breakdown": ScoreBreakdown()}
    samples: list[tuple[type[BaseModel], dict[str, Any]]] = [
        (Memory, dict(plain)),
        (Provenance, dict(plain.provenance)),
        (ScoreBreakdown, dict(ScoreBreakdown(rrf=0.25, lanes={"bm25": 1}))),
        (RecallResult, values),
        (
            RecallResponse,
            RecallResponse(
                query="q",
                as_of=from_us(T0),
                results=(RecallResult(**values),),
                tokens_used=3,
                token_budget=10,
            ).__dict__,  # not dict(): a response iterates over its results
        ),
    ]
    for cls, fields in samples:
        made, validated = trusted(cls, dict(fields)), cls(**fields)
        same(made, validated)
        assert made.__pydantic_extra__ is None and made.__pydantic_private__ is None
        with pytest.raises(PydanticValidationError):  # frozen, as the class is
            made.__setattr__(next(iter(fields)), None)
    assert hash(trusted(Provenance, dict(plain.provenance))) == hash(plain.provenance)


def test_a_model_of_another_layout_is_refused_rather_than_built_wrong() -> None:
    class Slotted(BaseModel):  # a slot of its own: not the blank model's layout
        model_config = ConfigDict(frozen=True)
        __slots__ = ("cache",)
        a: int = 0

    with pytest.raises(TypeError, match="Slotted"):
        trusted(Slotted, {"a": 1})
    with pytest.raises(TypeError, match="Slotted"):
        trusted_parts(Slotted)


def test_decoded_rows_share_their_immutable_parts_and_stay_the_validated_ones() -> None:
    """Rows with equal provenance values share one frozen Provenance, and a row whose
    valid_from is its t_created one datetime (decoding a row cost ~20 us, a third of it
    building those); the memories are still the validated ones, and an erasure's
    forget_all empties the shared provenances (fails before: a new one per row)."""
    from attestor_arango import memo
    from attestor_arango.store import codec

    first = a_memory(valid_from=from_us(T0 + 5))
    second = a_memory(id="m2", valid_from=from_us(T0 + 5), content="I moved to Rome")
    docs = [memory_to_doc(m) for m in (first, second)]
    for doc in docs:
        doc["tags"], doc["agent_trail"] = list(doc["tags"]), list(doc["agent_trail"])
    a, b = (memory_from_doc(d) for d in docs)
    for got, memory in ((a, first), (b, second)):
        same(got, Memory(**{**dict(memory), "provenance": Provenance(**dict(memory.provenance))}))
    assert a.provenance is b.provenance
    assert a.valid_from is a.t_created
    other = memory_from_doc({**docs[0], "session_id": "s2"})
    assert other.provenance is not a.provenance and other.provenance.session_id == "s2"
    assert len(codec.provenance_of) >= 2
    memo.forget_all()
    assert len(codec.provenance_of) == 0


def test_a_breakdown_lists_its_lanes_by_name_whatever_order_they_were_ranked_in() -> None:
    for ranks in ({"vector": 2, "bm25": 1}, {"bm25": 1, "vector": 2}, {"vector": 4}):
        c = Candidate(memory=a_memory())
        c.lane_ranks = dict(ranks)
        c.vector_score = c.bm25_score = 0.5
        got = c.breakdown()
        assert list(got.lanes) == sorted(ranks) and got.lanes == ranks
        same(got, ScoreBreakdown(**got.model_dump()))
        assert got.model_dump_json().index('"lanes":{"' + sorted(ranks)[0]) > 0


def test_a_stored_row_decodes_by_position_as_through_its_document(tmp_path: Any) -> None:
    """The embedded store reads memory rows by position (memories.memory_from_row, without
    the intermediate document): the same memory as decode_row + memory_from_doc gave, and as
    validation gives, for a plain row and one using every field; rows with the same agent
    trail share its Provenance; an erasure's forget_all empties the JSON-text memos."""
    import sqlite3

    from attestor_arango import memo
    from attestor_arango.scope import Scope
    from attestor_arango.store.embedded import memories, sql
    from attestor_arango.store.embedded.base import decode_row
    from attestor_arango.store.embedded.store import SQLiteStore

    trail = Provenance(agent_id="a", role="writer", agent_trail=("p", "a"), parent_agent_id="p")
    full = a_memory(
        id="m2",
        entity="Berlin",
        category="home",
        tags=("verbatim", "x"),
        confidence=0.5,
        valid_from=from_us(T0 - 7),
        valid_until=from_us(T0 + 10),
        t_expired=from_us(T0 + 20),
        superseded_by="m3",
        supersedes="m0",
        status=MemoryStatus.SUPERSEDED,
        provenance=trail.model_copy(update={"session_id": "s", "source_episode_id": "e"}),
        signature="sig",
        metadata={"k": [1, 2], "turn": {"replies_to": "m0"}},  # keys as stored: sorted
    )
    twin = a_memory(id="m4", provenance=trail, tags=("x",), metadata={"a": 1})
    store = SQLiteStore(tmp_path / "m.db")
    scope = Scope(tenant="t", namespace="n")
    for memory in (a_memory(), full, twin, a_memory(id="m5", provenance=trail)):
        store.insert_memory(scope, memory, None)
    store.close()
    conn = sqlite3.connect(tmp_path / "m.db")
    conn.row_factory = sqlite3.Row
    rows = conn.execute(f"SELECT {sql.MEMORY_COLUMNS} FROM memories ORDER BY rowid").fetchall()
    conn.close()
    got = [memories.memory_from_row(r) for r in rows]
    for memory, row, decoded in zip((a_memory(), full, twin), rows, got, strict=False):
        validated = Memory(**{**dict(memory), "provenance": Provenance(**dict(memory.provenance))})
        same(decoded, validated)
        same(decoded, memory_from_doc(decode_row(row)))
        same(decoded.provenance, validated.provenance)
    assert got[2].provenance is got[3].provenance
    got[2].metadata["b"] = 2  # each decoded row has its own metadata
    assert memories.memory_from_row(rows[2]).metadata == {"a": 1}
    assert len(memories._strings_of) >= 2 and len(memories._provenance_of_row) >= 2
    memo.forget_all()
    assert len(memories._strings_of) == 0 and len(memories._provenance_of_row) == 0


def test_results_built_in_one_loop_are_the_validated_ones_for_every_kind_of_candidate() -> None:
    """``candidates.results`` builds a recall's results and breakdowns in one loop (no call
    per model): each is the validated model with the values stated here, for a fused
    candidate, one whose scores a step changed after fusion (ints among the fields not in
    ``ROUNDED``), three
    lanes out of name order, a synthetic one, and a row closed after ``as_of`` (masked:
    active, no successor) next to one closed before it (kept as stored)."""
    from attestor_arango.retrieval.candidates import results

    as_of = T0 + 100
    fused = Candidate(a_memory(), {"bm25": 2}, None, 3.5, 1 / 62)  # as fusion makes it
    fused.lane_ranks["vector"], fused.vector_score = 1, 0.25
    fused.rrf += 1 / 61
    fused.rrf_norm = fused.relevance = 0.5
    fused.fused = (fused.rrf, fused.rrf_norm, round(fused.rrf, 12), 0.5)
    later = a_memory(id="m2", t_expired=from_us(T0 + 500), superseded_by="m3")
    changed = Candidate(memory=later, lane_ranks={"vector": 2, "mq_1": 1, "bm25": 3})
    changed.vector_score, changed.bm25_score = 0.5, 3
    changed.rrf, changed.rrf_norm, changed.graph_hops, changed.graph_bonus = 1 / 61, 0.2, 1, 0
    # the ROUNDED fields hold floats (every step stores them so: see
    # test_every_field_order_and_breakdown_take_as_rounded_is_stored_rounded); the others
    # may be ints, which the breakdown converts as validation does
    changed.decay, changed.boost, changed.freshness, changed.session = 0.95, 0.01, -0.15, 1.0
    changed.coverage, changed.time_cue = 0.125, 0.1
    changed.compute_relevance()
    closed = a_memory(id="m4", t_expired=from_us(T0 + 50), status=MemoryStatus.SUPERSEDED)
    synthetic = Candidate(memory=closed, synthetic=True, graph_hops=0, graph_bonus=0.3)
    synthetic.freshness = 0.1 + 0.2  # not rounded: the breakdown rounds it
    got = results([fused, changed, synthetic], [7, 9, 0], as_of)
    base = dict.fromkeys(("vector_rank", "vector_score", "bm25_rank", "bm25_score"))
    want = [
        (
            fused.memory,
            {**base, "vector_rank": 1, "vector_score": 0.25, "bm25_rank": 2, "bm25_score": 3.5}
            | {"lanes": {"bm25": 2, "vector": 1}, "rrf": round(1 / 62 + 1 / 61, 12)}
            | {"rrf_norm": 0.5, "relevance": 0.5, "final": 0.5},
            0.5,
            7,
        ),
        (
            later.at(as_of),
            {**base, "vector_rank": 2, "vector_score": 0.5, "bm25_rank": 3, "bm25_score": 3.0}
            | {"lanes": {"bm25": 3, "mq_1": 1, "vector": 2}, "rrf": round(1 / 61, 12)}
            | {"rrf_norm": 0.2, "graph_hops": 1, "graph_bonus": 0.0, "decay": 0.95}
            | {"boost": 0.01, "freshness": -0.15, "session": 1.0, "coverage": 0.125}
            | {"time_cue": 0.1, "relevance": changed.relevance, "final": changed.relevance},
            changed.relevance,
            9,
        ),
        (
            closed,
            {**base, "graph_hops": 0, "graph_bonus": 0.3, "freshness": 0.3, "synthetic": True},
            0.0,
            0,
        ),
    ]
    assert len(got) == len(want)
    for result, (memory, breakdown, score, tokens) in zip(got, want, strict=True):
        validated = RecallResult(
            memory=memory,
            score=score,
            tokens=tokens,
            breakdown=ScoreBreakdown(**{**ScoreBreakdown().model_dump(), **breakdown}),
        )
        same(result, validated)
        same(result.breakdown, validated.breakdown)
    assert got[1].memory == a_memory(id="m2") and got[2].memory is closed
    # one candidate's own result and breakdown are the loop's
    for c, tokens in ((fused, 7), (changed, 9), (synthetic, 0)):
        same(c.result(tokens, as_of), results([c], [tokens], as_of)[0])
    same(changed.breakdown(), got[1].breakdown)
