"""Reads of one tenant that must agree with each other: its memory rows and its audit chain.

Verification (``verify_audit_chain``) and the export compare the rows with what the chain
recorded of them (``row_check``; an import checks an export against the chain it carries).
Read one after the other while an agent writes, they disagree though nothing was tampered
with: a row added after the chain was walked is "written by no entry of this chain", a row
forgotten between the two reads is closed in one and open in the other, and an export so
taken is refused by its own import. An audit page (``audit_page``, the Evidence Board)
compares the head record with the newest entry: an entry appended between the two reads
"was never recorded" by the head.

Every change of a memory row commits together with its audit entry (``core.writes``, the
governance operations), so the tenant's chain head moves with each one: ``read_as_one``
runs the reads again when the head moved while they ran, and makes its last attempt
inside one store transaction (a snapshot in both backends; the tenant's writers wait for
it), so a tenant written to without pause still gets an answer, and a quiet one is read
without holding anyone up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from attestor_arango.scope import Scope
from attestor_arango.store.protocol import Store

T = TypeVar("T")

ATTEMPTS = 3  # the last one inside a transaction


def read_as_one(store: Store, tenant: str, read: Callable[[], T]) -> T:
    """``read()``, whose store reads of ``tenant`` see one state of its rows and chain."""
    scope = Scope(tenant)
    for _ in range(ATTEMPTS - 1):
        before = store.audit_head(scope)
        value = read()
        if store.audit_head(scope) == before:
            return value
    with store.transaction():
        return read()
