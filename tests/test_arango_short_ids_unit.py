"""A short id (the start or end of a memory id a person copied) is found whatever the
case of the stored id, on ArangoDB as on the embedded store.

Ids the library makes are lowercase UUIDv7s, but an import keeps the ids it is given, and
another system may print its UUIDs in uppercase (UUID text is case-insensitive; ``get``
lower-cases what it is given, ``core.reads.resolve_id``). SQLite's ``LIKE`` folds ASCII
case, so the embedded store found ``0190ABCD-...`` for ``0190abcd``; the AQL compared with
``STARTS_WITH`` and ``==``, which do not, so ArangoDB said not found.

No server here: the query's matching clause is evaluated as the ArangoDB 3.12 manual
defines its functions (``STARTS_WITH(text, prefix)``, ``RIGHT(value, n)``: the ``n``
rightmost characters, ``LENGTH`` of a string: its characters, ``LOWER``: upper-case
letters to lower case, all else unchanged) and compared with the embedded store's answer
for the same rows. The live contract suite (``ARANGO_URL``) runs the query itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from attestor_arango.clock import from_us
from attestor_arango.models import Memory, Provenance, content_hash
from attestor_arango.scope import Scope
from attestor_arango.store.arango.registry import Registry, strip_comments_and_strings
from attestor_arango.store.embedded.store import SQLiteStore
from attestor_arango.store.protocol import EmbeddingSpace

T0 = 1_767_225_600_000_000
A = Scope("acme", "ns1")
IDS = [
    "0190ABCD-7E3F-7A01-8B2C-3D4E5F6A9F3E",  # an uppercase UUID brought in by an import
    "0190abcd-7e3f-7a01-8b2c-3d4e5f6a1111",
    "0190AbCd-0000-7000-8000-00000000aaaa",
    "MEM-2024-0007-BEEF",  # another system's own id
    "ÄBCD-0001-ÉF12",  # letters outside ASCII: LOWER folds them, nothing hex comes of them
]
FRAGMENTS = ["0190abcd", "0190", "9f3e", "aaaa", "beef", "0007-beef", "ef12", "bcd-", "0001"]

# the manual's definitions, for strings (LENGTH counts characters, as Python's len)
FUNCTIONS: dict[str, Callable[..., object]] = {
    "STARTS_WITH": lambda text, prefix: text.startswith(prefix),
    "RIGHT": lambda value, n: value[len(value) - n :] if n > 0 else "",
    "LENGTH": len,
    "LOWER": str.lower,
}


def matching_clause() -> str:
    """The filter term of memory_ids_matching.aql that binds @fragment, as Python."""
    code = strip_comments_and_strings(Registry.load().get("memory_ids_matching").text)
    terms = [line.strip() for line in code.splitlines() if "@fragment" in line]
    assert len(terms) == 1, terms
    term = re.sub(r"^AND\s+", "", terms[0])
    python = re.sub(r"\bOR\b", " or ", re.sub(r"\bAND\b", " and ", term))
    python = python.replace("@fragment", "fragment").replace("m.id", "doc_id")
    words = set(re.findall(r"[A-Za-z_]\w*", python))
    assert words <= {*FUNCTIONS, "fragment", "doc_id", "or", "and"}, words  # nothing else
    return python


def aql_matches(fragment: str) -> list[str]:
    clause = compile(matching_clause(), "memory_ids_matching.aql", "eval")
    env: dict[str, object] = {"__builtins__": {}, **FUNCTIONS, "fragment": fragment}
    return sorted(i for i in IDS if eval(clause, {**env, "doc_id": i}))


def embedded_matches(tmp_path: Path, fragment: str) -> list[str]:
    store = SQLiteStore(tmp_path / "m.db")
    store.set_embedding_space(A, EmbeddingSpace("test", 4))
    try:
        for n, mid in enumerate(IDS):
            if store.get_memory(A, mid) is None:
                store.insert_memory(A, _memory(mid, n), np.eye(4, dtype=np.float32)[n % 4])
        return sorted(store.memory_ids_matching(A, fragment, 100))
    finally:
        store.close()


def _memory(mid: str, n: int) -> Memory:
    return Memory(
        id=mid,
        tenant=A.tenant,
        namespace="ns1",
        content=f"fact {n}",
        valid_from=from_us(T0),
        t_created=from_us(T0 + n),
        provenance=Provenance(agent_id="a1", role="planner", agent_trail=("a1",)),
        content_hash=content_hash(f"fact {n}"),
    )


@pytest.mark.parametrize("fragment", FRAGMENTS)
def test_arango_matches_a_short_id_as_the_embedded_store_does(
    tmp_path: Path, fragment: str
) -> None:
    assert aql_matches(fragment) == embedded_matches(tmp_path, fragment)


def test_uppercase_ids_are_found_by_their_lowercased_start_and_end() -> None:
    assert aql_matches("0190abcd") == sorted(IDS[:3])
    assert aql_matches("9f3e") == [IDS[0]]
    assert aql_matches("beef") == [IDS[3]]
