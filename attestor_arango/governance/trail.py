"""The tenant's audit trail as ``AgentMemory`` serves it, with this memory's runtime.

``audit_chain.py`` knows nothing of a runtime: it walks a store's chain with the hash
function and genesis it is handed. This module hands it the ones the chain is written
with (``core/audit.py``) and the runtime's signer, so the facade only checks access.
"""

from __future__ import annotations

from attestor_arango.core import audit as audit_log
from attestor_arango.core.runtime import Runtime
from attestor_arango.governance import audit_chain
from attestor_arango.governance.consistent import read_as_one
from attestor_arango.models import AuditEntry
from attestor_arango.reports import AuditEntries, AuditPage, ChainReport
from attestor_arango.scope import Scope
from attestor_arango.validation import check_limit, check_offset


def entries(rt: Runtime, tenant: str, limit: object, after_seq: object) -> list[AuditEntry]:
    """``limit`` chain entries after ``after_seq``, oldest first, as stored (not checked);
    ``ValidationError`` for a bad limit or an ``after_seq`` that is not a non-negative int."""
    seq = check_offset(after_seq, "after_seq")
    return rt.store.read_audit(Scope(tenant), check_limit(limit), seq)


def verify(rt: Runtime, tenant: str, anchor: object) -> ChainReport:
    """The whole chain and the rows checked; problems reported, ``ValidationError`` for a
    malformed anchor."""
    checked = audit_chain.check_anchor(anchor)
    return read_as_one(  # the walk and the rows it checks agree (governance/consistent.py)
        rt.store,
        tenant,
        lambda: audit_chain.verify_chain(
            rt.store,
            tenant,
            audit_log.chain_hash,
            audit_log.GENESIS,
            anchor=checked,
            signatures=None if rt.signer is None else rt.signer.verify_audit,
        ),
    )


def page(rt: Runtime, tenant: str, before_seq: object, limit: object) -> AuditPage:
    """``limit`` (at most 1000) entries before ``before_seq``, newest first, each checked;
    ``ValidationError`` for a bad limit or ``before_seq``."""
    before, most = audit_chain.check_before_seq(before_seq), check_limit(limit, maximum=1000)
    return read_as_one(  # the head record and the entries agree (governance/consistent.py)
        rt.store,
        tenant,
        lambda: audit_chain.chain_page(
            rt.store,
            tenant,
            audit_log.chain_hash,
            audit_log.GENESIS,
            before_seq=before,
            limit=most,
        ),
    )


def deletions(rt: Runtime, tenant: str, limit: object) -> AuditEntries:
    """The newest entries about removed or hidden data; ``ValidationError`` for a bad limit."""
    return audit_chain.deletion_log(rt.store, tenant, check_limit(limit))
