"""The in-memory indexes and memos stay out of the garbage collector's walk.

A full collection visits every reference held by a tracked container. Lists of
ids, texts and terms, one array.array per posting and lru_cache nodes made each
full collection of a process with a loaded 100k-memory tenant take ~66 ms
(and it grows with the rows). These tests count the references the collector
would walk; they fail if a per-row Python container creeps back in.
"""

from __future__ import annotations

import gc
import subprocess
import sys
import threading

import numpy as np
import pytest

from attestor_arango.clock import OPEN
from attestor_arango.memo import Memo, memo
from attestor_arango.store.embedded.column import ObjectColumn
from attestor_arango.store.embedded.text_index import TenantText
from attestor_arango.store.embedded.vectors import TenantVectors
from attestor_arango.text.stemming import stem

ROWS = 3000


def _walked() -> int:
    """References the next full collection would follow, from every tracked object."""
    gc.collect()
    gc.collect()
    return sum(len(gc.get_referents(o)) for o in gc.get_objects())


def _rows(n: int) -> tuple[list[str], list[str], list[str], np.ndarray]:
    ids = [f"m{i:06d}" for i in range(n)]
    texts = [f"note {i} about topic{i % 97} and thing{i} w{i * 7}" for i in range(n)]
    times = np.array([[i, OPEN, i, OPEN] for i in range(n)], dtype=np.int64)
    return ids, ["n"] * n, texts, times


def test_loaded_indexes_add_no_per_row_references_to_the_collector() -> None:
    ids, namespaces, texts, times = _rows(ROWS)
    vectors = np.random.default_rng(0).standard_normal((ROWS, 8)).astype(np.float32)
    before = _walked()
    text = TenantText()
    text.load(ids, namespaces, texts, times, list(range(ROWS)))
    index = TenantVectors(8)
    index.load(ids, namespaces, vectors, times)
    for i in range(ROWS, ROWS + 200):  # rows added one by one take the same path
        text.add(f"m{i:06d}", "n", f"later note {i} word{i}", (i, OPEN, i, OPEN), i)
        index.add(f"m{i:06d}", "n", vectors[0], i, OPEN, i, OPEN)
    grown = _walked() - before
    # per-row lists (ids, texts, terms, postings) would add several references per row
    assert grown < ROWS // 10, f"the collector now walks {grown} more references"
    assert text.n == index.n == ROWS + 200  # both still hold every row


def test_object_column_reads_like_the_list_it_replaces() -> None:
    values = [("a", "b"), (), ("c",), ("d", "e")]  # tuples stay whole, never unpacked
    column = ObjectColumn(values[:2])
    for v in values[2:]:
        column.append(v)
    for _ in range(40):  # past the first capacity: growing keeps what was there
        column.append(("x",))
    assert len(column) == 44
    assert column[:4] == values and list(column)[:4] == values
    assert column[1] == () and column[-1] == ("x",)
    assert column.take(np.array([3, 0])) == [("d", "e"), ("a", "b")]
    assert column.take([]) == []
    with pytest.raises(IndexError):
        column[44]
    assert not gc.is_tracked(column._data)


def test_memo_returns_the_function_value_and_stays_bounded() -> None:
    calls: list[str] = []

    @memo(3)
    def shout(word: str) -> str:
        calls.append(word)
        return word.upper()

    assert [shout(w) for w in ["a", "b", "a", "c", "d", "a"]] == ["A", "B", "A", "C", "D", "A"]
    assert len(shout) <= 3
    assert calls == ["a", "b", "c", "d", "a"]  # "a" again only after the memo was emptied
    shout.clear()
    assert len(shout) == 0
    with pytest.raises(ValueError, match="at least one"):
        Memo(str.upper, 0)


def test_memo_of_strings_is_untracked_and_safe_across_threads() -> None:
    words = [f"running{i}" for i in range(5000)]
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for w in words:
                assert stem(w) == stem.__wrapped__(w)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    gc.collect()
    assert not gc.is_tracked(stem._values)


def test_a_posting_still_viewed_by_a_reader_takes_new_rows_all_the_same() -> None:
    """A live numpy view pins a bytearray's size; the index then extends a copy."""
    ids, namespaces, texts, times = _rows(10)
    text = TenantText()
    for i in range(10):  # rows added one by one (a bulk load keeps its postings in arrays)
        text.add(ids[i], namespaces[i], texts[i], times[i].tolist())
    view = np.frombuffer(text.postings["note"], dtype=np.int32)  # as search reads it
    text.add("late", "n", "note added while viewed", (99, OPEN, 99, OPEN))
    rows = np.frombuffer(text.postings["note"], dtype=np.int32).reshape(-1, 2)[:, 0]
    assert rows.tolist() == [*range(10), 10]
    assert view.size == 20  # the reader's view still shows what it read


def test_the_ollama_client_is_imported_only_when_an_ollama_backend_is_made() -> None:
    """Its pydantic models made each full collection ~10 ms longer, used or not."""
    code = (
        "import sys\n"
        "from attestor_arango.memory import AgentMemory\n"
        "assert 'ollama' not in sys.modules, 'imported with the library'\n"
        "from attestor_arango.embeddings import OllamaEmbedder\n"
        "OllamaEmbedder(base_url='http://127.0.0.1:9')\n"
        "assert 'ollama' in sys.modules\n"
    )
    _python(code)


def _python(code: str) -> str:
    """What a fresh interpreter running ``code`` prints (it must exit 0)."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_process_that_adds_and_recalls_with_its_own_embedder_loads_no_llm_client(
    tmp_path: object,
) -> None:
    # httpx (imported by the LLM providers) loads its command line too: click, rich and
    # pygments, ~21,000 tracked objects that every full collection of the process walks
    code = (
        "import sys\n"
        "from attestor_arango import AgentMemory\n"
        "from attestor_arango.embeddings import HashingEmbedder\n"
        f"m = AgentMemory({str(tmp_path)!r} + '/m.db', embedder=HashingEmbedder(64))\n"
        "m.add('Alice moved to Paris in May', entity='Alice')\n"
        "assert m.recall('Where does Alice live?').results\n"
        "m.close()\n"
        "print(sorted(n for n in ('httpx', 'rich', 'pygments', 'click') if n in sys.modules))\n"
    )
    assert _python(code).strip() == "[]"
