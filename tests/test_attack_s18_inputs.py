"""Session 18 attack battery, bad input.

The Python API: REST, MCP and the CLI check a read's ``status`` against a string schema
before the library sees it; the library is a public surface too, and a caller passing a
list or a mapping as ``status`` must get the typed ``ValidationError`` the four reads give
any unknown status, never a ``TypeError`` from inside the check, and nothing stored may
change.

REST: the method of a request is the client's text too; ``/metrics`` must not make a
series of each one.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import pytest
from attack_support import AUTH, CTX, acme_ring, seeded, stored
from starlette.testclient import TestClient

from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.api.app import create_app

READS = {
    "list": {},
    "count": {},
    "list_page": {},
    "search": {"query": "green tea"},
}


@pytest.mark.parametrize("status", [[], ["active"], {}, {"active": 1}, 1, b"active"])
@pytest.mark.parametrize("read", list(READS))
def test_a_status_that_is_no_text_is_a_validation_error_on_every_read(
    tmp_path: Path, read: str, status: Any
) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    before = stored(mem)
    with pytest.raises(ValidationError, match="status must be one of"):
        getattr(mem, read)(**READS[read], status=status, context=CTX)
    assert stored(mem) == before
    mem.close()


def test_methods_a_client_makes_up_share_one_metrics_label(tmp_path: Path) -> None:
    """The HTTP server takes any token as a method, and ``/metrics`` answers anyone: a
    label per method sent would let an unauthenticated client grow the registry (and the
    scrape) without bound, one series per name it makes up."""
    mem, _, _ = seeded(tmp_path / "m.db")
    client = TestClient(create_app(mem, keys=acme_ring()), raise_server_exceptions=False)
    made_up = [f"ZQ{i}X" for i in range(5)]
    for method in made_up:
        assert client.request(method, "/v1/memories").status_code == 405
    client.get("/v1/stats", headers=AUTH)
    lines = [
        line
        for line in client.get("/metrics").text.splitlines()
        if line.startswith("attestor_http_requests_total{")
    ]
    methods = {re.search(r'method="([^"]*)"', line).group(1) for line in lines}  # type: ignore[union-attr]
    assert methods == {"GET", "other"}
    assert not any(m in line for m in made_up for line in lines)
    ours = [line for line in lines if 'method="other"' in line and 'route="/v1/memories"' in line]
    assert len(ours) == 1 and ours[0].endswith(" 5.0")
    mem.close()


class _Counted(str):
    """A tag as the check normalises it, counting the comparisons made with it."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        _Counted.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_refusing_too_many_tags_compares_each_tag_a_bounded_number_of_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 1 MB body holds ~130,000 short tags; each was compared with every distinct tag
    kept before it, so one request of any reader (``/v1/memories/list`` takes tags) held a
    worker and the interpreter for minutes before its 422. Counted, not timed: the check
    compares each tag with a bounded number of others, whatever the list's length."""
    import unicodedata

    from attestor_arango import validation

    class Normalising:
        """``unicodedata`` whose ``normalize`` hands back counted strings."""

        def __getattr__(self, name: str) -> Any:
            return getattr(unicodedata, name)

        @staticmethod
        def normalize(form: Any, text: str) -> str:
            return _Counted(unicodedata.normalize(form, text))

    mem, _, _ = seeded(tmp_path / "m.db")
    before = stored(mem)
    monkeypatch.setattr(validation, "unicodedata", Normalising())
    many = [f"t{i:x}" for i in range(3000)]
    _Counted.compared = 0
    with pytest.raises(ValidationError, match="at most 64 tags"):
        mem.list(tags=many, context=CTX)
    assert _Counted.compared <= 2 * len(many)
    assert validation.check_tags(["a", " a", "b", "a "]) == ("a", "b")  # first kept, once
    assert stored(mem) == before
    mem.close()


@pytest.mark.parametrize("said", ["I'm ", "I am ", "I do not ", "we "])
def test_a_round_of_one_subject_said_again_and_again_reads_a_bounded_number_of_clauses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, said: str
) -> None:
    """The rule extractor read a clause once from its start and then once more from each
    inner "I" or "we" on: a user turn of "I'm " said 7,500 times (30,000 characters, under
    the content limit) read 7,500 suffixes of up to 30,000 characters each and held the
    worker 40 s. Counted, not timed: the frames read stay few whatever the turn's length,
    and the round is stored as any other."""
    from attestor_arango.ingest import extract

    reads: list[int] = []
    real = extract.read_clause

    def counted(clause: str, label: str) -> Any:
        reads.append(len(clause))
        return real(clause, label)

    monkeypatch.setattr(extract, "read_clause", counted)
    mem, _, _ = seeded(tmp_path / "m.db")
    text = said * (30_000 // len(said))
    result = mem.ingest_round({"user": text, "assistant": "Noted."}, context=CTX)
    assert result.episode.id
    assert len(reads) <= 2 * (1 + extract.INNER_SUBJECTS)
    mem.close()


def _things(n: int) -> list[str]:
    """``n`` distinct made-up words (letters only, so each is a value of its own)."""
    letters = "bcdfghklmnprstvz"
    return ["".join(letters[(i >> s) & 15] for s in (0, 4, 8)) + "o" for i in range(n)]


def test_a_round_that_yields_too_many_facts_is_refused_before_anything_is_stored(
    tmp_path: Path,
) -> None:
    """Each fact of a round goes through ``add``'s write path under the store's one write
    lock, and each reads the entity's rows, the round's earlier facts among them: a
    30,000-character turn of "I like X." said 2,000 times held the lock (every tenant
    waiting) for over three minutes. Such a round is refused, naming the limit, and
    nothing is stored, not even its episode."""
    from attestor_arango.ingest import pipeline

    mem, _, _ = seeded(tmp_path / "m.db")
    before = stored(mem)
    text = " ".join(f"I like {w}." for w in _things(pipeline.MAX_FACTS_PER_ROUND + 1))
    with pytest.raises(ValidationError, match="several rounds"):
        mem.ingest_round({"user": text, "assistant": "Noted."}, context=CTX)
    assert stored(mem) == before
    fine = " ".join(f"I like {w}." for w in _things(3))
    assert len(mem.ingest_round({"user": fine}, context=CTX).memories) == 3
    mem.close()


def test_consolidation_skips_an_episode_with_too_many_facts_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An episode stored before the limit (or imported) is not re-read whole either."""
    from attestor_arango.ingest import pipeline

    mem, _, _ = seeded(tmp_path / "m.db")
    mem.ingest_round({"user": " ".join(f"I like {w}." for w in _things(5))}, context=CTX)
    before = stored(mem, with_audit=False)
    monkeypatch.setattr(pipeline, "MAX_FACTS_PER_ROUND", 2)
    report = mem.consolidate(context=CTX)
    assert any("several rounds" in w for w in report.warnings)
    assert not report.memory_ids and stored(mem, with_audit=False) == before
    mem.close()


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_line_break_in_the_path_cannot_forge_an_access_log_line(
    tmp_path: Path, fmt: str, capfd: pytest.CaptureFixture[str]
) -> None:
    """The request's path is percent-decoded, so ``%0A`` is a line break in it; the text log
    (the default) wrote it as is, and anyone, without a key, could end the access line and
    write one of their own (a purge that never ran). Each request is one line of the log."""
    from attestor_arango.interfaces.api import logs

    mem, _, _ = seeded(tmp_path / "m.db")
    client = TestClient(create_app(mem, keys=acme_ring()), raise_server_exceptions=False)
    forged = "INFO attestor_arango.access [abc] POST /v1/governance/purge 200"
    package = logging.getLogger("attestor_arango")
    kept = (list(package.handlers), package.level, package.propagate)
    logs.configure(fmt)
    try:
        capfd.readouterr()
        for brk in ("%0A", "%0D", "%E2%80%A8", "%C2%85"):
            assert client.get(f"/v1/memories/x{brk}{forged}", headers=AUTH).status_code == 404
        lines = [line for line in capfd.readouterr().err.splitlines() if line.strip()]
    finally:
        package.handlers[:], package.level, package.propagate = kept[0], kept[1], kept[2]
    assert len(lines) == 4
    assert not any(line.startswith(forged) for line in lines)
    assert all("GET unmatched 404" in line for line in lines)  # the path is never logged
    mem.close()


class _Words(tuple):  # type: ignore[type-arg]
    """A query's words, counting the slices taken of them."""

    sliced = 0

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            _Words.sliced += 1
        return tuple.__getitem__(self, index)


def _recognized_before(query: str, entities: list[Any]) -> list[str]:
    """The matching as it was (every form tried at every place of the query): the answer
    the bounded one must give."""
    from attestor_arango.retrieval.entities import words

    q = words(query)
    forms = []
    for ent in entities:
        for surface in {ent.name, ent.key, *ent.aliases}:
            w = words(surface)
            if w and len("".join(w)) >= 2:
                forms.append((w, ent.key))
    forms.sort(key=lambda f: (-len(f[0]), f[0], f[1]))
    used = [False] * len(q)
    found: set[str] = set()
    for form, key in forms:
        for start in range(len(q) - len(form) + 1):
            if q[start : start + len(form)] == form and not any(used[start : start + len(form)]):
                found.add(key)
                used[start : start + len(form)] = [True] * len(form)
    return sorted(found)


def test_naming_entities_in_a_long_query_reads_each_place_a_bounded_number_of_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every recall (and every ingested round, whose text is its query) looks for the
    tenant's entity names in the query; each name was compared at every word of it, so a
    tenant with 10,000 entities (an ingested round of 30,000 characters can add 4,000) and a
    32,000-character query held the interpreter 4 s per recall, any reader's. Counted, not
    timed; the entities found are the same as before, word for word."""
    import random

    from attestor_arango.models import Entity
    from attestor_arango.retrieval import entities as recognition

    rng = random.Random(18)
    vocab = [f"w{i}" for i in range(300)]
    known = [
        Entity(
            tenant="t",
            namespace="n",
            key=" ".join(rng.sample(vocab, rng.randint(1, 3))),
            name=" ".join(rng.sample(vocab, rng.randint(1, 3))).title(),
            aliases=tuple(" ".join(rng.sample(vocab, rng.randint(1, 2))) for _ in range(2)),
        )
        for _ in range(400)
    ]
    for _ in range(30):
        query = " ".join(rng.choices(vocab, k=rng.randint(0, 60)))
        assert recognition.recognize(query, known) == _recognized_before(query, known)
    from attestor_arango.text import entity_names

    real = entity_names.name_words
    monkeypatch.setattr(entity_names, "name_words", lambda text: _Words(real(text)))
    query = " ".join(rng.choices(vocab, k=2000))
    _Words.sliced = 0
    assert recognition.recognize(query, known)
    assert _Words.sliced <= 4 * 2000
