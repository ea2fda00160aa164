"""The text lane's stemmer: the C build (PyStemmer) is used and stems like the Python one.

BM25 re-scoring stems every candidate's words on the read path; the pure-Python
Snowball stemmer made that the largest cost of a recall at 100k memories. The C
build runs the same Snowball algorithm; these tests keep the swap honest.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import Stemmer
from snowballstemmer.porter_stemmer import PorterStemmer

from attestor_arango.retrieval import text_lane as text

CASES = Path(__file__).resolve().parents[1] / "benchmarks" / "knowledge_updates" / "cases.json"

TRICKY = [
    "caresses",
    "ponies",
    "ties",
    "caress",
    "cats",
    "feed",
    "agreed",
    "plastered",
    "bled",
    "motoring",
    "sing",
    "conflated",
    "troubled",
    "sized",
    "hopping",
    "tanned",
    "falling",
    "hissing",
    "fizzed",
    "failing",
    "filing",
    "happy",
    "sky",
    "relational",
    "conditional",
    "rational",
    "valenci",
    "hesitanci",
    "digitizer",
    "conformabli",
    "radicalli",
    "differentli",
    "vileli",
    "analogousli",
    "vietnamization",
    "predication",
    "operator",
    "feudalism",
    "decisiveness",
    "hopefulness",
    "callousness",
    "formaliti",
    "sensitiviti",
    "sensibiliti",
    "triplicate",
    "formative",
    "formalize",
    "electriciti",
    "electrical",
    "hopeful",
    "goodness",
    "revival",
    "allowance",
    "inference",
    "airliner",
    "gyroscopic",
    "adjustable",
    "defensible",
    "irritant",
    "replacement",
    "adjustment",
    "dependent",
    "adoption",
    "homologou",
    "communism",
    "activate",
    "angulariti",
    "homologous",
    "effective",
    "bowdlerize",
    "probate",
    "rate",
    "cease",
    "controll",
    "roll",
    "generously",
    "running",
    "ran",
    "relocated",
    "vegetarian",
]


def _words() -> list[str]:
    found = set(TRICKY)
    found |= set(re.findall(r"[a-z]+", json.dumps(json.loads(CASES.read_text())).lower()))
    return sorted(found)


def test_the_c_stemmer_is_in_use() -> None:
    assert isinstance(text._STEMMER, Stemmer.Stemmer)


def test_c_and_python_stemmers_agree() -> None:
    python, c = PorterStemmer(), Stemmer.Stemmer("porter")
    words = _words()
    assert len(words) > 300
    differ = [(w, python.stemWord(w), c.stemWord(w)) for w in words]
    assert [d for d in differ if d[1] != d[2]] == []
    # and the stems are real stems, not the words handed back
    assert sum(1 for w, _, s in differ if s != w) > len(words) // 4


def test_no_token_is_empty() -> None:
    """Porter reduces "s" (of "Ana's") to nothing; the token stays "s", never ''."""
    from attestor_arango.retrieval.text_lane import terms
    from attestor_arango.store.embedded.text_index import query_terms

    assert terms("Ana's dog isn't here") == ("ana", "s", "dog", "isn", "t")  # "here": a stop word
    assert "" not in query_terms("Caroline's s")


def test_the_bulk_vocabulary_reads_texts_as_stems_and_terms_does() -> None:
    """The text index's bulk load numbers stems with ``Vocabulary``: same stems, same terms."""
    from attestor_arango.text.stemming import Vocabulary, stems_and_terms

    texts = [
        "The runners were running; Ana's ﬁle runs!",
        "",
        "the and of",
        "Über 42 café CAFÉ running runs",
        "The runners were running; Ana's ﬁle runs!",
    ]
    vocabulary = Vocabulary()
    for sample in texts:
        numbers, terms = vocabulary.read(sample)
        stems, expected = stems_and_terms(sample)
        names = {n: s for s, n in vocabulary.numbers.items()}
        assert [names[n] for n in numbers] == stems
        assert terms == expected
    assert len(set(vocabulary.numbers.values())) == len(vocabulary.numbers)
