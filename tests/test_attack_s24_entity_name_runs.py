"""Finding entity names in a recall query reads a bounded number of the query's word runs.

``EntityNames.find`` looked up every run of every name length the index holds: a query
of W words against names of 2..128 words sliced W x 127 runs of up to 128 words each
(a 32,000-character query of "a a a ..." against 127 entities named "a a", "a a a", ...
took 2.7 s in ``find`` alone, ~4 s per recall). Runs are now filtered by a rolling hash of
the query's words first; only runs that can still be claimed are read, about twice the
query's words at most. The answer is the one the pass over every run gave (checked here
against that pass on random texts).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from attestor_arango.text import entity_names
from attestor_arango.text.entity_names import EntityNames, name_words


class CountingWords(tuple[str, ...]):
    """The query's words, counting the runs read from them (slices)."""

    runs = 0

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            CountingWords.runs += 1
        return super().__getitem__(index)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> type[CountingWords]:
    CountingWords.runs = 0
    monkeypatch.setattr(entity_names, "name_words", lambda text: CountingWords(name_words(text)))
    return CountingWords


def reference_find(named: list[tuple[str, list[str]]], text: str) -> list[str]:
    """The pass over every run of every length (the former ``find``), as the oracle."""
    table: dict[int, dict[tuple[str, ...], set[str]]] = {}
    for key, surfaces in named:
        for surface in set(surfaces):
            form = name_words(surface)
            if form and len("".join(form)) >= 2:
                table.setdefault(len(form), {}).setdefault(form, set()).add(key)
    words = name_words(text)
    used = [False] * len(words)
    found: set[str] = set()
    for n in sorted(table, reverse=True):
        forms = table[n]
        places: dict[tuple[str, ...], list[int]] = {}
        for start in range(len(words) - n + 1):
            run = words[start : start + n]
            if run in forms:
                places.setdefault(run, []).append(start)
        for form in sorted(places):
            for key in sorted(forms[form]):
                for start in places[form]:
                    if not any(used[start : start + n]):
                        found.add(key)
                        used[start : start + n] = [True] * n
    return sorted(found)


@pytest.mark.parametrize("last", ["a", "b"])
def test_a_long_query_against_names_of_every_length_reads_few_runs(
    counted: type[CountingWords], last: str
) -> None:
    # 127 names "a a", "a a a", ... (128 words: the longest an entity label of 256
    # characters holds); with last="b" none occurs, though each run starts like one
    names = EntityNames((f"k{n}", [" ".join(["a"] * (n - 1) + [last])]) for n in range(2, 129))
    words = 4000
    found = names.find(" ".join(["a"] * words))
    assert found == (["k128", "k32"] if last == "a" else [])
    assert counted.runs <= 2 * words  # was 127 runs per word (499,872)


def test_a_query_naming_nothing_reads_no_run(counted: type[CountingWords]) -> None:
    names = EntityNames((f"k{n}", [f"name{n} part {n}"]) for n in range(500))
    assert names.find(" ".join(f"word{i}" for i in range(5000))) == []
    assert counted.runs == 0


@pytest.fixture(params=["hashed", "direct"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways ``find`` reads a text: hashing every run first (a long text) or reading
    each run (a short one, below ``_DIRECT_READS``); forced here for texts of any size."""
    monkeypatch.setattr(entity_names, "_DIRECT_READS", -1 if request.param == "hashed" else 10**9)
    return str(request.param)


def test_a_short_query_is_read_run_by_run(counted: type[CountingWords]) -> None:
    names = EntityNames([("nyc", ["New York City"]), ("paris", ["Paris"])])
    assert names.find("from New York City to Paris") == ["nyc", "paris"]
    assert counted.runs == 6 + 4  # every run of one word and of three: no hashing


def test_find_answers_as_the_pass_over_every_run(path: str) -> None:
    rng = random.Random(24)
    vocab = ["a", "b", "ab", "Paris", "new", "york", "city", "é", "x1"]
    for _ in range(300):
        named = [
            (f"k{i}", [" ".join(rng.choices(vocab, k=rng.randint(1, 4))) for _ in range(2)])
            for i in range(rng.randint(1, 12))
        ]
        text = " ".join(rng.choices(vocab, k=rng.randint(0, 40)))
        assert EntityNames(named).find(text) == reference_find(named, text), (named, text)


def test_shared_names_and_overlaps_keep_the_tie_rule(path: str) -> None:
    named = [("york", ["York"]), ("nyc", ["New York City"]), ("ny", ["New York"]),
             ("twin", ["New York"]), ("aa", ["a a"])]  # fmt: skip
    for text in ["New York City and York", "new york new york city", "a a a", "a a a a",
                 "York's New York", ""]:  # fmt: skip
        assert EntityNames(named).find(text) == reference_find(named, text)
