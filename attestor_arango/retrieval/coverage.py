"""Session coverage: how much of what the query asks a candidate's session says.

Reciprocal rank fusion keeps only ranks, so a turn that mentions every
distinctive word of the question and one that mentions a single common word can
sit next to each other. Coverage puts the magnitude back: the IDF-weighted share
of the query's distinct terms that a candidate's text contains, with the IDF
taken over the visible candidates only (replay-stable, like ``text.rescore_pool``).

Session coverage reads that share over the union of a session's candidates.
A conversation answers a question over several turns ("I went to the support
group" ... "it was so powerful"), so a session that covers the question as a
whole is evidence for each of its turns. Both are cheap: the candidates' texts
are already in hand, no store call is made.

A candidate's own coverage is not added: it rewards a statement for restating
the question's words, and an outdated fact often does that better than the one
that replaced it ("How far do I run each week?": "I run about 10 kilometres each
week" over "These days I run 25 kilometres a week"). For the same reason only
conversation records take part: turns stored with ``add_turns`` (tagged
``verbatim``) and the verbatim record of an ``ingest_round`` (tagged ``episode``).
A fact is a stand-alone statement even when it was read from a conversation and
carries its session id (the facts ``ingest_round`` extracts): its session's words
would credit the old fact for the question's words as its own words do. Memories
without a session id get no session coverage either.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from attestor_arango.retrieval.candidates import Candidate
from attestor_arango.retrieval.text_lane import terms
from attestor_arango.text import bm25

# the tags of conversation records: add_turns' turns, ingest_round's verbatim round
RECORD_TAGS = frozenset({"verbatim", "episode"})


def _session(c: Candidate) -> str | None:
    """The session whose coverage a candidate shares: a conversation record's only."""
    fields = c.fields  # the memory's, by key (candidates.py)
    # the tags first: a C call, where the provenance's session id goes through pydantic's
    # attribute hook, and most memories are no conversation record
    if RECORD_TAGS.isdisjoint(fields["tags"]):
        return None
    sid: str | None = fields["provenance"].session_id
    return sid


def credits_any(cands: Sequence[Candidate]) -> bool:
    """Whether ``apply_coverage`` can credit anyone: a conversation record with a session
    among ``cands`` (else it reads no term)."""
    # ``_session`` inline, in a loop (not any() over a generator, see has_turns): it runs on
    # every recall, over every candidate when none is a record (plain adds)
    # (an untagged memory, most of them, is told apart by its empty tags without a call)
    records = RECORD_TAGS
    for c in cands:
        fields = c.fields
        tags = fields["tags"]
        if tags and not records.isdisjoint(tags) and fields["provenance"].session_id is not None:
            return True
    return False


def query_weights(query: str, cands: Sequence[Candidate]) -> dict[str, float]:
    """IDF of each distinct query term over the candidates (the BM25 form, always > 0)."""
    q = frozenset(terms(query))
    return _weights(q, [q.intersection(c.content_terms()) for c in cands])


def _weights(q: frozenset[str], found: Sequence[set[str] | frozenset[str]]) -> dict[str, float]:
    """IDF of each query term, given the query terms each candidate contains."""
    if not q:
        return {}
    n = len(found)
    df: Counter[str] = Counter()
    for f in found:
        df.update(f)
    return {t: bm25.idf(n, df[t]) for t in sorted(q)}


def apply_coverage(cands: Sequence[Candidate], query: str, session_weight: float) -> None:
    """Adds ``session_weight * session coverage`` to each conversation record with a session.

    Coverage is in 0..1 (share of the query's total IDF weight); candidates of one
    session share the union of their terms. Without a conversation record among the
    candidates (plain adds) nothing is credited, so no term is looked at.
    """
    sessions = [_session(c) for c in cands]
    if all(sid is None for sid in sessions):
        return
    q = frozenset(terms(query))
    own = [q.intersection(c.content_terms()) for c in cands]
    weights = _weights(q, own)
    total = sum(weights.values())  # insertion order is sorted term order
    if total <= 0:
        return
    by_session: dict[str, set[str]] = {}
    for sid, found in zip(sessions, own, strict=True):
        if sid is not None:
            by_session.setdefault(sid, set()).update(found)
    for c, sid in zip(cands, sessions, strict=True):
        if sid is None:
            continue
        # sorted: a float sum in set order would depend on PYTHONHASHSEED
        sess = sum(weights[t] for t in sorted(by_session[sid])) / total
        c.coverage = round(session_weight * sess, 12)
        c.compute_relevance()
