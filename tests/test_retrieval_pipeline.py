"""The whole recall pipeline over an in-memory store: degradation, traces, LLM lanes."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest
from retrieval_fakes import FakeStore, mem, view_at

from attestor_arango.config import TraceSettings
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.errors import ValidationError
from attestor_arango.retrieval import RetrievalConfig, recall
from attestor_arango.retrieval.trace import Tracer, recall_id, tracer_from_settings
from attestor_arango.scope import Scope
from tests.support.trace_reading import trace_text

SCOPE = Scope("t", "ns")
EMB = HashingEmbedder(64)


def corpus() -> FakeStore:
    s = FakeStore(EMB)
    s.add(mem("m1", "Alice moved to Paris in spring", day=1, entity="Alice"))
    s.add(mem("m2", "Bob bakes sourdough bread every weekend", day=2, entity="Bob"))
    s.add(mem("m3", "Paris has lovely museums and cafes", day=3, entity="Paris"))
    s.add(mem("m4", "Carol plays the violin in an orchestra", day=4, entity="Carol"))
    s.add(mem("m5", "Alice works at Acme as an engineer", day=5, entity="Alice"))
    s.entity("alice", "Alice")
    s.entity("paris", "Paris")
    s.entity("bob", "Bob")
    s.entity("acme", "Acme")
    s.relate("r1", "alice", "lives_in", "paris", memory_id="m1")
    s.relate("r2", "alice", "works_at", "acme")
    return s


def run(store: FakeStore, query: str = "Where does Alice live?", **kw: object):  # type: ignore[no-untyped-def]
    cfg = kw.pop("config", RetrievalConfig())
    return recall(store, EMB, SCOPE, query, view_at(10), int(kw.pop("budget", 2000)), cfg, **kw)  # type: ignore[arg-type]


def test_full_pipeline_explains_every_result() -> None:
    resp = run(corpus())
    assert resp.errors == {}
    assert resp.query_entities == ("alice",)
    ids = [r.memory.id for r in resp.results]
    assert ids[0] in {"m1", "m5"}
    top = resp.results[0].breakdown
    assert top.graph_hops == 0 and top.graph_bonus == pytest.approx(0.30)
    # the synthetic relation not backed by a retrieved memory joins; the backed one does not
    synth = [r for r in resp.results if r.breakdown.synthetic]
    assert [r.memory.content for r in synth] == ["Alice works at Acme"]
    assert synth[0].memory.id.startswith("rel:")
    # scores follow the order, and each score is the breakdown's final value
    scores = [r.score for r in resp.results]
    assert scores == sorted(scores, reverse=True)
    # the final score is the relevance, bit for bit, kept or cut by the budget
    assert all(
        repr(r.score) == repr(r.breakdown.final) == repr(r.breakdown.relevance)
        for r in resp.results
    )
    assert resp.tokens_used == sum(r.tokens for r in resp.results) <= resp.token_budget
    cut: list = []
    small = run(corpus(), budget=12, cut=cut)
    assert cut and len(small.results) < len(resp.results)
    assert all(
        repr(r.score) == repr(r.breakdown.final) == repr(r.breakdown.relevance) != "0.0"
        for r in (*small.results, *(x.result for x in cut))
    )


def test_relations_of_closed_memories_do_not_surface() -> None:
    store = corpus()
    store.add(mem("m6", "Alice works at Initech", day=2, entity="Alice", expired_day=6))
    store.relate("r3", "alice", "worked_at", "initech", memory_id="m6")
    texts = [r.memory.content for r in run(store, "Alice employer") if r.breakdown.synthetic]
    assert texts == ["Alice works at Acme"]  # r3's memory was closed on day 6, before day 10


def test_graph_affinity_only_when_the_query_names_entities() -> None:
    resp = run(corpus(), "sourdough bread")
    assert resp.query_entities == ()
    assert all(r.breakdown.graph_bonus == 0.0 and r.breakdown.graph_hops is None for r in resp)


@pytest.mark.parametrize(
    ("broken", "error", "lane_left"),
    [("vector_candidates", "vector_error", "bm25"), ("text_pool", "bm25_error", "vector")],
)
def test_a_failing_lane_degrades_and_says_so(broken: str, error: str, lane_left: str) -> None:
    store = corpus()
    store.fail.add(broken)
    resp = run(store)
    assert set(resp.errors) == {error} and "is down" in resp.errors[error]
    real = [r for r in resp.results if not r.breakdown.synthetic]
    assert real, "the other lane still answers"
    assert all(set(r.breakdown.lanes) == {lane_left} for r in real)


def test_a_failing_graph_degrades_to_lane_ranking() -> None:
    store = corpus()
    store.fail.add("hops")
    resp = run(store)
    assert "graph_error" in resp.errors
    assert resp.results and all(r.breakdown.graph_bonus == 0.0 for r in resp)


def test_every_lane_down_gives_an_empty_answer_with_both_errors() -> None:
    store = corpus()
    store.fail |= {"vector_candidates", "text_pool"}
    resp = run(store)
    assert set(resp.errors) >= {"vector_error", "bm25_error"}
    assert [r for r in resp.results if not r.breakdown.synthetic] == []


def test_recall_only_reads() -> None:
    store = corpus()
    run(store)
    # FakeStore raises on any method it does not implement (every write is one of those)
    assert set(store.calls) <= {
        "vector_candidates",
        "text_pool",
        "get_vectors",
        "known_entities",
        "hops",
        "relations_backed",
        "get_memories",
    }


def test_ranking_ignores_the_wall_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    first = run(corpus()).model_dump_json()
    monkeypatch.setattr(time, "time", lambda: 4_102_444_800.0)  # the year 2100
    monkeypatch.setattr(time, "time_ns", lambda: 4_102_444_800 * 10**9)
    assert run(corpus()).model_dump_json() == first


def test_as_of_masks_later_closes_in_results() -> None:
    store = FakeStore(EMB)
    store.add(mem("old", "the office is in Leeds", day=1, expired_day=20))
    resp = run(store, "office Leeds")
    assert resp.results[0].memory.t_expired is None  # closed after day 10: masked


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValidationError):
        run(corpus(), "   ")
    with pytest.raises(ValidationError):
        run(corpus(), budget=-1)


def test_budget_limits_tokens() -> None:
    resp = run(corpus(), budget=12)
    assert resp.tokens_used <= 12
    assert len(resp.results) < len(run(corpus()).results)


# -- LLM lanes --------------------------------------------------------------------------


def test_llm_lanes_are_never_called_when_off() -> None:
    def boom(query: str) -> list[str]:
        raise AssertionError("an LLM lane ran with its flag off")

    resp = run(corpus(), expanders={"hyde": boom, "multi_query": boom})
    assert resp.errors == {}


def test_llm_lanes_join_the_fusion_when_on() -> None:
    seen: list[str] = []

    def hyde(query: str) -> list[str]:
        seen.append(query)
        return ["Carol plays violin"]

    def multi(query: str) -> list[str]:
        return ["violin orchestra", "music"]

    cfg = RetrievalConfig(hyde_enabled=True, multi_query_enabled=True)
    resp = run(
        corpus(), "who makes music?", config=cfg, expanders={"hyde": hyde, "multi_query": multi}
    )
    assert seen == ["who makes music?"]
    carol = next(r for r in resp if r.memory.id == "m4")
    assert {"hyde_1", "mq_1"} <= set(carol.breakdown.lanes)


def test_a_failing_llm_lane_degrades() -> None:
    def down(query: str) -> list[str]:
        raise TimeoutError("llm timed out")

    cfg = RetrievalConfig(hyde_enabled=True)
    resp = run(corpus(), config=cfg, expanders={"hyde": down})
    assert "hyde_error" in resp.errors and resp.results


# -- traces ------------------------------------------------------------------------------


def read_trace(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in trace_text(path).splitlines()]


def test_trace_events_without_query_or_content(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    store = corpus()
    store.fail.add("vector_candidates")
    resp = run(store, tracer=Tracer(path))
    events = read_trace(path)
    steps = [e["step"] for e in events]
    assert steps == ["start", "vector", "bm25", "fuse", "graph", "time", "rerank", "budget"]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert {e["recall_id"] for e in events} == {resp.recall_id}
    # the lane's error by its type; its message may quote the query (session 31)
    assert events[1]["error"].startswith("RuntimeError: <message withheld, ")
    assert "is down" in resp.errors["vector_error"]  # the caller reads it whole
    text = trace_text(path)
    assert "Alice" not in text and "Where does" not in text
    assert events[-1]["candidates_out"] == len(resp.results)


def test_trace_includes_query_only_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    run(corpus(), tracer=Tracer(path, include_content=True))
    assert read_trace(path)[0]["query"] == "Where does Alice live?"


def test_recall_id_is_deterministic_and_input_bound() -> None:
    a, b = run(corpus()), run(corpus())
    assert a.recall_id == b.recall_id
    assert run(corpus(), "Where is Bob?").recall_id != a.recall_id


@pytest.mark.parametrize(
    "args",
    [("t", "n", 'who "is" Zoë?', 1, None, 50), ("t", None, "q", -5, (1, 2), 0)],
)
def test_recall_id_hashes_the_canonical_json_of_every_input(
    args: tuple[str, str | None, str, int, tuple[int, int] | None, int],
) -> None:
    """The id is defined by the inputs' canonical JSON, the config's settings last."""
    config = RetrievalConfig().replace(vector_k=7)
    tenant, namespace, query, as_of, window, budget = args
    payload = json.dumps(
        [tenant, namespace, query, as_of, list(window) if window else None, budget],
        sort_keys=True,
        separators=(",", ":"),
    )[:-1]
    settings = config.to_dict()
    del settings["vector_prefilter"], settings["vector_prefilter_rows"]  # default: left out
    payload += "," + json.dumps(settings, sort_keys=True, separators=(",", ":")) + "]"
    want = "rc_" + hashlib.sha256(payload.encode("utf-8")).hexdigest()[:24]
    assert recall_id(tenant, namespace, query, as_of, window, budget, config.to_json()) == want
    assert config.to_json() is config.to_json()  # made once per config
    other = RetrievalConfig().to_json()
    assert recall_id(tenant, namespace, query, as_of, window, budget, other) != want


def test_tracing_is_off_by_default_and_picks_a_path_when_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert tracer_from_settings(TraceSettings()) is None
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    chosen = TraceSettings(enabled=True)  # ATTESTOR_TRACE=1 alone: beside the default store
    assert chosen.path == str(tmp_path / "data" / "attestor-arango" / "recall-trace.jsonl")
    assert tracer_from_settings(chosen) is not None
    tracer = tracer_from_settings(TraceSettings(enabled=True, path=str(tmp_path / "x.jsonl")))
    assert tracer is not None and not tracer.include_content


def test_the_vector_prefilter_is_on_from_250k_rows_by_default_and_out_of_the_recall_id() -> None:
    """By default the store is asked for the approximate stage from 250k visible rows and
    the config JSON (part of every recall id) is the one of before the settings existed;
    vector_prefilter=0 asks as before the stage existed (exact) and is in the id; other
    values reach the store and the id."""
    store = corpus()
    run(store)
    assert store.prefilters and set(store.prefilters) == {(5000, 250_000)}
    default = RetrievalConfig().to_json()
    assert "vector_prefilter" not in default and "vector_prefilter_rows" not in default
    exact = RetrievalConfig(vector_prefilter=0)
    assert '"vector_prefilter":0' in exact.to_json()
    store = corpus()
    run(store, config=exact)
    assert set(store.prefilters) == {(0, 0)}  # the keywords' defaults: not passed
    other = RetrievalConfig(vector_prefilter=2000, vector_prefilter_rows=10_000)
    assert '"vector_prefilter":2000' in other.to_json()
    assert '"vector_prefilter_rows":10000' in other.to_json()
    store = corpus()
    run(store, config=other)
    assert set(store.prefilters) == {(2000, 10_000)}
    with pytest.raises(ValidationError):
        RetrievalConfig(vector_prefilter=-1)
    with pytest.raises(ValidationError):
        RetrievalConfig(vector_prefilter_rows=-1)
