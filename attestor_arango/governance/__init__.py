"""Governance: quotas, export/import, purge, audit-chain verification, retention,
provenance signing and compaction.

Every public entry point is a method of ``AgentMemory`` (section
``# --- governance ---``) that checks permissions with ``access.guard`` and
delegates here; these modules only use the Store protocol, so both backends get
the same behaviour.
"""

from attestor_arango.core.signing import KeyFileError, Signer
from attestor_arango.governance.access import OPERATIONS, guard
from attestor_arango.governance.audit_chain import ChainProblem, ChainReport
from attestor_arango.governance.purge import PurgeReport
from attestor_arango.governance.retention import RetentionPolicy, RetentionReport, load_policies

__all__ = [
    "OPERATIONS",
    "ChainProblem",
    "ChainReport",
    "KeyFileError",
    "PurgeReport",
    "RetentionPolicy",
    "RetentionReport",
    "Signer",
    "guard",
    "load_policies",
]
