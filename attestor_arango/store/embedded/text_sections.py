"""A tenant's text index as the sections of its file (persisted.py), and back.

Loading maps the large sections (contents, terms, postings) rather than copying them;
those in ``text_index.LAZY`` are verified span by span as they are first read.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from functools import partial

import numpy as np

from attestor_arango.store.embedded.column import SEP, BlobColumn, packed
from attestor_arango.store.embedded.rowtable import RowTable
from attestor_arango.store.embedded.text_index import LAZY, TenantText


def text_sections(index: TenantText) -> tuple[dict[str, np.ndarray], dict[str, object]]:
    """The index as arrays and header values; ValueError if a value cannot be stored."""
    n = index.n
    rows, ns_names = index.rows.sections()
    contents, content_off = packed(index.contents, tuples=False)
    new_terms = index.terms.appended() if isinstance(index.terms, BlobColumn) else index.terms
    for t in new_terms:  # the blob's rows were checked when it was written
        if t == ("",) or SEP.join(t).count(SEP) != max(len(t) - 1, 0):
            raise ValueError("a term holds the separator")
    terms, terms_off = packed(index.terms, tuples=True)
    if index._check is not None:  # mapped bytes go into the new file: verified first
        index._check("p.pairs", np.array([0]), np.array([index._base_pairs.nbytes]))
    if not index.postings:  # nothing added since the persisted postings: reused as they are
        vocab_blob, start, all_pairs = index._base_vocab, index._base_start, index._base_pairs
    else:
        names = sorted(set(index._base_terms) | set(index.postings))
        none = np.zeros((0, 2), dtype=np.int32)  # (every name has pairs: it came from them)
        blocks = [none if (pairs := index._pairs(name)) is None else pairs for name in names]
        start = np.zeros(len(names) + 1, dtype=np.int64)
        np.cumsum([len(b) for b in blocks], out=start[1:])
        all_pairs = np.concatenate(blocks) if blocks else np.zeros((0, 2), dtype=np.int32)
        vocab = "\n".join(names).encode()
        if names and vocab.count(b"\n") != len(names) - 1:  # pragma: no cover - words never
            raise ValueError("a term holds a newline")
        vocab_blob = np.frombuffer(vocab, dtype=np.uint8)
    arrays = {
        **{f"r.{k}": v for k, v in rows.items()},
        "lengths": np.frombuffer(index.lengths, dtype=np.int32)[:n].copy(),
        "rowids": np.frombuffer(index.rowids, dtype=np.int64)[:n].copy(),
        "contents": contents,
        "contents_off": content_off,
        "terms": terms,
        "terms_off": terms_off,
        "vocab": vocab_blob,
        "p.start": start,
        "p.pairs": all_pairs,
    }
    return arrays, {"namespaces": ns_names, "rows": n}


def text_from_sections(
    sections: dict[str, np.ndarray],
    meta: dict[str, object],
    check: Callable[[str, np.ndarray, np.ndarray], None] | None = None,
) -> TenantText:
    """An index over persisted arrays (mapped, not copied, where they are large).

    ``check``: verifies byte spans of the sections in ``LAZY`` before they are read
    (``IndexFile.check``); None when the caller verified every section.
    """
    index = TenantText()
    names = meta["namespaces"]
    if not isinstance(names, list):
        raise ValueError("the persisted text index's header has no namespace list")
    index.rows = RowTable.from_sections(sections, "r.", names)
    n = index.rows.n
    index.lengths = array("i", sections["lengths"].tobytes())
    index.term_counts = array("i", [-1]) * len(index.lengths)
    index.rowids = array("q", sections["rowids"].tobytes())
    spans = {name: None if check is None else partial(check, name) for name in LAZY}
    index.contents = BlobColumn(
        sections["contents"], sections["contents_off"], False, spans["contents"]
    )
    index.terms = BlobColumn(sections["terms"], sections["terms_off"], True, spans["terms"])
    index._check = check
    raw = sections["vocab"].tobytes().decode()
    vocab = raw.split("\n") if raw else []
    start, pairs = sections["p.start"], sections["p.pairs"]
    lengths = (len(index.lengths), len(index.rowids), len(index.contents), len(index.terms))
    if lengths != (n, n, n, n) or len(start) != len(vocab) + 1:
        raise ValueError("the persisted text index's columns disagree in length")
    if len(pairs) != int(start[-1]):
        raise ValueError("the persisted postings and their offsets disagree")
    index._base_vocab = sections["vocab"]
    index._base_terms = {term: j for j, term in enumerate(vocab)}
    index._base_start = start
    index._base_pairs = pairs
    index._checked = bytearray(len(vocab))
    return index
